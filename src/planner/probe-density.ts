/**
 * Density probing: a few one-page reads at synthetic cursors tell how many rows a range holds, so slices can be
 * sized in rows. The probes of one round are issued together, so a batching client sends them in one POST.
 */
import { ConfigError } from '../errors.js';
import type { DensityEstimate, TimeRange } from '../slicing/index.js';

/**
 * Reads the sort times (epoch ms, newest first) of at most `limit` rows strictly older than `beforeMs`
 * (one page at the synthetic cursor `v2(beforeMs, 000…0)`).
 */
export type ProbePage = (beforeMs: number, limit: number) => Promise<number[]>;

export interface ProbeDensityOptions {
  /** Buckets the range is probed in. @default 16 */
  buckets?: number;
  /** Page size of one probe (the upstream's maximum is 100). @default 100 */
  limit?: number;
}

export const DEFAULT_PROBE_DENSITY_OPTIONS: Required<ProbeDensityOptions> = { buckets: 16, limit: 100 };

/**
 * Estimates rows per bucket: one page read at the top of each bucket. A page that ends inside the bucket counts
 * the bucket exactly; a full page extrapolates its rows-per-ms over the bucket's width.
 */
export async function probeDensity(
  probe: ProbePage,
  range: TimeRange,
  options: ProbeDensityOptions = {},
): Promise<DensityEstimate> {
  const o = { ...DEFAULT_PROBE_DENSITY_OPTIONS, ...options };
  if (!Number.isSafeInteger(o.buckets) || o.buckets < 1) {
    throw new ConfigError(`option buckets must be a positive integer, got ${String(o.buckets)}`);
  }
  const width = range.end - range.start;
  const n = Math.max(1, Math.min(o.buckets, width));
  const edges: number[] = [];
  for (let i = 0; i <= n; i++) edges.push(range.start + Math.floor((width * i) / n));
  const rows = await Promise.all(
    edges.slice(1).map(async (top, i) => {
      const bottom = edges[i] ?? range.start;
      const times = await probe(top, o.limit);
      const inside = times.filter((t) => t >= bottom);
      if (inside.length < times.length || times.length < o.limit) return inside.length;
      // Nothing lies between the newest row and the top, so extrapolate the page's own rate from its newest row.
      const newest = times[0] ?? top;
      const oldest = times[times.length - 1] ?? top;
      const span = Math.max(1, newest - oldest);
      return Math.ceil((times.length * Math.max(1, newest - bottom)) / span);
    }),
  );
  return { edges, rows };
}

export interface FindEarliestOptions {
  /** Probes per round (all issued together). @default 20 */
  fanout?: number;
  /** Stop once the earliest row is known within this many ms. @default 3_600_000 (1 h) */
  precisionMs?: number;
}

/**
 * Finds a time at or before the oldest row older than `beforeMs`, within `precisionMs`: a k-ary search with
 * one-row probes. Returns `null` when there is no row before `beforeMs`.
 */
export async function findEarliest(
  probe: ProbePage,
  beforeMs: number,
  lowerBoundMs = 0,
  options: FindEarliestOptions = {},
): Promise<number | null> {
  const fanout = options.fanout ?? 20;
  const precision = options.precisionMs ?? 3_600_000;
  if ((await probe(beforeMs, 1)).length === 0) return null;
  // Invariant: no row is older than lo, some row is older than hi.
  let lo = lowerBoundMs;
  let hi = beforeMs;
  while (hi - lo > precision) {
    const points: number[] = [];
    for (let i = 1; i < fanout; i++) points.push(lo + Math.floor(((hi - lo) * i) / fanout));
    const found = await Promise.all(points.map(async (p) => (await probe(p, 1)).length > 0));
    const firstHit = found.indexOf(true);
    const newHi = firstHit === -1 ? hi : (points[firstHit] ?? hi);
    const newLo =
      firstHit <= 0
        ? firstHit === 0
          ? lo
          : (points[points.length - 1] ?? lo)
        : (points[firstHit - 1] ?? lo);
    if (newHi === hi && newLo === lo) break;
    lo = newLo;
    hi = newHi;
  }
  return lo;
}
