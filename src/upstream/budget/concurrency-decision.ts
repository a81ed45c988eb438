/**
 * Pure decision of how many slices a worker runs at once (issues 23 and 32).
 *
 * Issue 32: a slice is a chain (its next page's cursor is in the current page), so the calls in flight are at most the
 * slices running, and by Little's law the key is spent only when requests a second x seconds a request x calls a
 * request chains run at once: 500 a minute x ~1.2 s x 50 = ~500 across the deployment at the real service's latency.
 * With 32 slots a worker used ~12 % of the key at scale medium (918 requests in 900 s), and the slots grew only
 * while the key already bound, which at those latencies it never did. So the slots also grow when the key does NOT
 * bind but slices wait for a slot ({@link BudgetDemand.queued}) and the fetcher's batches leave short: the key has
 * requests to spare and the work to fill them. (`DEFAULT_MAX_CONCURRENCY`, 512, bounds one worker.)
 *
 * A full batch needs 50 calls waiting at the fetcher at once, and a slice has at most one call waiting (its next
 * page's cursor is in the current page: its pages are read one after another). With 4 workers x 8 slots at most 32 calls
 * can wait: every held POST left after the 3 s hold with 32 calls or fewer, 1.6x the minimum requests. So while the
 * budget and the work bind (the fetcher asks for full batches, see `workFill`) and the batches still leave short,
 * each worker runs more slices at once, in proportion to the shortfall; when the key no longer binds, back toward the
 * configured concurrency.
 *
 * The fetcher publishes what it saw at each batch ({@link BudgetDemand}, a Redis key that expires when no batch is
 * sent); each worker reads it and decides with {@link decideConcurrency}. Every worker scales its own slots by the
 * same factor, so the deployment's slots grow by that factor without any worker knowing how many there are.
 */

/** What the key's fetcher saw when it sent its last batch, for the workers (see {@link decideConcurrency}). */
export interface BudgetDemand {
  /** When the batch was sent (the fetcher's clock, epoch ms). */
  at: number;
  /** Whether the budget and the work bound: the fetcher asked for a full batch (`workFill` gave `maxBatch`). */
  binds: boolean;
  /** Calls the batch carried. */
  calls: number;
  /** Most calls per request (50 upstream). */
  maxBatch: number;
  /** The batch went early for a tail call (it says nothing of how many calls could wait). */
  tail: boolean;
  /**
   * Slices queued across the deployment that wait for a worker slot when the batch was sent (BullMQ's waiting,
   * prioritized and delayed less the running ones); absent when the fetcher could not count them.
   */
  queued?: number | undefined;
  /**
   * The calls in flight that would spend the key at its measured latency, by Little's law: the key's requests a
   * millisecond x the fetcher's mean request time x calls a request (500 a minute x ~1.2 s x 50 = ~500 at the real
   * service's latency; ~20 with latency off). Absent until an answer has told the key's limit and window.
   */
  chains?: number | undefined;
  /** The fetcher's mean request time when the batch was sent, ms (absent: an older fetcher). */
  latencyMs?: number | undefined;
}

/**
 * A key with requests to spare grows the slots on full batches too (not only short ones) while its requests take at
 * least this long: then a slice spends most of a round waiting on the upstream, and more than a batch of calls waiting
 * went as several requests a round (a small full history at the real service's latency: 125 slots filled 50-call
 * batches while 275 slices waited, held there 4 s). With a fast upstream the slices wait on the CPU, not the key: the
 * medium chaos run (latency off, a key that never binds, its box 79-82 % busy) grew to 128 slots a worker on full
 * batches, and every kill handed more slices over (352 taken over, run 217 s, against 240 and 190-202 s).
 */
export const FULL_BATCH_GROWTH_LATENCY_MS = 300;

/**
 * Whether the key's last batch says it has requests to spare and the slices waiting would all find a slot: the
 * fetcher did not ask for a full batch, and it counted no more slices queued than `room` (the slots this worker may
 * still grow to). Work split off then starts within a slot step and rides in requests the key would not otherwise
 * send (a per-user walk's `spareKeySplitRule`). `false` without a demand or its count.
 */
export function keyHasSpare(demand: BudgetDemand | undefined, room: number): boolean {
  return (
    demand !== undefined && !demand.binds && demand.queued !== undefined && demand.queued <= Math.max(0, room)
  );
}

/** {@link BudgetDemand.chains} from the key's limit per window, its window and the mean request time. */
export function keyChains(
  limit: number | undefined,
  windowMs: number | undefined,
  latencyMs: number,
  maxBatch: number,
): number | undefined {
  if (limit === undefined || windowMs === undefined || windowMs <= 0) return undefined;
  return Math.ceil((limit / windowMs) * Math.max(0, latencyMs) * maxBatch);
}

export interface ConcurrencyInput {
  /** Slices the worker runs at once now. */
  current: number;
  /** The configured concurrency (`--concurrency`): the floor, and the value whenever the key does not bind. */
  base: number;
  /** The most slices at once the worker may grow to (>= `base`). */
  max: number;
  /** The fetcher's last batch; `undefined` when none was sent lately (the record expired) or it cannot be read. */
  demand: BudgetDemand | undefined;
  /** When `current` was last changed (epoch ms; 0 when never). */
  changedAt: number;
  /**
   * A change shows in the batches after about this long (new slices start and their first calls reach the fetcher):
   * a short batch sent earlier than `changedAt + settleMs` does not grow the slots again.
   */
  settleMs: number;
  /**
   * Of the slices this worker runs, the share whose next call waits at the key now (its calls waiting / its slices
   * running); `undefined` when not known. See {@link MIN_UPSTREAM_SHARE}.
   */
  upstreamShare?: number | undefined;
  /**
   * The larger of the worker's event-loop utilization and its machine's busy CPU share over the last interval (0..1);
   * `undefined` when not known. See {@link MAX_GROWTH_UTILIZATION}.
   */
  busy?: number | undefined;
  /**
   * The same share since `current` was set (or sizing started), 0..1: what a `spare` step projects from
   * ({@link spareStep}). The last interval alone reads the slices a step has just started at their most expensive
   * (taken from the queue, their first claims): a small full history read 17-37 % in the 500 ms after its first 32
   * slices started, against 4 % once they waited on the upstream, so the first step only doubled. `undefined`:
   * `busy` is used.
   */
  stepBusy?: number | undefined;
  /**
   * Slices queued across the deployment (waiting for a slot), counted now, when every slot of this worker is taken;
   * `undefined` when not counted (slots free, or no count). See the `full` case of {@link decideConcurrency}.
   */
  queuedWhileFull?: number | undefined;
}

/**
 * Slots grow only while the worker's event loop and its machine's CPUs were each busy less than this share of the
 * time. A busy loop or box means the CPU binds (latency off, or a box crowded by other workers, brokers and Redis):
 * more slices at once add nothing but late lock renewals. The medium chaos run (three workers, two cores, a key of a
 * million requests a minute) grew each worker 16 -> 512 on `spare` batches; every kill then handed ~500 slices over
 * and one slice was taken over 22 times, failing the run.
 */
export const MAX_GROWTH_UTILIZATION = 0.85;

/**
 * Slots grow only while at least this share of the worker's running slices wait on the key. A slice reads one page
 * ahead, so a slice that is not stuck elsewhere nearly always has a call waiting; when few do, the slices wait on
 * Kafka, Redis, their dedup claims or the CPU, and more of them would add load, not calls. A chaos run with 512 slots
 * a worker showed it: batches left with 3 of 50 calls while ~800 slices ran, almost none of them waiting on the key
 * (their locks lost on a saturated box), and the short batches grew the slots further.
 */
export const MIN_UPSTREAM_SHARE = 0.5;

/** Why the worker runs `concurrency` slices at once. */
export type ConcurrencyReason =
  /** No batch lately (the configured concurrency), or the key does not bind and no slice waits (halfway back to it). */
  | 'free'
  /** The key binds and batches leave full (or went early for a tail, or the last growth has not shown yet): kept. */
  | 'kept'
  /** The key binds and the last batch left short of a full one: grown. */
  | 'short'
  /**
   * The key has requests to spare, slices wait for a slot and the last batch left short: grown by the slices waiting
   * (at most {@link spareStep} more), up to the chains that would spend the key (Little's law, {@link BudgetDemand.chains}).
   */
  | 'spare'
  /** Batches leave short, but most running slices wait elsewhere than on the key: not grown. */
  | 'elsewhere'
  /** Batches leave short, but the worker's event loop or its machine's CPUs are busy (the CPU binds): not grown. */
  | 'busy'
  /**
   * The work binds the key (full batches are asked for), yet slices wait for a slot while slow requests go out below
   * the key's rate: the slots are fewer than the chains that spend it (Little's law). Grown as a `spare` step is.
   */
  | 'chains'
  /**
   * The key had requests to spare at its last batch and its requests are slow, and every slot is taken while slices
   * wait for one (counted when the slots were read, not at the last batch): grown as a `spare` step is, at once. A
   * small full history at the real service's latency sent no batch while its slots waited on a round, so the 300
   * slices its user listing queued waited for the next round's batch to grow the slots: a round more.
   */
  | 'full';

export interface ConcurrencyDecision {
  concurrency: number;
  reason: ConcurrencyReason;
}

/**
 * Growth beyond the proportional target. Calls waiting do not grow in proportion to the slots: when the fetcher sends
 * because every running slice has a call waiting (4 x 8 slots: 32 calls), each slot has one, but in steady state a
 * slice spends part of its time outside the upstream (claims, encoding, commits): the acceptance run at 4 x 8 filled
 * its POSTs with 19-20 slots per worker, about 50 calls from 80 slots. With the proportional target alone (8 -> 13 ->
 * 17-20) the first three held POSTs still left short; one run had 40 requests for 30, 1.33x.
 */
export const SLOT_HEADROOM = 1.5;

/** Whether a batch left short of a full one while the work asked for full ones. */
export function isShortBatch(demand: BudgetDemand): boolean {
  return demand.binds && !demand.tail && demand.calls < demand.maxBatch;
}

/**
 * - no demand (no batch lately): `base`;
 * - the key had requests to spare at its last batch, its requests are slower than {@link FULL_BATCH_GROWTH_LATENCY_MS},
 *   and every slot of the worker is taken while slices wait for one by a count made now (`queuedWhileFull`): grown as
 *   a `spare` step, without waiting for a batch sent after the last change (`full`);
 * - the key does not bind and no slice waits for a slot: halfway back to `base` once per settled change (`free`, see
 *   `freeDecay`);
 * - the key does not bind, slices wait for a slot and the last batch left short (or was full, not a tail's, with
 *   requests slower than {@link FULL_BATCH_GROWTH_LATENCY_MS}): grown by the slices waiting once the last change
 *   settled (`settleMs / 2`), at most {@link spareStep} more (twice `current` unless the CPU is nearly idle), at most
 *   {@link BudgetDemand.chains} x {@link SLOT_HEADROOM} (more slots could not spend the key faster: with latency off
 *   that is ~20 chains) and at most `max` (`spare`);
 * - the key binds, slices wait for a slot, requests are slower than {@link FULL_BATCH_GROWTH_LATENCY_MS} and the slots
 *   are fewer than {@link BudgetDemand.chains} (its full batches go one a round, below its rate): grown as a `spare`
 *   step once the last change settled (`settleMs / 2`), short batch or full (`chains`);
 * - the key binds and the last batch was full (or a tail's, or older than the last change plus `settleMs`): `current`
 *   (within `[base, max]`);
 * - a batch left short but fewer than {@link MIN_UPSTREAM_SHARE} of the running slices wait on the key: `current`
 *   (`elsewhere`); or the worker's event loop or its machine's CPUs were busy {@link MAX_GROWTH_UTILIZATION} of the
 *   time or more: `current` (`busy`);
 * - the key binds and the last batch left short: `current x maxBatch / calls x SLOT_HEADROOM` (the slots that would
 *   have filled it, see {@link SLOT_HEADROOM}), at least one more and at most twice `current`, at most `max` and at
 *   most the larger of `maxBatch` and {@link BudgetDemand.chains}, x {@link SLOT_HEADROOM} (the chaos run's 429
 *   storms bound a key with latency off, and its workers doubled to 512 slots on short batches).
 */
export function decideConcurrency(input: ConcurrencyInput): ConcurrencyDecision {
  const base = Math.max(1, Math.floor(input.base));
  const max = Math.max(base, Math.floor(input.max));
  const current = Math.min(max, Math.max(base, Math.floor(input.current)));
  const { demand } = input;
  if (demand === undefined) return { concurrency: base, reason: 'free' };
  const slow = (demand.latencyMs ?? 0) >= FULL_BATCH_GROWTH_LATENCY_MS;
  // Every slot taken and slices still queued, counted now: the last change has shown (its slots are filled), whatever
  // the last batch (sent before it, or before the slices were queued) says.
  const queuedNow = input.queuedWhileFull ?? 0;
  if (!demand.binds && slow && !demand.tail && queuedNow > 0) {
    const refused = refusal(input, current);
    return (
      refused ??
      spareGrowth(current, max, { ...demand, queued: queuedNow }, input.stepBusy ?? input.busy, 'full')
    );
  }
  // The key does not bind: grow while slices wait for a slot and batches leave short; with no slice waiting, back
  // toward the configured concurrency, halving per settled change (`freeDecay`).
  const spare = !demand.binds && (demand.queued ?? 0) > 0;
  // A spare key's step shows in half the time: its new slices' first calls go out in the next batch (no hold).
  const settled = demand.at >= input.changedAt + (spare ? input.settleMs / 2 : input.settleMs);
  if (!demand.binds && !spare) return freeDecay(current, base, settled);
  // A key with requests to spare grows on full batches too while its requests are slow (FULL_BATCH_GROWTH_LATENCY_MS).
  const short = demand.calls < demand.maxBatch && !demand.tail;
  const underChains = belowKeyChains(current, demand) && slow && !demand.tail;
  if (underChains && demand.at >= input.changedAt + input.settleMs / 2) {
    const refused = refusal(input, current);
    return refused ?? spareGrowth(current, max, demand, input.stepBusy ?? input.busy, 'chains');
  }
  if (!(short || (spare && slow && !demand.tail)) || !settled)
    return { concurrency: current, reason: 'kept' };
  const refused = refusal(input, current);
  if (refused !== undefined) return refused;
  if (spare) return spareGrowth(current, max, demand, input.stepBusy ?? input.busy, 'spare');
  const target = Math.ceil((current * demand.maxBatch * SLOT_HEADROOM) / Math.max(1, demand.calls));
  const grown = Math.min(
    max,
    slotsEnough(demand, demand.maxBatch),
    2 * current,
    Math.max(current + 1, target),
  );
  if (grown <= current) return { concurrency: current, reason: 'kept' };
  return { concurrency: grown, reason: 'short' };
}

/**
 * Whether slices wait for a slot while the key binds and the slots are fewer than the chains that spend it: its full
 * batches then go one round at a time, far below its rate. A small full history with 578 slices planned (each
 * counted as two calls: more than the key's two windows at one call a request, so the work binds) held 64 slots for
 * 4 s there, one 50-call POST a round, an eighth of the key.
 */
function belowKeyChains(current: number, demand: BudgetDemand): boolean {
  return demand.binds && (demand.queued ?? 0) > 0 && demand.chains !== undefined && current < demand.chains;
}

/** Growth refused: most running slices wait elsewhere than on the key, or the loop or the machine is busy. */
function refusal(input: ConcurrencyInput, current: number): ConcurrencyDecision | undefined {
  if (input.upstreamShare !== undefined && input.upstreamShare < MIN_UPSTREAM_SHARE)
    return { concurrency: current, reason: 'elsewhere' };
  if (input.busy !== undefined && input.busy >= MAX_GROWTH_UTILIZATION)
    return { concurrency: current, reason: 'busy' };
  return undefined;
}

/**
 * The most slots that could still add calls: the chains that spend the key ({@link BudgetDemand.chains}), at least
 * `floor` (a binding key fills its batches only with a full batch's calls waiting at once), x {@link SLOT_HEADROOM};
 * unbounded while the key's rate is not known.
 */
function slotsEnough(demand: BudgetDemand, floor: number): number {
  if (demand.chains === undefined) return Number.POSITIVE_INFINITY;
  return Math.ceil(Math.max(floor, demand.chains) * SLOT_HEADROOM);
}

/**
 * How busy a `spare` step may make the CPU by a linear projection of the last interval's busy share over the slots
 * (see {@link spareStep}); well under {@link MAX_GROWTH_UTILIZATION}, since the share also counts what does not grow
 * with the slots and the projection is checked again only at the next step.
 */
export const SPARE_STEP_BUSY = 0.5;

/**
 * The most one `spare` step may add: twice `current`, or more while the CPU is nearly idle: the slots a busy share of
 * {@link SPARE_STEP_BUSY} would allow if the share since the last change (`stepBusy`, else the last interval's) grew
 * in proportion to the slots (`current x SPARE_STEP_BUSY / busy`). At the real service's latency a slice spends almost
 * all its time waiting on the upstream (a small full history: 64 slots at 14 % busy), so doubling per 2 s step took
 * four steps, ~8 s of a 26 s run, to reach the slices waiting. A busy box (the chaos run: 16 slots at 48 %) still
 * doubles at most.
 */
export function spareStep(current: number, busy: number | undefined): number {
  const doubled = 2 * current;
  if (busy === undefined || !(busy > 0)) return doubled;
  const projected = Math.min(SPARE_STEP_MAX_FACTOR * current, Math.floor((current * SPARE_STEP_BUSY) / busy));
  return Math.max(doubled, projected);
}

/** The most a {@link spareStep} multiplies the slots by, however idle the CPU read (a reading near 0 projects no bound). */
export const SPARE_STEP_MAX_FACTOR = 8;

/**
 * The `spare` case: a slot for each slice waiting, at most {@link spareStep} more (the busy check must see each step:
 * the slices a step starts stay until they end, whatever the slots do after), capped by the chains that would spend
 * the key; never below `current`.
 */
function spareGrowth(
  current: number,
  max: number,
  demand: BudgetDemand,
  busy: number | undefined,
  reason: 'spare' | 'chains' | 'full',
): ConcurrencyDecision {
  const grown = Math.min(
    max,
    slotsEnough(demand, 0),
    spareStep(current, busy),
    current + (demand.queued ?? 0),
  );
  if (grown <= current) return { concurrency: current, reason: 'kept' };
  return { concurrency: grown, reason };
}

/**
 * The key does not bind and no slice waits: back toward `base`, halving once per settled change. Slots above the
 * slices running cost nothing, and a run's end hands its idle slots to tail splits (`idle-slots.ts`): dropping
 * straight to `base` the moment the queue emptied (a small full history at the real latency: 256 -> 32 with 137
 * slices running) left the split pieces queued behind 32 slots and the end waiting for a regrowth.
 */
function freeDecay(current: number, base: number, settled: boolean): ConcurrencyDecision {
  if (current <= base) return { concurrency: base, reason: 'free' };
  if (!settled) return { concurrency: current, reason: 'kept' };
  return { concurrency: Math.max(base, Math.ceil(current / 2)), reason: 'free' };
}

/** The Redis form of a {@link BudgetDemand}. */
export function encodeBudgetDemand(demand: BudgetDemand): string {
  return JSON.stringify(demand);
}

/** Parses {@link encodeBudgetDemand}'s form; `undefined` for anything else (absent, malformed, an older form). */
export function parseBudgetDemand(raw: string | null | undefined): BudgetDemand | undefined {
  if (raw === null || raw === undefined || raw === '') return undefined;
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch {
    return undefined;
  }
  if (typeof v !== 'object' || v === null) return undefined;
  const o = v as Record<string, unknown>;
  const finite = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);
  if (!finite(o['at']) || !finite(o['calls']) || !finite(o['maxBatch']) || typeof o['binds'] !== 'boolean')
    return undefined;
  return {
    at: o['at'],
    binds: o['binds'],
    calls: o['calls'],
    maxBatch: o['maxBatch'],
    tail: o['tail'] === true,
    ...(finite(o['queued']) ? { queued: o['queued'] } : {}),
    ...(finite(o['chains']) ? { chains: o['chains'] } : {}),
    ...(finite(o['latencyMs']) ? { latencyMs: o['latencyMs'] } : {}),
  };
}
