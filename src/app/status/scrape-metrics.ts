/** Reads workers' `/metrics` endpoints and sums the record counters, so `status` can show what the workers count. */
import type { RunCounterValues } from '../../pipeline/planner/index.js';

/** Sums every sample of each metric name in a Prometheus text exposition (labels summed away). */
export function sumMetrics(text: string): Map<string, number> {
  const sums = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})?\s+(\S+)/.exec(line);
    if (m === null) continue;
    const value = Number(m[3]);
    if (!Number.isFinite(value)) continue;
    const name = m[1] as string;
    sums.set(name, (sums.get(name) ?? 0) + value);
  }
  return sums;
}

/** The record counters as the metrics name them. */
export function recordCountersFromMetrics(sums: ReadonlyMap<string, number>): RunCounterValues {
  return {
    fetched: sums.get('gamedata_records_fetched_total') ?? 0,
    published: sums.get('gamedata_records_published_total') ?? 0,
    deduplicated: sums.get('gamedata_records_deduplicated_total') ?? 0,
    deadLettered: sums.get('gamedata_records_dead_lettered_total') ?? 0,
  };
}

/** Hosts scraped when none are given: loopback only. @see isScrapeAllowed */
export const DEFAULT_SCRAPE_HOSTS: readonly string[] = ['127.0.0.1', 'localhost', '::1'];

/**
 * Whether `status` may fetch `url`. The URLs come from Redis (the workers' heartbeats): whoever can write there could
 * otherwise make `status` request any address from the operator's machine (a cloud metadata endpoint, an internal
 * service). Only `http://<host>:<port>/metrics` on one of `hosts` (`127.0.0.0/8` counts as loopback) is allowed.
 */
export function isScrapeAllowed(url: string, hosts: readonly string[] = DEFAULT_SCRAPE_HOSTS): boolean {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return false;
  }
  if (u.protocol !== 'http:' || u.username !== '' || u.password !== '' || u.pathname !== '/metrics')
    return false;
  const host = u.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const loopbackAllowed = hosts.some((h) => DEFAULT_SCRAPE_HOSTS.includes(h));
  return (
    hosts.map((h) => h.toLowerCase()).includes(host) || (loopbackAllowed && /^127\.\d+\.\d+\.\d+$/.test(host))
  );
}

/**
 * Fetches each allowed URL (2 s timeout each, no redirect followed) and sums them; endpoints that do not answer, or
 * that {@link isScrapeAllowed} refuses, are listed in `unreachable`.
 */
export async function scrapeMetrics(
  urls: readonly string[],
  timeoutMs = 2000,
  hosts: readonly string[] = DEFAULT_SCRAPE_HOSTS,
): Promise<{ sums: Map<string, number>; scraped: number; unreachable: string[] }> {
  const sums = new Map<string, number>();
  const unreachable: string[] = [];
  let scraped = 0;
  await Promise.all(
    urls.map(async (url) => {
      try {
        if (!isScrapeAllowed(url, hosts)) throw new Error('not an allowed /metrics address');
        const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), redirect: 'manual' });
        if (!res.ok) throw new Error(String(res.status));
        for (const [k, v] of sumMetrics(await res.text())) sums.set(k, (sums.get(k) ?? 0) + v);
        scraped += 1;
      } catch {
        unreachable.push(url);
      }
    }),
  );
  return { sums, scraped, unreachable };
}
