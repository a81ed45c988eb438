/**
 * `createSharedBudget(options)`: one upstream budget per API key, shared by every process through Redis.
 *
 * Every process enqueues its calls (procedure, input, priority, reply address) in per-priority Redis lists. One
 * process per key holds the fetcher lease (`SET NX PX`, renewed; any live participant takes over when the holder
 * dies) and runs the fetch loop: it paces from the upstream's `ratelimit-*` headers (a 429's pause is kept in Redis
 * for the next fetcher), pops up to 50 calls highest priority first, POSTs them as one batch through its client's
 * transport, and pushes each outcome to the caller's reply list. While tokens are scarce it holds a partial batch
 * (at most `maxHoldMs`) to fill it; otherwise it sends at once. Batches taken by a fetcher that died are put back
 * at the front of their queues by the next one. See docs/ARCHITECTURE.md, "Upstream budget".
 *
 * This file is the shell; each part is one concept in its own file: `shared-budget-options.ts` (options, defaults,
 * checks), `call-queue.ts` (the caller side), `reply-reader.ts` (this process's reply list), `budget-lease.ts` (the
 * fetcher election), `fetch-loop.ts` around the pure `fetch-decision.ts` (hold or send), `batch-sender.ts` (POST and
 * reply routing, the serial lane), `demand-publisher.ts` (what the workers size their slots by) and
 * `persisted-pacing.ts` (the token state a new fetcher adopts).
 *
 * @example
 * const budget = createSharedBudget({ redis, apiKey });
 * const client = createClient({ baseUrl, apiKey, budget });
 * await runWithPriority('feed-tail', () => client.transaction.getPaginated({ limit: 100 }));
 * await budget.close();
 */
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { CallRouter, ClientBudget } from '../client/batch-loader.js';
import type { Transport } from '../client/transport.js';
import { AbortedError, ConfigError } from '../../foundation/errors/index.js';
import { createBatchSender } from './batch-sender.js';
import { asService, type ReportError } from './budget-errors.js';
import type { BudgetKeys } from './budget-keys.js';
import { budgetKeys } from './budget-keys.js';
import { createBudgetLease, type BudgetLease } from './budget-lease.js';
import type { BudgetLimiter } from './budget-limiter.js';
import { createBudgetLimiter } from './budget-limiter.js';
import { readBudgetSnapshot, type BudgetSnapshot } from './budget-snapshot.js';
import { createCallQueue, type CallOutcome, type CallQueue } from './call-queue.js';
import { parseBudgetDemand, type BudgetDemand } from './concurrency-decision.js';
import { createDemandPublisher } from './demand-publisher.js';
import { createFetchLoop, type FetchLoop } from './fetch-loop.js';
import { persistPacing, readPersistedPacing } from './persisted-pacing.js';
import { createReachTracker } from './reach-tracker.js';
import { createReplyReader, type ReplyReader } from './reply-reader.js';
import {
  resolveSharedBudgetOptions,
  type ResolvedSharedBudgetOptions,
  type BatchInfo,
  type SharedBudgetOptions,
} from './shared-budget-options.js';

export type { BatchInfo, BudgetSnapshot, SharedBudgetOptions };
export { DEFAULT_SHARED_BUDGET_OPTIONS } from './shared-budget-options.js';

export interface SharedBudget extends ClientBudget {
  /** This process's id (reply address, lease value). */
  readonly id: string;
  readonly keys: BudgetKeys;
  /** Whether this process holds the fetcher lease now. */
  isLeader(): boolean;
  snapshot(): Promise<BudgetSnapshot>;
  /**
   * What the key's fetcher (in whichever process) saw at its last batch: whether the budget and the work bound and
   * how many calls the batch carried. `undefined` when no batch was sent lately (`demandTtlMs`).
   * @throws ServiceError when Redis cannot be read.
   */
  demand(): Promise<BudgetDemand | undefined>;
  /** Calls of this process waiting for their answers now (the slot sizing's evidence that slices wait on the key). */
  waitingCalls(): number;
  /** Stops fetching (releasing the lease), rejects calls still waiting here, closes the extra connections. */
  close(): Promise<void>;
}

/**
 * Creates this process's handle on the shared budget of `apiKey`. Pass it to `createClient({ budget })` (one
 * client per budget). A thin shell: it resolves the options and wires the parts (caller queue, reply reader, lease,
 * fetch loop, batch sender, demand, persisted pacing), each in its own file.
 * @throws ConfigError naming a bad option.
 */
export function createSharedBudget(options: SharedBudgetOptions): SharedBudget {
  const o = resolveSharedBudgetOptions(options);
  const { redis, now } = o;
  const keys = budgetKeys(o.prefix, o.apiKey, o.upstream);
  const id = randomBytes(8).toString('hex');
  const state: ShellState = { transport: undefined, closed: false };
  const parts = createParts(o, keys, id, state);
  const router: CallRouter = { route: (call, signal) => parts.queue.route(call, signal) };
  return {
    id,
    keys,
    limiter: parts.limiter,
    attach(t) {
      if (state.transport)
        throw new ConfigError('budget: already attached to a client (one client per budget)');
      state.transport = t;
      parts.lease.start();
      return router;
    },
    isLeader: () => parts.lease.isLeader(),
    snapshot: () => readBudgetSnapshot(redis, keys, now()),
    async demand() {
      try {
        return parseBudgetDemand(await redis.get(keys.demand));
      } catch (error) {
        throw asService(error, 'reading the demand');
      }
    },
    waitingCalls: () => parts.queue.waiting(),
    close: () => closeBudget(o, keys, id, state, parts),
  };
}

/** What the shell and its parts share: the transport attached and whether the budget is closed. */
interface ShellState {
  transport: Transport | undefined;
  closed: boolean;
}

interface Parts {
  limiter: BudgetLimiter;
  queue: CallQueue;
  replies: ReplyReader;
  bell: Bell;
  loop: FetchLoop;
  lease: BudgetLease;
}

const reporter =
  (o: ResolvedSharedBudgetOptions): ReportError =>
  (error, what) =>
    o.onError?.(asService(error, what));

/** Wires the parts: caller queue and reply reader, lease, fetch loop with its batch sender, demand and pacing. */
function createParts(o: ResolvedSharedBudgetOptions, keys: BudgetKeys, id: string, state: ShellState): Parts {
  const { redis, now } = o;
  const report = reporter(o);
  const isClosed = (): boolean => state.closed;
  const limiter = createBudgetLimiter({
    reserve: o.reserve,
    resetMarginMs: o.resetMarginMs,
    latencyMs: o.latencyMs,
    now,
    onComplete: (s, status) => persistPacing(redis, keys, s, status, now, report),
  });
  const settle = (callId: string, outcome: CallOutcome): boolean => queue.settle(callId, outcome);
  const replies = createReplyReader({ redis, replyKey: keys.replies(id), isClosed, report, settle });
  const onRoute = (): void => replies.ensure();
  const queue = createCallQueue({ redis, keys, id, defaultRank: o.defaultRank, isClosed, report, onRoute });
  const transport = (): Transport | undefined => state.transport;
  // Issue 48: a fetcher whose requests reach no upstream gives up the lease and cools down.
  const reach = createReachTracker({
    limit: o.unreachableLimit,
    coolDownMs: o.unreachableCoolDownMs,
    now,
  });
  const onReach = (reached: boolean): void => {
    if (reach.record(reached)) void lease.stepDown();
  };
  const batch = { leaseMs: o.leaseMs, transport, settle, report, onBatch: o.onBatch, onReach };
  const sender = createBatchSender({ redis, keys, id, ...batch });
  const bell = createBell(redis, keys.bell);
  const demand = createDemandPublisher(redis, keys, o.demandTtlMs, now, report);
  const leading = (): boolean => lease.isLeader();
  const waitBell = (ms: number): Promise<void> => bell.wait(ms);
  const loopDeps = {
    redis,
    keys,
    id,
    options: o,
    limiter,
    sender,
    demand,
    leading,
    isClosed,
    waitBell,
    report,
  };
  const loop = createFetchLoop(loopDeps);
  const lease = createBudgetLease({
    ...{ redis, keys, id, leaseMs: o.leaseMs, tickMs: o.tickMs, isClosed, report },
    canFetch: () => state.transport !== undefined && o.fetcher && !reach.coolingDown(),
    onWon: async () => {
      limiter.adopt(await readPersistedPacing(redis, keys));
      void loop.lead();
    },
  });
  return { limiter, queue, replies, bell, loop, lease };
}

/** Stops fetching (releasing the lease), rejects the calls still waiting here, closes the extra connections. */
async function closeBudget(
  o: ResolvedSharedBudgetOptions,
  keys: BudgetKeys,
  id: string,
  state: ShellState,
  parts: Parts,
): Promise<void> {
  if (state.closed) return;
  state.closed = true;
  const report = reporter(o);
  const wasLeading = await parts.lease.resign();
  parts.loop.wakeAll();
  await parts.loop.drain();
  await o.work?.close().catch((e: unknown) => report(e, 'closing the work estimate'));
  try {
    if (wasLeading) await parts.lease.release();
    await o.redis.del(keys.alive(id), keys.replies(id));
  } catch (error) {
    report(error, 'close');
  }
  parts.queue.rejectAll(new AbortedError('budget: closed'));
  parts.replies.disconnect();
  parts.bell.disconnect();
  await parts.replies.done();
}

interface Bell {
  /** Waits for an enqueue's ring, at most `ms`. */
  wait(ms: number): Promise<void>;
  disconnect(): void;
}

/** The fetcher's wake-up: a blocking read of the bell list on its own connection (opened on first use). */
function createBell(redis: Redis, bellKey: string): Bell {
  let conn: Redis | undefined;
  return {
    async wait(ms) {
      if (conn === undefined) {
        conn = redis.duplicate();
        conn.on('error', () => undefined);
      }
      await conn.blpop(bellKey, Math.max(0.01, ms / 1000));
    },
    disconnect: () => conn?.disconnect(),
  };
}
