/**
 * One schedule tick of one resource, independent of BullMQ (unit-tested with fakes): settle the run the previous
 * tick started (completed -> the watermark advances to its upper bound; failed -> it stays), and when no run of
 * the resource is in flight, plan and enqueue the next one. A tick that finds a run still going does nothing, so
 * two runs of one resource never overlap; the next run then covers everything that arrived meanwhile, and the
 * planner cuts that wider range into as many slices as its density needs (catch-up by slicing).
 */
import { ConfigError } from '../../foundation/errors/index.js';
import { RESOURCE_INFO, type ResourceName } from '../../foundation/models/index.js';
import type { BackfillRequest } from '../planner/plan-backfill.js';
import { UNFILTERED_TRANSACTION_WINDOW_MS } from '../planner/plan-backfill.js';
import type { CallPriority } from '../../foundation/models/index.js';
import type { ScheduleKind } from './schedule-names.js';
import type { ActiveRun, TailState, TailStateStore } from './tail-state.js';

/** The data of a schedule tick job (the job scheduler's template). */
export interface ScheduleTickData {
  kind: ScheduleKind;
  resource: ResourceName;
  /** Tails: the range starts this far below the watermark (late arrivals; dedup drops the repeats). */
  lookbackMs: number;
  /**
   * Tails of resources whose records change (users, parties, articles, elections): the upstream lists them by
   * creation time only, so changes are found by re-reading the whole listing at most this often (0 = every run,
   * -1 = never). Unchanged versions are dropped by dedup.
   */
  rescanEveryMs: number;
  /**
   * Spread rescans (changing resources): one pass over the resource is cut into this many parts, one per tick, so
   * a pass takes `--rescan-period` (see `process-rescan.ts`). 0 or absent = off.
   */
  rescanParts?: number;
  /** Spread rescans: the share of the key's requests they may spend (`--rescan-budget`). @default 0.2 */
  rescanShare?: number;
  /** Backfills: publish again what earlier runs published (`--replay`). */
  replay: boolean;
  /** Transactions: walk every user, for history beyond the unfiltered feed's 72 h. */
  fullHistory: boolean;
  /** Tails: where the first run starts (epoch ms of upstream sort time); undefined = the earliest record. */
  since?: number;
  /** Rows per planned slice. */
  targetRows?: number;
  /**
   * After starting a run, follow it for up to this long and settle it at once when it ends (the watermark moves
   * without waiting for the next tick). Tails use their interval. @default 0 (settled by the next tick)
   */
  settleWithinMs?: number;
}

/** What a tick did. */
export type TickOutcome =
  | { action: 'locked'; resource: ResourceName }
  | { action: 'skipped'; resource: ResourceName; runId: string; settled?: SettledRun }
  | { action: 'empty'; resource: ResourceName; settled?: SettledRun }
  | {
      action: 'started';
      resource: ResourceName;
      runId: string;
      kind: ScheduleKind;
      from: number | undefined;
      to: number;
      slices: number;
      fullHistory: boolean;
      settled?: SettledRun;
    };

/** A previously started run the tick found finished. */
export interface SettledRun {
  runId: string;
  outcome: 'completed' | 'failed';
  reason?: string;
}

export interface TickDeps {
  state: TailStateStore;
  /** The BullMQ state of a run (`completed`, `failed`, anything else = in flight); undefined when it is gone. */
  runStatus(runId: string): Promise<{ state: string; failedReason?: string } | undefined>;
  /** The sort time of the newest record of the resource upstream (across every walk); undefined when empty. */
  head(resource: ResourceName): Promise<number | undefined>;
  /**
   * Plans and enqueues a run (planner + flow) whose calls carry `priority`; resolves to its slice count.
   * `gapOnFailure` (tails, issue 48): a slice that fails for good leaves a gap and the run completes.
   */
  startRun(
    request: BackfillRequest & { runId: string; priority: CallPriority; gapOnFailure?: boolean },
  ): Promise<{ slices: number }>;
}

export interface ProcessTickOptions {
  /**
   * The planning lock's lifetime without renewal: held ticks renew it (schedules/renewed-lock.ts), so this is how long
   * a killed tick can keep its resource from planning. @default 15000
   */
  lockTtlMs?: number;
  /** The longest a tick follows the run it started (`settleWithinMs` is capped here). @default 60000 */
  maxFollowMs?: number;
  /** Poll interval while following a run (`settleWithinMs`). @default 250 */
  pollMs?: number;
  now?: () => number;
}

export const DEFAULT_PROCESS_TICK_OPTIONS = { lockTtlMs: 15_000, maxFollowMs: 60_000, pollMs: 250 } as const;

/** Defaults of a tail schedule (`gamedata tail`). */
export const DEFAULT_TAIL_SCHEDULE = {
  /** Tick interval. */
  everyMs: 30_000,
  /** Overlap below the watermark. */
  lookbackMs: 60_000,
  /** No full reread replacing a tail run: changes are found by spread rescans (`--rescan-period`) instead. */
  rescanEveryMs: -1,
  replay: false,
  fullHistory: false,
} as const;

/**
 * The shared-budget priority of a schedule's calls: cron backfills `backfill`; tails of append-only feeds
 * (transactions, donations) `feed-tail`, of changing resources `resource-tail`; a rescan run `rescan`.
 */
export function tickPriority(kind: ScheduleKind, resource: ResourceName, rescan = false): CallPriority {
  if (kind === 'backfill') return 'backfill';
  if (rescan) return 'rescan';
  return RESOURCE_INFO[resource].dedup === 'version' ? 'resource-tail' : 'feed-tail';
}

/** Checks a tick's data once; bad values throw a ConfigError naming the field. */
export function checkTickData(d: ScheduleTickData): ScheduleTickData {
  if (!Number.isSafeInteger(d.lookbackMs) || d.lookbackMs < 0)
    throw new ConfigError(`lookbackMs must be an integer >= 0, got ${String(d.lookbackMs)}`);
  if (!Number.isSafeInteger(d.rescanEveryMs) || d.rescanEveryMs < -1) {
    throw new ConfigError(
      `rescanEveryMs must be an integer >= 0 (or -1 = never), got ${String(d.rescanEveryMs)}`,
    );
  }
  if (d.kind !== 'tail' && d.kind !== 'backfill')
    throw new ConfigError(`kind must be tail or backfill, got ${JSON.stringify(d.kind)}`);
  if (!(d.resource in RESOURCE_INFO))
    throw new ConfigError(
      `resource must be one of ${Object.keys(RESOURCE_INFO).join(', ')}, got ${JSON.stringify(d.resource)}`,
    );
  return d;
}

/** Runs one tick. Never throws for a run that failed (that is an outcome); throws when Redis or the upstream does. */
export async function processTick(
  tick: ScheduleTickData,
  deps: TickDeps,
  options: ProcessTickOptions = {},
): Promise<TickOutcome> {
  const o = { ...DEFAULT_PROCESS_TICK_OPTIONS, ...options };
  const now = options.now ?? Date.now;
  const { resource } = checkTickData(tick);
  const release = await deps.state.lock(resource, o.lockTtlMs);
  if (release === undefined) return { action: 'locked', resource };
  try {
    let state = await deps.state.get(resource);
    let settled: SettledRun | undefined;
    if (state.active !== undefined) {
      const found = await settleActiveRun(resource, state.active, deps, now);
      if (found.action === 'skipped') return found;
      settled = found.settled;
      state = await deps.state.get(resource);
    }
    const withSettled = <T extends object>(x: T): T & { settled?: SettledRun } =>
      settled === undefined ? x : { ...x, settled };

    const startedAt = now();
    const head = await deps.head(resource);
    if (head === undefined) return withSettled({ action: 'empty' as const, resource });
    const range = planTickRange(tick, state, head, startedAt);
    const runId = `${resource}-${tick.kind}-${startedAt}`;
    const run: ActiveRun = { runId, kind: tick.kind, from: range.from, to: range.to, startedAt };
    const slices = await startTickRun(tick, run, range, deps, now);
    const started = {
      action: 'started' as const,
      resource,
      runId,
      kind: tick.kind,
      from: range.from,
      to: range.to,
      slices,
      fullHistory: range.fullHistory,
    };
    const followMs = Math.min(tick.settleWithinMs ?? 0, o.maxFollowMs);
    const followed = followMs > 0 ? await followRun(resource, run, deps, followMs, o.pollMs, now) : undefined;
    return followed === undefined ? withSettled(started) : { ...started, settled: followed };
  } finally {
    await release();
  }
}

/**
 * The run the previous tick started: completed or failed (or gone from the queue, counted as failed) -> recorded
 * and returned as settled; still going -> a skip is counted, and the tick does nothing else.
 */
async function settleActiveRun(
  resource: ResourceName,
  active: ActiveRun,
  deps: TickDeps,
  now: () => number,
): Promise<{ action: 'settled'; settled: SettledRun } | Extract<TickOutcome, { action: 'skipped' }>> {
  const status = await deps.runStatus(active.runId);
  if (status?.state === 'completed') {
    await deps.state.finishActive(resource, active, 'completed', now());
    return { action: 'settled', settled: { runId: active.runId, outcome: 'completed' } };
  }
  if (status === undefined || status.state === 'failed') {
    const reason = status?.failedReason ?? 'the run is gone from the queue';
    await deps.state.finishActive(resource, active, 'failed', now(), reason);
    return { action: 'settled', settled: { runId: active.runId, outcome: 'failed', reason } };
  }
  await deps.state.countSkip(resource);
  return { action: 'skipped', resource, runId: active.runId };
}

/** The range a tick's run reads, and how. */
interface TickRange {
  /** undefined = from the earliest record. */
  from: number | undefined;
  to: number;
  /** A spread-free rescan of a changing resource (its whole listing). */
  rescan: boolean;
  /** Transactions read by the per-user walk. */
  fullHistory: boolean;
}

/**
 * Pure: backfills read everything; a tail's first run starts at `since`, later ones `lookbackMs` below the
 * watermark, or at the earliest record when a changing resource's rescan is due. Up to the head, inclusive.
 */
export function planTickRange(
  tick: ScheduleTickData,
  state: Pick<TailState, 'watermark' | 'lastRescanAt'>,
  head: number,
  startedAt: number,
): TickRange {
  const { resource } = tick;
  const to = head + 1;
  let from: number | undefined;
  let rescan = false;
  if (tick.kind === 'backfill') from = undefined;
  else if (state.watermark === undefined) from = tick.since;
  else {
    const mutable = RESOURCE_INFO[resource].dedup === 'version';
    const rescanDue =
      mutable &&
      tick.rescanEveryMs >= 0 &&
      (state.lastRescanAt === undefined || startedAt - state.lastRescanAt >= tick.rescanEveryMs);
    rescan = rescanDue;
    from = rescanDue ? undefined : Math.max(0, state.watermark - tick.lookbackMs);
  }
  if (from !== undefined && from >= to) from = Math.max(0, to - 1);
  // The unfiltered transaction feed ends 72 h back: a full read with --full-history, or a start older than that,
  // needs the per-user walk. Incremental runs within the window read the feed.
  const fullHistory =
    resource === 'transactions' &&
    ((from === undefined && tick.fullHistory) ||
      (from !== undefined && from < to - UNFILTERED_TRANSACTION_WINDOW_MS));
  return { from, to, rescan, fullHistory };
}

/** Records the run as active, then plans and enqueues it; a start that throws is recorded as failed. */
async function startTickRun(
  tick: ScheduleTickData,
  run: ActiveRun,
  range: TickRange,
  deps: TickDeps,
  now: () => number,
): Promise<number> {
  const { resource } = tick;
  // Recorded before enqueueing: a crash in between leaves a run id the queue does not know, which the next tick
  // settles as failed (watermark unchanged), never an untracked run that a second run could overlap.
  await deps.state.setActive(resource, run);
  try {
    const { slices } = await deps.startRun({
      resources: [resource],
      ...(range.from === undefined ? {} : { since: range.from }),
      until: range.to,
      fullHistory: range.fullHistory,
      replay: tick.kind === 'backfill' && tick.replay,
      runId: run.runId,
      priority: tickPriority(tick.kind, resource, range.rescan),
      // A tail never fails forever on one range: what its slices cannot read becomes a gap and the watermark moves.
      // A cron backfill reads everything each time and still fails loudly.
      gapOnFailure: tick.kind === 'tail',
    });
    return slices;
  } catch (error) {
    await deps.state.finishActive(
      resource,
      run,
      'failed',
      now(),
      error instanceof Error ? error.message : String(error),
    );
    throw error;
  }
}

/** Follows a just-started run for up to `followMs`: settled (and recorded) when it ends by then, else undefined. */
async function followRun(
  resource: ResourceName,
  run: ActiveRun,
  deps: TickDeps,
  followMs: number,
  pollMs: number,
  now: () => number,
): Promise<SettledRun | undefined> {
  const deadline = now() + followMs;
  for (;;) {
    const status = await deps.runStatus(run.runId);
    if (status?.state === 'completed' || status?.state === 'failed') {
      const outcome = status.state;
      await deps.state.finishActive(
        resource,
        run,
        outcome,
        now(),
        outcome === 'failed' ? (status.failedReason ?? 'failed') : undefined,
      );
      return {
        runId: run.runId,
        outcome,
        ...(status.failedReason === undefined ? {} : { reason: status.failedReason }),
      };
    }
    if (now() >= deadline) return undefined;
    await new Promise((r) => setTimeout(r, pollMs));
  }
}
