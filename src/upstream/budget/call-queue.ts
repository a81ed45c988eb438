/**
 * The caller side of the shared budget: each call routed here waits in `pending` (by call id) and leaves for its
 * priority's Redis list with the others of the same tick (one `RPUSH` pipeline per tick, plus the bell that wakes the
 * fetcher). It settles when its outcome comes back ({@link CallQueue.settle}: from the reply list, or from this
 * process's own fetcher), when its signal aborts (a call still queued leaves the queue), or when the budget closes.
 */
import type { Redis } from 'ioredis';
import type { ProcedureCall, SlotResult } from '../client/transport.js';
import { AbortedError, type GamedataError } from '../../foundation/errors/index.js';
import type { BudgetKeys } from './budget-keys.js';
import { asService, type ReportError } from './budget-errors.js';
import { CALL_PRIORITIES, currentPriority, priorityRank } from './priority.js';

/** A call as it waits in a priority list (short field names: it is stored per call). */
export interface QueuedCall {
  /** Call id (`<process id>:<seq>`). */
  id: string;
  /** Reply address: the caller's process id. */
  r: string;
  /** Priority rank. */
  p: number;
  /** Procedure. */
  m: string;
  /** Input. */
  i: unknown;
  /** Serial feed ms the call is expected to cost (absent: none). */
  s?: number;
  /** Times a fetcher put it back because its request reached no upstream (absent: none). */
  u?: number;
}

/** How a call ends: its slot's result or a failure. */
export type CallOutcome = { result: SlotResult } | { failure: GamedataError };

interface Pending {
  resolve: (r: SlotResult) => void;
  reject: (e: GamedataError) => void;
  item: string;
  rank: number;
  queued: boolean;
}

export interface CallQueueOptions {
  redis: Redis;
  keys: BudgetKeys;
  /** This process's id (the reply address of its calls). */
  id: string;
  /** Rank of calls made outside `runWithPriority`. */
  defaultRank: number;
  isClosed: () => boolean;
  report: ReportError;
  /** Called with each call routed (the shell starts the reply reader). */
  onRoute: () => void;
}

export interface CallQueue {
  /** Enqueues `call`; settles with its slot's result. */
  route(call: ProcedureCall, signal: AbortSignal): Promise<SlotResult>;
  /** Settles call `callId` of this process if it still waits; whether it did. */
  settle(callId: string, outcome: CallOutcome): boolean;
  /** Rejects every call still waiting. */
  rejectAll(error: GamedataError): void;
  /** Calls of this process waiting for their answers (queued, or taken and in flight). */
  waiting(): number;
}

/** The call as stored in its queue. */
function queuedCall(call: ProcedureCall, callId: string, replyTo: string, rank: number): QueuedCall {
  return {
    id: callId,
    r: replyTo,
    p: rank,
    m: call.procedure,
    i: call.input,
    ...(call.serialMs !== undefined && call.serialMs > 0 ? { s: Math.ceil(call.serialMs) } : {}),
  };
}

/** One `RPUSH` per priority list (`byRank`: the stored calls per rank) and the fetcher's bell, in one pipeline. */
async function pushCalls(redis: Redis, keys: BudgetKeys, byRank: string[][]): Promise<void> {
  const pipe = redis.pipeline();
  byRank.forEach((list, rank) => {
    if (list.length > 0) pipe.rpush(keys.queues[rank] ?? '', ...list);
  });
  pipe.rpush(keys.bell, '1').ltrim(keys.bell, 0, 0);
  const res = await pipe.exec();
  const failed = res?.find(([e]) => e !== null)?.[0];
  if (failed) throw failed;
}

export function createCallQueue(options: CallQueueOptions): CallQueue {
  const { redis, keys, id, report } = options;
  const pending = new Map<string, Pending>();
  let outbox: string[] = [];
  let flushScheduled = false;
  let seq = 0;

  function failAll(callIds: string[], error: GamedataError): void {
    for (const callId of callIds) {
      const p = pending.get(callId);
      pending.delete(callId);
      p?.reject(error);
    }
  }

  function flush(): void {
    flushScheduled = false;
    const items = outbox;
    outbox = [];
    const byRank: string[][] = CALL_PRIORITIES.map(() => []);
    for (const callId of items) {
      const p = pending.get(callId);
      if (!p) continue; // aborted before it left
      p.queued = true;
      byRank[p.rank]?.push(p.item);
    }
    pushCalls(redis, keys, byRank).catch((error: unknown) => failAll(items, asService(error, 'enqueue')));
  }

  function enqueue(callId: string, entry: Pending): void {
    pending.set(callId, entry);
    outbox.push(callId);
    if (!flushScheduled) {
      flushScheduled = true;
      setImmediate(flush);
    }
  }

  function route(call: ProcedureCall, signal: AbortSignal): Promise<SlotResult> {
    if (options.isClosed()) return Promise.reject(new AbortedError('budget: closed'));
    if (signal.aborted) return Promise.reject(new AbortedError('aborted', { cause: signal.reason }));
    const rank = priorityRank(currentPriority() ?? CALL_PRIORITIES[options.defaultRank] ?? 'backfill');
    const callId = `${id}:${seq++}`;
    const item = queuedCall(call, callId, id, rank);
    return new Promise<SlotResult>((resolve, reject) => {
      // Serialised inside the executor: an input JSON cannot carry rejects the call.
      const entry: Pending = { resolve, reject, item: JSON.stringify(item), rank, queued: false };
      const onAbort = (): void => {
        if (!pending.delete(callId)) return;
        // Best effort: a call still queued leaves the queue; a taken one is answered and ignored.
        if (entry.queued)
          redis.lrem(keys.queues[rank] ?? '', 1, entry.item).catch((e: unknown) => report(e, 'abort'));
        reject(new AbortedError('aborted', { cause: signal.reason }));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      entry.resolve = (r) => (signal.removeEventListener('abort', onAbort), resolve(r));
      entry.reject = (e) => (signal.removeEventListener('abort', onAbort), reject(e));
      enqueue(callId, entry);
      options.onRoute();
    });
  }

  function settle(callId: string, outcome: CallOutcome): boolean {
    const p = pending.get(callId);
    if (p === undefined) return false;
    pending.delete(callId);
    if ('failure' in outcome) p.reject(outcome.failure);
    else p.resolve(outcome.result);
    return true;
  }

  function rejectAll(error: GamedataError): void {
    for (const p of pending.values()) p.reject(error);
    pending.clear();
  }

  return { route, settle, rejectAll, waiting: () => pending.size };
}
