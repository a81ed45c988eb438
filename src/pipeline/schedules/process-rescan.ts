/**
 * One tick's share of a spread rescan (issue 11). A resource whose records change (users, parties, articles,
 * elections) is listed by creation time only, so changes are found by rereading it. Instead of a full reread on
 * every run (~2.5 k requests at the real volume: five minutes of the whole key), each pass is cut into `parts` equal
 * time ranges from the watermark down to `floor` (`--since`, else the epoch), and each tick starts the next part as
 * a run of its own at `rescan` priority, so one pass takes `--rescan-period`. A part starts only while rescans have
 * spent at most `share` of the key's requests since the pass began, or while the key has more than `1 - share` of
 * its window left (an idle key need not wait). Independent of BullMQ and Redis (unit-tested with fakes).
 */
import { ConfigError } from '../../foundation/errors/index.js';
import { RESOURCE_INFO } from '../../foundation/models/index.js';
import type { ScheduleTickData, TickDeps } from './process-tick.js';
import type { RescanStateStore } from './rescan-state.js';

/** What the shared budget has spent on the key (request-equivalents: a request counts by its share of calls). */
export interface BudgetSpend {
  requests: number;
  rescanRequests: number;
  limit: number | undefined;
  remaining: number | undefined;
}

export interface RescanDeps extends Pick<TickDeps, 'runStatus' | 'startRun'> {
  rescans: RescanStateStore;
  /** The resource's watermark (undefined until its tail completed a run). */
  watermark(resource: ScheduleTickData['resource']): Promise<number | undefined>;
  /** The key's budget spend; without it parts are never capped. */
  spend?: () => Promise<BudgetSpend | undefined>;
}

export type RescanOutcome =
  | { action: 'off' | 'locked' | 'no-watermark' }
  | { action: 'running'; runId: string }
  | { action: 'capped'; rescanShare: number }
  | { action: 'started'; runId: string; from: number; to: number; settled?: 'completed' | 'failed' }
  | { action: 'pass-completed' };

/** Defaults of spread rescans (`gamedata tail --rescan-period 24h --rescan-budget 20%`). */
export const DEFAULT_RESCAN = { periodMs: 24 * 3600_000, share: 0.2 } as const;

/** Parts of one pass: the period over the tail interval (at least one). */
export function rescanParts(periodMs: number, everyMs: number): number {
  if (!(periodMs > 0) || !(everyMs > 0))
    throw new ConfigError(`rescan period and tail interval must be > 0, got ${periodMs} and ${everyMs}`);
  return Math.max(1, Math.round(periodMs / everyMs));
}

/** Parses `--rescan-budget`: `20%` or `0.2`, in (0, 1]. */
export function parseRescanShare(flag: string, value: string): number {
  const pct = value.endsWith('%');
  const n = Number(pct ? value.slice(0, -1) : value) / (pct ? 100 : 1);
  if (!(n > 0 && n <= 1))
    throw new ConfigError(
      `${flag} must be a share in (0, 1] or a percentage (20%), got ${JSON.stringify(value)}`,
    );
  return n;
}

/** Runs the rescan step of one tick. Throws when Redis or the upstream does. */
export async function processRescan(
  tick: ScheduleTickData,
  deps: RescanDeps,
  options: { now?: () => number; lockTtlMs?: number } = {},
): Promise<RescanOutcome> {
  const now = options.now ?? Date.now;
  const parts = tick.rescanParts ?? 0;
  const { resource } = tick;
  if (tick.kind !== 'tail' || parts <= 0 || RESOURCE_INFO[resource].dedup !== 'version')
    return { action: 'off' };
  const release = await deps.rescans.lock(resource, options.lockTtlMs ?? 15_000);
  if (release === undefined) return { action: 'locked' };
  try {
    let r = await deps.rescans.get(resource);
    let settled: 'completed' | 'failed' | undefined;
    if (r.runId !== undefined) {
      const status = await deps.runStatus(r.runId);
      if (status !== undefined && status.state !== 'completed' && status.state !== 'failed')
        return { action: 'running', runId: r.runId };
      const floor = tick.since ?? 0;
      if (status?.state === 'completed') {
        settled = 'completed';
        await deps.rescans.incr(resource, 'completedParts');
        if ((r.from ?? floor) <= floor) {
          // The pass reached the floor: the next tick starts a new one at the watermark.
          await deps.rescans.set(resource, {
            runId: undefined,
            cursor: undefined,
            passTop: undefined,
            passStartedAt: undefined,
            lastPassAt: now(),
          });
          return { action: 'pass-completed' };
        }
        await deps.rescans.set(resource, { runId: undefined, cursor: r.from });
      } else {
        // Failed or gone: the same part again (the cursor did not move).
        settled = 'failed';
        await deps.rescans.set(resource, { runId: undefined });
      }
      r = await deps.rescans.get(resource);
    }

    const spend = await deps.spend?.();
    if (r.passTop === undefined) {
      const watermark = await deps.watermark(resource);
      if (watermark === undefined) return { action: 'no-watermark' };
      await deps.rescans.set(resource, {
        passTop: watermark,
        cursor: watermark,
        passStartedAt: now(),
        passRequests: spend?.requests ?? 0,
        passRescanRequests: spend?.rescanRequests ?? 0,
      });
      r = await deps.rescans.get(resource);
    } else if (spend !== undefined) {
      const share = tick.rescanShare ?? DEFAULT_RESCAN.share;
      const total = spend.requests - (r.passRequests ?? 0);
      const rescan = spend.rescanRequests - (r.passRescanRequests ?? 0);
      const idle =
        spend.limit === undefined ||
        spend.remaining === undefined ||
        spend.remaining >= (1 - share) * spend.limit;
      if (rescan > share * total && !idle) {
        await deps.rescans.incr(resource, 'cappedTicks');
        return { action: 'capped', rescanShare: total > 0 ? rescan / total : 0 };
      }
    }
    const floor = tick.since ?? 0;
    const top = r.passTop ?? 0;
    const to = r.cursor ?? top;
    const width = Math.max(1, Math.ceil((top - floor) / parts));
    const from = Math.max(floor, to - width);
    if (to <= from) {
      await deps.rescans.set(resource, { cursor: undefined, passTop: undefined, lastPassAt: now() });
      return { action: 'pass-completed' };
    }
    const runId = `${resource}-rescan-${now()}`;
    await deps.rescans.set(resource, { runId, from, to });
    await deps.startRun({
      resources: [resource],
      since: from,
      until: to,
      fullHistory: false,
      replay: false,
      runId,
      priority: 'rescan',
      // A part of a tail's rescan: a slice that fails for good leaves a gap, the pass goes on (issue 48).
      gapOnFailure: true,
    });
    return { action: 'started', runId, from, to, ...(settled === undefined ? {} : { settled }) };
  } finally {
    await release();
  }
}
