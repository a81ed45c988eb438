/**
 * The fetcher's loop, run by the process holding the lease: wait for a request slot (`maxInFlight`) and a token,
 * count what waits per priority, keep the window's last requests for tails, decide (`decideFetch`), and on a send
 * take up to the batch's size in one Lua script (`TAKE`: highest priority first, FIFO within one, feed calls only
 * while the key's serial lane has room) and send it (`BatchSender`). A loop from an earlier term (lease lost, then
 * won again) stops as soon as a new one starts.
 */
import type { Redis } from 'ioredis';
import { createBackoff, sleep } from '../../foundation/retry/index.js';
import type { BudgetKeys } from './budget-keys.js';
import type { BudgetLimiter } from './budget-limiter.js';
import { BACKGROUND_FAILURE_BACKOFF, type ReportError } from './budget-errors.js';
import { TAKE } from './budget-scripts.js';
import type { BatchSender } from './batch-sender.js';
import type { DemandPublisher } from './demand-publisher.js';
import { keyChains } from './concurrency-decision.js';
import { decideFetch, type FetchInput } from './fetch-decision.js';
import { priorityRank } from './priority.js';
import type { ResolvedSharedBudgetOptions } from './shared-budget-options.js';

/** Ranks of the tail priorities (`feed-tail`, `resource-tail`): above `backfill`. */
const TAIL_RANKS = priorityRank('backfill');

export interface FetchLoopDeps {
  redis: Redis;
  keys: BudgetKeys;
  /** This process's id (the batch keys' owner). */
  id: string;
  options: ResolvedSharedBudgetOptions;
  limiter: BudgetLimiter;
  sender: BatchSender;
  demand: DemandPublisher;
  /** Whether the loop should go on (this process leads and the budget is open). */
  leading: () => boolean;
  isClosed: () => boolean;
  /** Waits for an enqueue's bell, at most `ms`. */
  waitBell: (ms: number) => Promise<void>;
  report: ReportError;
}

export interface FetchLoop {
  /** Runs the loop for a new term (ending any earlier one). */
  lead(): Promise<void>;
  /** Wakes the loop's waits for a free slot (at close). */
  wakeAll(): void;
  /** Resolves when the batches in flight have settled. */
  drain(): Promise<void>;
}

/** Calls waiting per priority queue. */
async function queueLengths(redis: Redis, keys: BudgetKeys): Promise<number[]> {
  const lengths = await redis.pipeline(keys.queues.map((q) => ['llen', q])).exec();
  return (lengths ?? []).map(([, n]) => Number(n ?? 0));
}

const sum = (ns: number[]): number => ns.reduce((s, n) => s + n, 0);

/** The fetcher's requests in flight: how many, a wait for one to come back, and a drain at close. */
interface RequestSlots {
  active(): number;
  /** Counts `run` in flight until it settles (then wakes the waits). */
  track(run: Promise<void>): void;
  /** Resolves when a request comes back (or at `wakeAll`). */
  free(): Promise<void>;
  wakeAll(): void;
  drain(): Promise<void>;
}

function createRequestSlots(): RequestSlots {
  const running = new Set<Promise<void>>();
  let waits: (() => void)[] = [];
  const wakeAll = (): void => {
    const freed = waits;
    waits = [];
    for (const f of freed) f();
  };
  return {
    active: () => running.size,
    track(run) {
      const tracked = run.finally(() => {
        running.delete(tracked);
        wakeAll();
      });
      running.add(tracked);
    },
    free: () => new Promise<void>((resolve) => waits.push(resolve)),
    wakeAll,
    drain: async () => {
      await Promise.allSettled([...running]);
    },
  };
}

/** Takes up to `size` calls into `batchKey` (`TAKE`), feed calls only within the serial lane's room. */
async function takeCalls(
  deps: FetchLoopDeps,
  batchKey: string,
  size: number,
  serialInFlight: number,
): Promise<string[]> {
  const { keys } = deps;
  return (await deps.redis.eval(
    TAKE,
    6,
    ...keys.queues,
    batchKey,
    keys.batches,
    String(size),
    deps.id,
    keys.alivePrefix,
    String(Math.max(0, deps.options.maxSerialMs - serialInFlight)),
    serialInFlight > 0 ? '1' : '0',
  )) as string[];
}

/** The loop's state across terms: requests in flight, the batch counter, the binding stretch's start. */
interface LoopState {
  slots: RequestSlots;
  batchSeq: number;
  bindingSince: number | undefined;
}

/** One term's state: when its partial batch began to be held. */
interface TermState {
  heldSince: number | undefined;
}

/** Takes up to `size` calls; sends them unless none fit the serial lane. */
async function take(deps: FetchLoopDeps, loop: LoopState, size: number, fullAsked: boolean): Promise<void> {
  const batchKey = deps.keys.batch(deps.id, loop.batchSeq++);
  const serialInFlight = deps.sender.inFlight();
  const taken = await takeCalls(deps, batchKey, size, serialInFlight);
  if (taken.length === 0) {
    // Every call waiting is a feed call the lane has no room for: wait for a request to come back.
    if (serialInFlight > 0 && loop.slots.active() > 0) await loop.slots.free();
    return;
  }
  loop.slots.track(deps.sender.run(taken, batchKey, fullAsked));
}

/** The pure step's input, read from the limiter, the work and the loop's state. */
async function readFetchInput(
  deps: FetchLoopDeps,
  loop: LoopState,
  term: TermState,
  queued: { waiting: number; urgent: number },
): Promise<FetchInput> {
  const { limiter, options: o } = deps;
  // Over a whole window ahead: the tokens left at a window's end are no reason to send partial batches.
  const binds = limiter.bindsAhead(o.maxInFlight);
  // The work is counted whether or not the key binds: the workers size their slots by the slices waiting.
  const work = await o.work?.estimate();
  const tokens = limiter.tokens();
  return {
    ...queued,
    binds,
    work,
    tokensLeft: binds ? limiter.tokensLeft() : undefined,
    tokensAhead: binds ? limiter.tokensAhead() : undefined,
    latencyMs: tokens.latencyMs,
    chains: keyChains(tokens.limit, tokens.windowMs, tokens.latencyMs, o.maxBatch),
    active: loop.slots.active(),
    now: o.now(),
    heldSince: term.heldSince,
    bindingSince: loop.bindingSince,
    demandKeptAt: deps.demand.keptAt(),
    maxBatch: o.maxBatch,
    maxHoldMs: o.maxHoldMs,
    gatherShare: o.gatherShare,
    growthGraceMs: o.growthGraceMs,
  };
}

/** One pass once a slot and a token are free: count, decide, then idle, hold or send. */
async function fetchOnce(deps: FetchLoopDeps, loop: LoopState, term: TermState): Promise<void> {
  const { limiter, options: o } = deps;
  const idleWaitMs = Math.min(200, o.tickMs);
  const perQueue = await queueLengths(deps.redis, deps.keys);
  const waiting = sum(perQueue);
  const urgent = sum(perQueue.slice(0, TAIL_RANKS));
  if (waiting > 0 && urgent === 0 && limiter.tailsOnly(o.tailShare)) {
    // The window's last requests are the tails': backfills wait for the reset (or a tail call). What the last
    // batch said still holds (the workers keep their slots for the reset).
    term.heldSince = undefined;
    deps.demand.keep();
    await Promise.race([deps.waitBell(idleWaitMs), limiter.changed()]);
    return;
  }
  const input = await readFetchInput(deps, loop, term, { waiting, urgent });
  const { step, bindingSince } = decideFetch(input);
  loop.bindingSince = bindingSince;
  if (step.action === 'idle') {
    term.heldSince = undefined;
    await deps.waitBell(idleWaitMs);
    return;
  }
  if (step.action === 'hold') {
    term.heldSince ??= input.now;
    if (step.demand) deps.demand.publish(step.demand);
    await deps.waitBell(Math.min(step.waitMs, 50));
    return;
  }
  term.heldSince = undefined;
  deps.demand.publish(step.demand);
  await take(deps, loop, step.size, step.fullAsked);
}

export function createFetchLoop(deps: FetchLoopDeps): FetchLoop {
  const { options: o, limiter } = deps;
  const loop: LoopState = { slots: createRequestSlots(), batchSeq: 0, bindingSince: undefined };
  let generation = 0;

  async function lead(): Promise<void> {
    const own = ++generation;
    const term: TermState = { heldSince: undefined };
    const backoff = createBackoff(BACKGROUND_FAILURE_BACKOFF);
    while (deps.leading() && !deps.isClosed() && own === generation) {
      try {
        if (loop.slots.active() >= o.maxInFlight) {
          await loop.slots.free();
          continue;
        }
        const wait = limiter.waitMs();
        if (wait > 0) {
          await Promise.race([sleep(Math.min(wait, o.tickMs)), limiter.changed()]);
          continue;
        }
        await fetchOnce(deps, loop, term);
        backoff.reset();
      } catch (error) {
        if (deps.isClosed() || !deps.leading()) return;
        deps.report(error, 'fetch loop');
        await backoff.pause();
      }
    }
  }

  return { lead, wakeAll: () => loop.slots.wakeAll(), drain: () => loop.slots.drain() };
}
