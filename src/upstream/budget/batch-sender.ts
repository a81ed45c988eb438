/**
 * Sends one taken batch and routes its outcomes: the calls are POSTed as one request through the fetcher's transport
 * (identical calls share a slot), each outcome goes back to its caller (this process's own calls with the result
 * object itself; others through their reply lists, one pipeline per batch) and the batch's record is removed. The
 * batch carries its serial feed work on the key's lane ({@link SerialLane}): its timeout grows with the work ahead of
 * it and its own.
 */
import type { Redis } from 'ioredis';
import type { SlotResult, Transport } from '../client/transport.js';
import { GamedataError, NetworkError } from '../../foundation/errors/index.js';
import type { BudgetKeys } from './budget-keys.js';
import type { ReportError } from './budget-errors.js';
import type { CallOutcome, QueuedCall } from './call-queue.js';
import { CALL_PRIORITIES } from './priority.js';
import { encodeFailure, encodeResult } from './reply-codec.js';
import { groupIdentical } from './select-batch.js';
import type { BatchInfo } from './shared-budget-options.js';

/** The serial feed work (estimated ms) of this fetcher's requests in flight: the key's lane as it sees it. */
export interface SerialLane {
  inFlight(): number;
}

export interface BatchSenderOptions {
  redis: Redis;
  keys: BudgetKeys;
  /** This process's id: its own calls are answered without Redis. */
  id: string;
  leaseMs: number;
  transport: () => Transport | undefined;
  /** Settles a call of this process; whether it still waited. */
  settle: (callId: string, outcome: CallOutcome) => boolean;
  report: ReportError;
  onBatch: ((info: BatchInfo) => void) | undefined;
  /** Told of each request: whether it reached the upstream (`false`: no connection could be made). */
  onReach?: ((reached: boolean) => void) | undefined;
}

/**
 * How often a call whose request reached no upstream is put back in its queue for another fetcher (issue 48) before
 * it fails with that NetworkError: a single bad fetcher hands its calls on; an upstream nobody reaches fails them.
 */
export const MAX_UNREACHABLE_HOPS = 2;

export interface BatchSender extends SerialLane {
  /** Sends the taken calls (raw queue items) of `batchKey` and delivers their outcomes. */
  run(taken: string[], batchKey: string, binds: boolean): Promise<void>;
}

interface Batch {
  items: QueuedCall[];
  unique: QueuedCall[];
  slotOf: number[];
}

/** A sent batch: each call's encoded reply ('' for none to push) and the calls put back in their queues. */
interface Sent {
  replies: string[];
  requeued: QueuedCall[];
}

/** Calls per priority, in `CALL_PRIORITIES` order. */
function countByPriority(items: QueuedCall[]): number[] {
  const byPriority = CALL_PRIORITIES.map(() => 0);
  for (const c of items) byPriority[c.p] = (byPriority[c.p] ?? 0) + 1;
  return byPriority;
}

/**
 * Each call's encoded reply, '' for a call answered here. Calls of this process are answered with the result
 * object itself: no JSON and no Redis round trip for a page's data (a slot shared by several callers goes to the
 * first one; the others get their own copy through the reply list, as callers in other processes do).
 */
function answer(
  batch: Batch,
  results: SlotResult[] | GamedataError,
  id: string,
  settle: BatchSenderOptions['settle'],
): string[] {
  const usedSlots = new Set<number>();
  const here = (c: QueuedCall, outcome: CallOutcome): boolean => c.r === id && settle(c.id, outcome);
  if (results instanceof GamedataError)
    return batch.items.map((c) => (here(c, { failure: results }) ? '' : encodeFailure(c.id, results)));
  return batch.items.map((c, i) => {
    const slot = batch.slotOf[i] ?? -1;
    const r = results[slot];
    if (r !== undefined && !usedSlots.has(slot) && c.r === id) {
      usedSlots.add(slot);
      if (here(c, { result: r })) return '';
    }
    return r ? encodeResult(c.id, r) : encodeFailure(c.id, new GamedataError(`budget: no result for ${c.m}`));
  });
}

/** Pushes the replies not answered here to their callers' lists, drops the batch's record, counts the batch. */
async function deliver(
  options: BatchSenderOptions,
  batch: Batch,
  replies: string[],
  byPriority: number[],
  batchKey: string,
  serialMs: number,
  requeued: readonly QueuedCall[],
): Promise<void> {
  const { redis, keys } = options;
  const { items, unique } = batch;
  const byTarget = new Map<string, string[]>();
  items.forEach((c, i) => {
    const reply = replies[i] ?? '';
    if (reply === '') return; // answered here
    const list = byTarget.get(c.r) ?? [];
    list.push(reply);
    byTarget.set(c.r, list);
  });
  const pipe = redis.pipeline();
  for (const [target, list] of byTarget) {
    pipe
      .rpush(keys.replies(target), ...list)
      .pexpire(keys.replies(target), Math.max(60_000, options.leaseMs * 4));
  }
  // Put back at the front of their queues, in their order, one hop more (see MAX_UNREACHABLE_HOPS); the bell wakes
  // whichever fetcher takes them.
  for (let i = requeued.length - 1; i >= 0; i--) {
    const c = requeued[i] as QueuedCall;
    pipe.lpush(keys.queues[c.p] ?? keys.queues[0] ?? '', JSON.stringify({ ...c, u: (c.u ?? 0) + 1 }));
  }
  if (requeued.length > 0) pipe.rpush(keys.bell, '1').ltrim(keys.bell, 0, 0);
  pipe.del(batchKey).hdel(keys.batches, batchKey);
  pipe.hincrby(keys.stats, 'slots', unique.length).hincrby(keys.stats, 'calls', items.length);
  // The key's second currency (issue 32): the serialised feed work the requests carried, as estimated when sent.
  if (serialMs > 0) pipe.hincrby(keys.stats, 'serialMs', Math.round(serialMs));
  // Request-equivalents per priority (a request counts by each priority's share of its calls): rescans' cap.
  byPriority.forEach((n, rank) => {
    if (n > 0) pipe.hincrbyfloat(keys.stats, `requests:${CALL_PRIORITIES[rank] ?? rank}`, n / items.length);
  });
  try {
    await pipe.exec();
  } catch (error) {
    options.report(error, 'delivering replies');
  }
}

export function createBatchSender(options: BatchSenderOptions): BatchSender {
  const { id } = options;
  let serialInFlight = 0;

  async function post(batch: Batch, serialMs: number): Promise<Sent> {
    try {
      const transport = options.transport();
      if (!transport) throw new GamedataError('budget: no transport attached');
      const results = await transport.send(
        batch.unique.map((c) => ({ procedure: c.m, input: c.i })),
        undefined,
        { serialMs },
      );
      options.onReach?.(true);
      return { replies: answer(batch, results, id, options.settle), requeued: [] };
    } catch (error) {
      const failure = GamedataError.from(error);
      const unreachable = failure instanceof NetworkError && failure.unreachable;
      options.onReach?.(!unreachable);
      if (!unreachable) return { replies: answer(batch, failure, id, options.settle), requeued: [] };
      // Reached no upstream: the calls go back for another fetcher, each at most MAX_UNREACHABLE_HOPS times.
      const again = batch.items.map((c) => (c.u ?? 0) < MAX_UNREACHABLE_HOPS);
      const rest = { ...batch, items: batch.items.filter((_, i) => again[i] !== true) };
      const failed = answer(rest, failure, id, options.settle);
      let next = 0;
      return {
        replies: batch.items.map((_, i) => (again[i] === true ? '' : (failed[next++] ?? ''))),
        requeued: batch.items.filter((_, i) => again[i] === true),
      };
    }
  }

  async function run(taken: string[], batchKey: string, binds: boolean): Promise<void> {
    const items = taken.map((raw) => JSON.parse(raw) as QueuedCall);
    const { unique, slotOf } = groupIdentical(items, (c) => `${c.m}\u0000${JSON.stringify(c.i)}`);
    const batch = { items, unique, slotOf };
    // The lane's serial work ahead of this request, and its own (identical calls share one slot).
    const serialAhead = serialInFlight;
    const serialOwn = unique.reduce((sum, c) => sum + (c.s ?? 0), 0);
    serialInFlight += serialOwn;
    try {
      const byPriority = countByPriority(items);
      options.onBatch?.({ calls: items.length, slots: unique.length, byPriority, binds });
      const { replies, requeued } = await post(batch, serialAhead + serialOwn);
      await deliver(options, batch, replies, byPriority, batchKey, serialOwn, requeued);
    } finally {
      serialInFlight -= serialOwn;
    }
  }

  return { run, inFlight: () => serialInFlight };
}
