/**
 * The auto-batcher (DataLoader / tRPC `httpBatchLink` style). Calls made in the same tick (or within `windowMs`)
 * are queued; each HTTP request takes up to `maxBatchSize` of them when it starts (lazily, so a request waiting
 * for a free slot still picks up calls made meanwhile). Identical calls in flight share one slot. Each caller
 * settles on its own slot; a slot the answer lacks rejects with MissingResultError. In-flight HTTP requests are
 * bounded with p-limit.
 */
import pLimit from 'p-limit';
import {
  AbortedError,
  ConfigError,
  GamedataError,
  MissingResultError,
} from '../../foundation/errors/index.js';
import type { RateLimiter } from './rate-limiter.js';
import type { ProcedureCall, SlotResult, Transport } from './transport.js';
import { createCallCostEstimator, type CallCostEstimator } from './call-cost.js';

/**
 * Where a loader hands each call when a shared budget governs the key (see `src/upstream/budget`): it resolves with the
 * call's own slot result, or rejects when the whole request failed.
 */
export interface CallRouter {
  route(call: ProcedureCall, signal: AbortSignal): Promise<SlotResult>;
}

/**
 * A budget shared beyond this client (`createSharedBudget` in `src/upstream/budget`): the client's transport paces with its
 * `limiter`, and the loader routes calls to it instead of POSTing them itself.
 */
export interface ClientBudget {
  /** Pacing of every request this client's transport sends on the budget's behalf. */
  readonly limiter: RateLimiter;
  /** Links the client's transport (the budget's fetcher may send through it); returns the router for the loader. */
  attach(transport: Transport): CallRouter;
}

export interface BatchLoaderOptions {
  /** Most procedures per POST. The upstream answers 413 above 50, so larger values are refused. @default 50 */
  maxBatchSize?: number;
  /** Extra time to gather calls before sending, in ms; 0 = the current tick only. @default 0 */
  windowMs?: number;
  /** Most HTTP requests in flight at once. @default 8 */
  maxInFlight?: number;
  /**
   * While other requests are in flight, a batch with fewer than `maxBatchSize` calls waits up to this long (ms) for
   * more calls before it is sent: the upstream counts requests, not procedures, against the rate limit and takes
   * about as long for one call as for fifty. With nothing in flight a batch is sent at once. @default 1000
   */
  maxHoldMs?: number;
  /**
   * Hands every call to a shared budget (which batches across processes) instead of POSTing it here; identical
   * calls in flight are still shared. @default undefined (batch in process)
   */
  router?: CallRouter | undefined;
  /**
   * Prices each call's serial feed work (`call-cost.ts`; the calls handed to a router carry it as `serialMs`).
   * @default a new estimator on the default cost model
   */
  cost?: CallCostEstimator | undefined;
  /**
   * The most serial feed work (estimated ms) in flight at once from this loader, its requests' own and the ones
   * ahead of them on the key's lane (issue 32: the service serialises unfiltered feed pages per key, seconds each
   * when deep; a request carrying more waits minutes and times out). A feed call that would pass it waits for the
   * next request, except the first one when nothing serial is in flight. @default 20 000
   */
  maxSerialMs?: number | undefined;
}

export const DEFAULT_BATCH_LOADER_OPTIONS = {
  maxBatchSize: 50,
  windowMs: 0,
  maxInFlight: 8,
  maxHoldMs: 1000,
  maxSerialMs: 20_000,
} as const;
/** The upstream's hard limit of procedures per batch. */
export const UPSTREAM_MAX_BATCH = 50;

export interface BatchLoader {
  /** Queues one call; resolves with its own result. Identical calls in flight are shared. */
  load(procedure: string, input: unknown, signal?: AbortSignal): Promise<unknown>;
  /** Calls queued or in flight (for tests). */
  pending(): number;
}

interface Waiter {
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
}

interface Entry {
  key: string;
  call: ProcedureCall;
  waiters: Set<Waiter>;
  sent: boolean;
  queuedAt: number;
  /** The request carrying the entry, so it can be aborted when every waiter left. */
  controller?: AbortController;
  settled: boolean;
}

function positiveInt(name: string, value: number, max = Infinity): number {
  if (!Number.isInteger(value) || value < 1 || value > max)
    throw new ConfigError(`${name} must be an integer in [1, ${max}], got ${value}`, [`${name}: ${value}`]);
  return value;
}

/** The loader's numeric options, checked, with their defaults. */
interface LoaderLimits {
  maxBatchSize: number;
  maxInFlight: number;
  windowMs: number;
  maxHoldMs: number;
  maxSerialMs: number;
}

function resolveBatchLoaderOptions(options: BatchLoaderOptions): LoaderLimits {
  const maxBatchSize = positiveInt(
    'maxBatchSize',
    options.maxBatchSize ?? DEFAULT_BATCH_LOADER_OPTIONS.maxBatchSize,
    UPSTREAM_MAX_BATCH,
  );
  const maxInFlight = positiveInt(
    'maxInFlight',
    options.maxInFlight ?? DEFAULT_BATCH_LOADER_OPTIONS.maxInFlight,
  );
  const windowMs = options.windowMs ?? DEFAULT_BATCH_LOADER_OPTIONS.windowMs;
  if (!(windowMs >= 0)) throw new ConfigError(`windowMs must be >= 0, got ${windowMs}`);
  const maxHoldMs = options.maxHoldMs ?? DEFAULT_BATCH_LOADER_OPTIONS.maxHoldMs;
  if (!(maxHoldMs >= 0)) throw new ConfigError(`maxHoldMs must be >= 0, got ${maxHoldMs}`);
  const maxSerialMs = options.maxSerialMs ?? DEFAULT_BATCH_LOADER_OPTIONS.maxSerialMs;
  if (!(maxSerialMs > 0)) throw new ConfigError(`maxSerialMs must be > 0, got ${maxSerialMs}`);
  return { maxBatchSize, maxInFlight, windowMs, maxHoldMs, maxSerialMs };
}

/**
 * How long a partial batch still waits for more calls (ms), or undefined when it goes now: only while other
 * requests are in flight (their answers will bring more calls), up to `maxHoldMs` after its oldest call queued.
 */
function holdLeftMs(
  queue: readonly Entry[],
  limits: { maxBatchSize: number; maxHoldMs: number },
  active: number,
  now: number,
): number | undefined {
  const oldest = queue[0];
  if (!oldest || queue.length >= limits.maxBatchSize || active === 0 || limits.maxHoldMs <= 0)
    return undefined;
  const waited = now - oldest.queuedAt;
  return waited < limits.maxHoldMs ? limits.maxHoldMs - waited : undefined;
}

/**
 * The next request's calls: up to `maxBatchSize` in queue order, feed calls only while the serial work in flight
 * stays within `maxSerialMs` (the first one always when nothing serial is in flight); the feed calls left wait.
 */
function takeChunk(
  queue: readonly Entry[],
  limits: { maxBatchSize: number; maxSerialMs: number },
  serialInFlight: number,
): { chunk: Entry[]; left: Entry[]; serialMs: number } {
  const chunk: Entry[] = [];
  const left: Entry[] = [];
  let serialMs = 0;
  for (const e of queue) {
    if (chunk.length >= limits.maxBatchSize) {
      left.push(e);
      continue;
    }
    const s = e.call.serialMs ?? 0;
    if (s > 0 && serialInFlight + serialMs + s > limits.maxSerialMs && serialInFlight + serialMs > 0) {
      left.push(e);
      continue;
    }
    serialMs += s;
    chunk.push(e);
  }
  return { chunk, left, serialMs };
}

/** Settles each entry of a request on its own slot (a slot the answer lacks: MissingResultError). */
function settleSlots(
  chunk: readonly Entry[],
  results: readonly (SlotResult | undefined)[],
  settle: (entry: Entry, fn: (w: Waiter) => void) => void,
  cost: CallCostEstimator,
): void {
  chunk.forEach((entry, i) => {
    const r = results[i];
    if (r?.ok === true) cost.observeAnswer(entry.call, r.data);
    if (r === undefined)
      settle(entry, (w) =>
        w.reject(
          new MissingResultError(`no result for ${entry.call.procedure} (slot ${i} of ${chunk.length})`),
        ),
      );
    else if (r.ok) settle(entry, (w) => w.resolve(r.data));
    else settle(entry, (w) => w.reject(r.error));
  });
}

/**
 * One caller's wait on an entry: settles with the entry, or rejects at once when `signal` aborts (then
 * `onAbandoned` runs if the caller was the entry's last waiter).
 */
function waitOn(target: Entry, signal: AbortSignal | undefined, onAbandoned: () => void): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const waiter: Waiter = { resolve, reject };
    target.waiters.add(waiter);
    if (!signal) return;
    const onAbort = (): void => {
      target.waiters.delete(waiter);
      reject(new AbortedError('aborted', { cause: signal.reason }));
      if (target.waiters.size === 0 && !target.settled) onAbandoned();
    };
    signal.addEventListener('abort', onAbort, { once: true });
    const cleanup = (): void => signal.removeEventListener('abort', onAbort);
    waiter.resolve = (v) => (cleanup(), resolve(v));
    waiter.reject = (e) => (cleanup(), reject(e));
  });
}

/** A new entry for a call no caller has in flight, priced for its serial feed work. */
function newEntry(key: string, procedure: string, input: unknown, cost: CallCostEstimator): Entry {
  const call: ProcedureCall = { procedure, input };
  const serialMs = cost.serialMs(call);
  if (serialMs > 0) call.serialMs = serialMs;
  return { key, call, waiters: new Set(), sent: false, settled: false, queuedAt: performance.now() };
}

/** Hands an entry to the shared budget's router; it settles on the call's own slot result. */
function route(
  entry: Entry,
  router: CallRouter,
  settle: (entry: Entry, fn: (w: Waiter) => void) => void,
): void {
  const controller = new AbortController();
  entry.sent = true;
  entry.controller = controller;
  router.route(entry.call, controller.signal).then(
    (r) => settle(entry, (w) => (r.ok ? w.resolve(r.data) : w.reject(r.error))),
    (error: unknown) => settle(entry, (w) => w.reject(GamedataError.from(error))),
  );
}

/** Settles an entry once: it leaves the calls in flight and each of its waiters is told by `fn`. */
function settleEntry(inFlight: Map<string, Entry>, entry: Entry, fn: (w: Waiter) => void): void {
  if (entry.settled) return;
  entry.settled = true;
  if (inFlight.get(entry.key) === entry) inFlight.delete(entry.key);
  for (const w of entry.waiters) fn(w);
  entry.waiters.clear();
}

/** Nobody wants the entry any more: forget it, and abort its request if every other slot is abandoned too. */
function abandon(inFlight: Map<string, Entry>, target: Entry): void {
  if (inFlight.get(target.key) === target) inFlight.delete(target.key);
  target.settled = true;
  const controller = target.controller;
  if (!target.sent || !controller) return;
  const entries = [...inFlight.values()].filter((e) => e.controller === controller);
  if (entries.length === 0) controller.abort(new AbortedError('every caller of the request aborted'));
}

export function createBatchLoader(transport: Transport, options: BatchLoaderOptions = {}): BatchLoader {
  const limits = resolveBatchLoaderOptions(options);
  const { maxBatchSize, windowMs } = limits;
  let active = 0;
  let holdTimer: NodeJS.Timeout | undefined;
  const cost = options.cost ?? createCallCostEstimator();
  /** Serial feed work (estimated ms) of the requests in flight. */
  let serialInFlight = 0;

  const limit = pLimit(limits.maxInFlight);
  const inFlight = new Map<string, Entry>();
  let queue: Entry[] = [];
  let scheduled = false;
  let tasksQueued = 0;

  const nextTick = (): Promise<void> =>
    new Promise((resolve) => (windowMs > 0 ? setTimeout(resolve, windowMs) : setImmediate(resolve)));

  const settle = (entry: Entry, fn: (w: Waiter) => void): void => settleEntry(inFlight, entry, fn);

  async function runOne(): Promise<void> {
    tasksQueued--;
    // Let callers resolved by the previous answer queue their follow-up calls first.
    await new Promise<void>((resolve) => setImmediate(resolve));
    queue = queue.filter((e) => e.waiters.size > 0);
    // A partial batch while others are in flight: their answers will bring more calls. Wait for them (or the hold).
    const holdMs = holdLeftMs(queue, limits, active, performance.now());
    if (holdMs !== undefined) {
      holdTimer ??= setTimeout(() => {
        holdTimer = undefined;
        schedule();
      }, holdMs);
      return;
    }
    const { chunk, left, serialMs } = takeChunk(queue, limits, serialInFlight);
    queue = left;
    // Nothing taken while calls wait: feed calls held by the serial work in flight; its answer schedules again.
    if (chunk.length === 0) return;
    if (queue.length > 0) schedule();
    const serialAhead = serialInFlight;
    serialInFlight += serialMs;
    active++;
    const controller = new AbortController();
    for (const e of chunk) {
      e.sent = true;
      e.controller = controller;
    }
    try {
      const results = await transport.send(
        chunk.map((e) => e.call),
        controller.signal,
        { serialMs: serialAhead + serialMs },
      );
      settleSlots(chunk, results, settle, cost);
    } catch (error) {
      const e = GamedataError.from(error);
      for (const entry of chunk) settle(entry, (w) => w.reject(e));
    } finally {
      active--;
      serialInFlight -= serialMs;
      // Held partial batches may go now (or fill up with the calls this answer triggers).
      if (queue.length > 0) schedule();
    }
  }

  function schedule(): void {
    if (scheduled) return;
    scheduled = true;
    void nextTick().then(() => {
      scheduled = false;
      // One task per chunk still needed beyond the tasks already waiting for a slot.
      const needed = Math.ceil(queue.length / maxBatchSize) - tasksQueued;
      for (let i = 0; i < needed; i++) {
        tasksQueued++;
        void limit(runOne);
      }
    });
  }

  function load(procedure: string, input: unknown, signal?: AbortSignal): Promise<unknown> {
    if (signal?.aborted) return Promise.reject(new AbortedError('aborted', { cause: signal.reason }));
    const key = `${procedure}\u0000${JSON.stringify(input)}`;
    let entry = inFlight.get(key);
    if (!entry) {
      entry = newEntry(key, procedure, input, cost);
      inFlight.set(key, entry);
      if (options.router) route(entry, options.router, settle);
      else {
        queue.push(entry);
        schedule();
      }
    }
    const target = entry;
    return waitOn(target, signal, () => abandon(inFlight, target));
  }
  return { load, pending: () => inFlight.size };
}
