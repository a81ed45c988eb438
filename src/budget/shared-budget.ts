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
 * @example
 * const budget = createSharedBudget({ redis, apiKey });
 * const client = createClient({ baseUrl, apiKey, budget });
 * await runWithPriority('feed-tail', () => client.transaction.getPaginated({ limit: 100 }));
 * await budget.close();
 */
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { CallRouter, ClientBudget } from '../client/batch-loader.js';
import { UPSTREAM_MAX_BATCH } from '../client/batch-loader.js';
import { sleep } from '../client/internal/sleep.js';
import type { ProcedureCall, SlotResult, Transport } from '../client/transport.js';
import { AbortedError, ConfigError, GamedataError, ServiceError } from '../errors.js';
import type { BudgetKeys } from './budget-keys.js';
import { budgetKeys } from './budget-keys.js';
import { readBudgetSnapshot, type BudgetSnapshot } from './budget-snapshot.js';
import type { BudgetLimiter } from './budget-limiter.js';
import { createBudgetLimiter } from './budget-limiter.js';
import { RECOVER, RELEASE, RENEW, TAKE } from './budget-scripts.js';
import type { CallPriority } from './priority.js';
import { CALL_PRIORITIES, currentPriority, priorityRank } from './priority.js';

export type { BudgetSnapshot };
import { decodeReply, encodeFailure, encodeResult } from './reply-codec.js';
import { groupIdentical } from './select-batch.js';
import { decideSend } from './send-decision.js';
import { encodeBudgetDemand, parseBudgetDemand, type BudgetDemand } from './concurrency-decision.js';
import { workFill } from './work-binds.js';
import type { WorkEstimator } from './work-estimate.js';
import type { TokenBudgetState } from './token-budget.js';
import { DEFAULT_TOKEN_BUDGET_OPTIONS } from './token-budget.js';

export interface SharedBudgetOptions {
  /** A connected ioredis client (duplicated twice for the blocking reads). Required. */
  redis: Redis;
  /** The API key the budget governs; only its SHA-256 digest reaches Redis. */
  apiKey: string | undefined;
  /** Prefix of every Redis key. @default 'gamedata:budget:' */
  prefix?: string | undefined;
  /** Priority of calls made outside `runWithPriority`. @default 'backfill' */
  defaultPriority?: CallPriority | undefined;
  /** Most calls per POST (the upstream refuses more than 50). @default 50 */
  maxBatchSize?: number | undefined;
  /**
   * Most requests the fetcher has in flight. One fetcher carries the whole key, so it needs enough in flight to
   * spend the budget: 500 / 60 s is 8.3 requests a second, and a request takes 0.6-2.3 s. The token budget, not
   * this, keeps the key under its limit. @default 16
   */
  maxInFlight?: number | undefined;
  /**
   * The most serial feed work (estimated ms, the calls' `serialMs`) in flight on the key at once (issue 32): the
   * service serialises unfiltered feed pages per key, seconds each when deep, so a batch takes feed calls only while
   * its requests' and the ones in flight stay within this (the first one when none is in flight); the feed calls left
   * keep their place in the queue. Each request's timeout grows with the serial work ahead of it and its own.
   * @default 20 000
   */
  maxSerialMs?: number | undefined;
  /**
   * Longest hold of a partial batch while the budget binds, ms. Calls trickle in as slices publish and come back
   * for their next page, so a short hold sends half-empty POSTs: on the four-worker run 1 s gave 3.36x
   * ceil(P/50) requests, 3 s 1.95x. Tail calls are never held. @default 3000
   */
  maxHoldMs?: number | undefined;
  /**
   * While the budget binds, a partial batch that already carries the fill the work asks for (`workFill`) still
   * waits this share of the measured request latency for calls arriving right behind it (`decideSend`'s
   * `gatherMs`): slices answered by one POST come back for their next page milliseconds apart. 0 = none.
   * @default 0.25
   */
  gatherShare?: number | undefined;
  /**
   * Share of each window's requests kept for tails (`feed-tail`, `resource-tail`): once only this much is left,
   * backfill and rescan calls wait for the reset unless it is due within two request latencies. So a tail never
   * waits a whole window behind a backfill that spent it. 0 = none. @default 0.05
   */
  tailShare?: number | undefined;
  /**
   * The work known to be coming (slices queued and running across the deployment, `createWorkEstimator`): the
   * fetcher holds a partial batch only while the calls waiting plus these need more requests than the key grants
   * from now to the end of the next window (`workBinds`); otherwise it sends at once, so small jobs, tails and the
   * demo run at the upstream's latency. Closed with the budget. Absent: the capacity test alone decides (holds
   * whenever full speed could spend the tokens). @default undefined
   */
  work?: WorkEstimator | undefined;
  /**
   * How long the fetcher's last {@link BudgetDemand} (what it saw at its last batch) stays readable, ms: the workers
   * size their slots by it (`decideConcurrency`), and once no batch was sent for this long they go back to their
   * configured concurrency. @default 10000
   */
  demandTtlMs?: number | undefined;
  /**
   * From the start of a binding stretch (the work asks for full batches), how long a partial batch is still held
   * though every running slice has a call waiting (`saturated`), ms, while the hold itself is published as a short
   * demand every 500 ms: the workers are starting slices and adding slots (`decideConcurrency`), so calls can come
   * (a traced acceptance run at 4 x 8 sent 8, 32, 40 and 48 calls before the new slots showed). Later short batches get
   * no such grace, so workers at their cap are not held. 0 = none. @default 2000
   */
  growthGraceMs?: number | undefined;
  /** Fetcher lease, ms: a dead fetcher is replaced within about this long. Renewed every third of it. @default 5000 */
  leaseMs?: number | undefined;
  /** Requests kept in reserve below the server's remaining count. @default 2 */
  reserve?: number | undefined;
  /** Extra wait after an announced reset, ms. @default 250 */
  resetMarginMs?: number | undefined;
  /** First estimate of one request's duration, ms (then measured). @default 1000 */
  latencyMs?: number | undefined;
  /** Take part in the fetcher election (a process that only calls may opt out). @default true */
  fetcher?: boolean | undefined;
  /** Injected clock. @default Date.now */
  now?: (() => number) | undefined;
  /** Errors that reach no caller (Redis hiccups of the background loops). */
  onError?: ((error: GamedataError) => void) | undefined;
  /** Called when this process (as the fetcher) takes a batch, before it is sent (metrics, tests). */
  onBatch?: ((info: BatchInfo) => void) | undefined;
}

export const DEFAULT_SHARED_BUDGET_OPTIONS = {
  prefix: 'gamedata:budget:',
  defaultPriority: 'backfill',
  maxBatchSize: UPSTREAM_MAX_BATCH,
  maxInFlight: 16,
  maxSerialMs: 20_000,
  maxHoldMs: 3000,
  gatherShare: 0.25,
  tailShare: 0.05,
  demandTtlMs: 10_000,
  growthGraceMs: 2000,
  leaseMs: 5000,
  reserve: DEFAULT_TOKEN_BUDGET_OPTIONS.reserve,
  resetMarginMs: DEFAULT_TOKEN_BUDGET_OPTIONS.resetMarginMs,
  latencyMs: 1000,
} as const;

/** One batch the fetcher sent. */
export interface BatchInfo {
  /** Calls carried (callers served). */
  calls: number;
  /** Procedures in the POST (identical calls share one). */
  slots: number;
  /** Calls per priority, in {@link CALL_PRIORITIES} order. */
  byPriority: number[];
  /** Whether the budget and the work bound when the batch was chosen (a full batch was asked for, see `workFill`). */
  binds: boolean;
}

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
  /** Stops fetching (releasing the lease), rejects calls still waiting here, closes the extra connections. */
  close(): Promise<void>;
}

/** Ranks of the tail priorities (`feed-tail`, `resource-tail`): above `backfill`. */
const TAIL_RANKS = priorityRank('backfill');

interface Item {
  id: string;
  r: string;
  p: number;
  m: string;
  i: unknown;
  /** Serial feed ms the call is expected to cost (absent: none). */
  s?: number;
}

interface Pending {
  resolve: (r: SlotResult) => void;
  reject: (e: GamedataError) => void;
  item: string;
  rank: number;
  queued: boolean;
}

function positive(name: string, value: number, integer: boolean, max = Infinity): number {
  if (!(value > 0) || value > max || (integer && !Number.isInteger(value)))
    throw new ConfigError(
      `${name} must be ${integer ? 'an integer' : 'a number'} in (0, ${max}], got ${value}`,
      [name],
    );
  return value;
}

const asService = (error: unknown, what: string): GamedataError =>
  error instanceof GamedataError
    ? error
    : new ServiceError(
        `budget: ${what}: ${error instanceof Error ? error.message : String(error)}`,
        'redis',
        {
          cause: error,
          retriable: true,
        },
      );

/**
 * Creates this process's handle on the shared budget of `apiKey`. Pass it to `createClient({ budget })` (one
 * client per budget).
 * @throws ConfigError naming a bad option.
 */
export function createSharedBudget(options: SharedBudgetOptions): SharedBudget {
  const d = DEFAULT_SHARED_BUDGET_OPTIONS;
  if (!options.redis)
    throw new ConfigError('budget: redis (a connected ioredis client) is required', ['redis']);
  const redis = options.redis;
  const keys = budgetKeys(options.prefix ?? d.prefix, options.apiKey);
  const defaultRank = priorityRank(options.defaultPriority ?? d.defaultPriority);
  const maxBatch = positive('maxBatchSize', options.maxBatchSize ?? d.maxBatchSize, true, UPSTREAM_MAX_BATCH);
  const maxInFlight = positive('maxInFlight', options.maxInFlight ?? d.maxInFlight, true);
  const maxSerialMs = positive('maxSerialMs', options.maxSerialMs ?? d.maxSerialMs, false);
  /** Serial feed work (estimated ms) of this fetcher's requests in flight: the key's lane as it sees it. */
  let serialInFlight = 0;
  const maxHoldMs = options.maxHoldMs ?? d.maxHoldMs;
  if (!(maxHoldMs >= 0)) throw new ConfigError(`maxHoldMs must be >= 0, got ${maxHoldMs}`, ['maxHoldMs']);
  const gatherShare = options.gatherShare ?? d.gatherShare;
  if (!(gatherShare >= 0 && gatherShare <= 1))
    throw new ConfigError(`gatherShare must be in [0, 1], got ${gatherShare}`, ['gatherShare']);
  const tailShare = options.tailShare ?? d.tailShare;
  if (!(tailShare >= 0 && tailShare < 1))
    throw new ConfigError(`tailShare must be in [0, 1), got ${tailShare}`, ['tailShare']);
  const leaseMs = positive('leaseMs', options.leaseMs ?? d.leaseMs, true);
  const demandTtlMs = positive('demandTtlMs', options.demandTtlMs ?? d.demandTtlMs, true);
  const growthGraceMs = options.growthGraceMs ?? d.growthGraceMs;
  if (!(growthGraceMs >= 0))
    throw new ConfigError(`growthGraceMs must be >= 0, got ${growthGraceMs}`, ['growthGraceMs']);
  const tickMs = Math.max(10, Math.floor(leaseMs / 3));
  const now = options.now ?? Date.now;
  const id = randomBytes(8).toString('hex');
  const replyKey = keys.replies(id);
  const report = (error: unknown, what: string): void => options.onError?.(asService(error, what));

  const limiter: BudgetLimiter = createBudgetLimiter({
    reserve: options.reserve ?? d.reserve,
    resetMarginMs: options.resetMarginMs ?? d.resetMarginMs,
    latencyMs: options.latencyMs ?? d.latencyMs,
    now,
    onComplete: (state, status) => persist(state, status),
  });

  let transport: Transport | undefined;
  let closed = false;
  let leading = false;
  let seq = 0;
  let batchSeq = 0;
  let active = 0;
  const running = new Set<Promise<void>>();
  const pending = new Map<string, Pending>();
  let outbox: string[] = [];
  let flushScheduled = false;
  let replyConn: Redis | undefined;
  let bellConn: Redis | undefined;
  let timer: NodeJS.Timeout | undefined;
  let ticking: Promise<void> = Promise.resolve();
  let slotFreed: (() => void)[] = [];

  // ---- caller side -------------------------------------------------------------------------------------------

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
    const pipe = redis.pipeline();
    byRank.forEach((list, rank) => {
      if (list.length > 0) pipe.rpush(keys.queues[rank] ?? '', ...list);
    });
    pipe.rpush(keys.bell, '1').ltrim(keys.bell, 0, 0);
    pipe
      .exec()
      .then((res) => {
        const failed = res?.find(([e]) => e !== null)?.[0];
        if (failed) throw failed;
      })
      .catch((error: unknown) => {
        const e = asService(error, 'enqueue');
        for (const callId of items) {
          const p = pending.get(callId);
          pending.delete(callId);
          p?.reject(e);
        }
      });
  }

  function route(call: ProcedureCall, signal: AbortSignal): Promise<SlotResult> {
    if (closed) return Promise.reject(new AbortedError('budget: closed'));
    if (signal.aborted) return Promise.reject(new AbortedError('aborted', { cause: signal.reason }));
    const rank = priorityRank(currentPriority() ?? CALL_PRIORITIES[defaultRank] ?? 'backfill');
    const callId = `${id}:${seq++}`;
    const item: Item = {
      id: callId,
      r: id,
      p: rank,
      m: call.procedure,
      i: call.input,
      ...(call.serialMs !== undefined && call.serialMs > 0 ? { s: Math.ceil(call.serialMs) } : {}),
    };
    return new Promise<SlotResult>((resolve, reject) => {
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
      pending.set(callId, entry);
      outbox.push(callId);
      if (!flushScheduled) {
        flushScheduled = true;
        setImmediate(flush);
      }
      ensureReplies();
    });
  }

  let replyLoop: Promise<void> | undefined;
  function ensureReplies(): void {
    replyLoop ??= readReplies();
  }

  async function readReplies(): Promise<void> {
    replyConn = redis.duplicate();
    // Connection errors surface on the commands (and a worker reports an outage once); without a listener ioredis
    // prints every reconnect failure with a stack trace.
    replyConn.on('error', () => undefined);
    while (!closed) {
      try {
        const first = await replyConn.blpop(replyKey, 1);
        if (!first) continue;
        const more = (await replyConn.lpop(replyKey, 1000)) ?? [];
        for (const raw of [first[1], ...more]) deliverLocal(raw);
      } catch (error) {
        if (closed) return;
        report(error, 'reading replies');
        await sleep(200);
      }
    }
  }

  function deliverLocal(raw: string): void {
    let reply;
    try {
      reply = decodeReply(raw);
    } catch (error) {
      report(error, 'reply');
      return;
    }
    const p = pending.get(reply.id);
    if (!p) return; // aborted, or a duplicate after a fetcher change
    pending.delete(reply.id);
    if ('result' in reply) p.resolve(reply.result);
    else p.reject(reply.failure);
  }

  // ---- fetcher side ------------------------------------------------------------------------------------------

  function persist(state: TokenBudgetState, status: number | undefined): void {
    const pipe = redis.pipeline();
    const fields: Record<string, string> = {
      latencyMs: String(state.latencyMs),
      inFlight: String(state.inFlight),
    };
    if (state.limit !== undefined) fields['limit'] = String(state.limit);
    if (state.remaining !== undefined) fields['remaining'] = String(state.remaining);
    if (state.resetAt !== undefined) fields['resetAt'] = String(state.resetAt);
    if (state.windowMs !== undefined) fields['windowMs'] = String(state.windowMs);
    pipe.hset(keys.state, fields).pexpire(keys.state, 3_600_000);
    pipe.hincrby(keys.stats, 'requests', 1);
    if (status === 429) {
      pipe.hincrby(keys.stats, 'status429', 1);
      const ms = state.pauseUntil - now();
      if (ms > 0) pipe.set(keys.pause, String(state.pauseUntil), 'PX', Math.ceil(ms));
    }
    pipe.exec().catch((e: unknown) => report(e, 'persisting the budget'));
  }

  async function adoptPersisted(): Promise<void> {
    const [state, pause] = await Promise.all([redis.hgetall(keys.state), redis.get(keys.pause)]);
    const num = (v: string | null | undefined): number | undefined =>
      v === undefined || v === null || v === '' ? undefined : Number(v);
    const adopted: Partial<TokenBudgetState> = { pauseUntil: num(pause) ?? 0 };
    const limit = num(state['limit']);
    const remaining = num(state['remaining']);
    const resetAt = num(state['resetAt']);
    if (limit !== undefined && resetAt !== undefined && remaining !== undefined) {
      // The previous fetcher's requests in flight when it last wrote may be counted by now.
      Object.assign(adopted, {
        limit,
        resetAt,
        remaining: remaining - (num(state['inFlight']) ?? 0),
        answered: true,
      });
    }
    const latency = num(state['latencyMs']);
    if (latency !== undefined) adopted.latencyMs = latency;
    const windowMs = num(state['windowMs']);
    if (windowMs !== undefined) adopted.windowMs = windowMs;
    limiter.adopt(adopted);
  }

  async function waitBell(ms: number): Promise<void> {
    if (bellConn === undefined) {
      bellConn = redis.duplicate();
      bellConn.on('error', () => undefined);
    }
    await bellConn.blpop(keys.bell, Math.max(0.01, ms / 1000));
  }

  let leadGeneration = 0;
  async function lead(): Promise<void> {
    // A loop from an earlier term (lease lost, then won again) must not run beside this one.
    const generation = ++leadGeneration;
    let heldSince: number | undefined;
    while (leading && !closed && generation === leadGeneration) {
      try {
        if (active >= maxInFlight) {
          await new Promise<void>((resolve) => slotFreed.push(resolve));
          continue;
        }
        const wait = limiter.waitMs();
        if (wait > 0) {
          await Promise.race([sleep(Math.min(wait, tickMs)), limiter.changed()]);
          continue;
        }
        const lengths = await redis.pipeline(keys.queues.map((q) => ['llen', q])).exec();
        const perQueue = (lengths ?? []).map(([, n]) => Number(n ?? 0));
        const waiting = perQueue.reduce((sum, n) => sum + n, 0);
        // Tails: the queues ranked above `backfill`.
        const urgent = perQueue.slice(0, TAIL_RANKS).reduce((sum, n) => sum + n, 0);
        if (waiting > 0 && urgent === 0 && limiter.tailsOnly(tailShare)) {
          // The window's last requests are the tails': backfills wait for the reset (or a tail call). What the last
          // batch said still holds (the workers keep their slots for the reset).
          heldSince = undefined;
          keepDemand();
          await Promise.race([waitBell(Math.min(200, tickMs)), limiter.changed()]);
          continue;
        }
        // Over a whole window ahead: the tokens left at a window's end are no reason to send partial batches. And
        // only while the work waiting and coming needs more requests than that (a small job never binds the key).
        const binds = limiter.bindsAhead(maxInFlight);
        // And as full as the work asks: everything at once when the calls waiting and coming fit in the tokens,
        // full batches when they need more than the key grants (see `workFill`).
        // The work is counted whether or not the key binds: the workers size their slots by the slices waiting.
        const work = await options.work?.estimate();
        const minFill = binds
          ? workFill({
              waiting,
              coming: work?.coming,
              tokensLeft: limiter.tokensLeft(),
              tokensAhead: limiter.tokensAhead(),
              maxBatch,
            })
          : 1;
        // Every running slice has a call waiting and nothing is in flight: no call can join before this batch is
        // sent, so holding it only costs time (4 workers x 8 slots: 32 calls, held 3 s each time). Unless the workers
        // are starting slices and adding slots at the start of this binding stretch.
        const fullAsked = binds && minFill >= maxBatch;
        if (!fullAsked) bindingSince = undefined;
        else bindingSince ??= now();
        const growing = bindingSince !== undefined && now() - bindingSince < growthGraceMs;
        const saturated =
          work !== undefined && active === 0 && work.running > 0 && waiting >= work.running && !growing;
        const decision = decideSend({
          waiting,
          urgent,
          heldMs: heldSince === undefined ? 0 : now() - heldSince,
          binds,
          minFill,
          saturated,
          gatherMs: gatherShare * limiter.tokens().latencyMs,
          maxBatch,
          maxHoldMs,
        });
        if (decision.action === 'idle') {
          heldSince = undefined;
          await waitBell(Math.min(200, tickMs));
          continue;
        }
        if (decision.action === 'hold') {
          heldSince ??= now();
          // At the start of a binding stretch the hold itself says the calls are short: the workers grow now, not
          // after the batch.
          if (growing && urgent === 0 && now() - demandKeptAt >= 500)
            publishDemand({
              at: now(),
              binds: true,
              calls: waiting,
              maxBatch,
              tail: false,
              queued: work?.queued,
            });
          await waitBell(Math.min(decision.waitMs, 50));
          continue;
        }
        heldSince = undefined;
        publishDemand({
          at: now(),
          binds: binds && minFill >= maxBatch,
          calls: decision.size,
          maxBatch,
          tail: urgent > 0,
          queued: work?.queued,
        });
        const batchKey = keys.batch(id, batchSeq++);
        const taken = (await redis.eval(
          TAKE,
          6,
          ...keys.queues,
          batchKey,
          keys.batches,
          String(decision.size),
          id,
          keys.alivePrefix,
          String(Math.max(0, maxSerialMs - serialInFlight)),
          serialInFlight > 0 ? '1' : '0',
        )) as string[];
        if (taken.length === 0) {
          // Every call waiting is a feed call the lane has no room for: wait for a request to come back.
          if (serialInFlight > 0 && active > 0) await new Promise<void>((resolve) => slotFreed.push(resolve));
          continue;
        }
        active++;
        const run = runBatch(taken, batchKey, binds && minFill >= maxBatch).finally(() => {
          active--;
          running.delete(run);
          const freed = slotFreed;
          slotFreed = [];
          for (const f of freed) f();
        });
        running.add(run);
      } catch (error) {
        if (closed || !leading) return;
        report(error, 'fetch loop');
        await sleep(200);
      }
    }
  }

  // What the fetcher saw at its last batch, for the workers' slots (`decideConcurrency`); expires when no batch goes.
  let demandKeptAt = 0;
  // When the current binding stretch began (the work asking for full batches; undefined: it does not).
  let bindingSince: number | undefined;
  function publishDemand(demand: BudgetDemand): void {
    demandKeptAt = now();
    redis
      .set(keys.demand, encodeBudgetDemand(demand), 'PX', demandTtlMs)
      .catch((e: unknown) => report(e, 'publishing the demand'));
  }
  function keepDemand(): void {
    if (now() - demandKeptAt < demandTtlMs / 4) return;
    demandKeptAt = now();
    redis.pexpire(keys.demand, demandTtlMs).catch((e: unknown) => report(e, 'keeping the demand'));
  }

  async function runBatch(taken: string[], batchKey: string, binds: boolean): Promise<void> {
    const items = taken.map((raw) => JSON.parse(raw) as Item);
    const { unique, slotOf } = groupIdentical(items, (c) => `${c.m}\u0000${JSON.stringify(c.i)}`);
    // The lane's serial work ahead of this request, and its own (identical calls share one slot).
    const serialAhead = serialInFlight;
    const serialOwn = unique.reduce((sum, c) => sum + (c.s ?? 0), 0);
    serialInFlight += serialOwn;
    try {
      await sendBatch(items, unique, slotOf, binds, batchKey, serialAhead + serialOwn);
    } finally {
      serialInFlight -= serialOwn;
    }
  }

  async function sendBatch(
    items: Item[],
    unique: Item[],
    slotOf: number[],
    binds: boolean,
    batchKey: string,
    serialMs: number,
  ): Promise<void> {
    const byPriority = CALL_PRIORITIES.map(() => 0);
    for (const c of items) byPriority[c.p] = (byPriority[c.p] ?? 0) + 1;
    options.onBatch?.({ calls: items.length, slots: unique.length, byPriority, binds });
    // Calls of this process are answered here, with the result object itself: no JSON and no Redis round trip for
    // a page's data (a slot shared by several callers goes to the first one; the others get their own copy through
    // the reply list, as callers in other processes do).
    const answeredHere = new Set<number>();
    const usedSlots = new Set<number>();
    const answerHere = (
      i: number,
      c: Item,
      outcome: { result: SlotResult } | { failure: GamedataError },
    ): void => {
      const p = c.r === id ? pending.get(c.id) : undefined;
      if (p === undefined) return;
      pending.delete(c.id);
      answeredHere.add(i);
      if ('failure' in outcome) p.reject(outcome.failure);
      else p.resolve(outcome.result);
    };
    let replies: string[];
    try {
      if (!transport) throw new GamedataError('budget: no transport attached');
      const results = await transport.send(
        unique.map((c) => ({ procedure: c.m, input: c.i })),
        undefined,
        { serialMs },
      );
      replies = items.map((c, i) => {
        const slot = slotOf[i] ?? -1;
        const r = results[slot];
        if (r !== undefined && !usedSlots.has(slot) && c.r === id) {
          usedSlots.add(slot);
          answerHere(i, c, { result: r });
          if (answeredHere.has(i)) return '';
        }
        return r
          ? encodeResult(c.id, r)
          : encodeFailure(c.id, new GamedataError(`budget: no result for ${c.m}`));
      });
    } catch (error) {
      const e = GamedataError.from(error);
      replies = items.map((c, i) => {
        answerHere(i, c, { failure: e });
        return answeredHere.has(i) ? '' : encodeFailure(c.id, e);
      });
    }
    const byTarget = new Map<string, string[]>();
    items.forEach((c, i) => {
      if (answeredHere.has(i)) return;
      const list = byTarget.get(c.r) ?? [];
      list.push(replies[i] ?? '');
      byTarget.set(c.r, list);
    });
    const pipe = redis.pipeline();
    for (const [target, list] of byTarget) {
      pipe.rpush(keys.replies(target), ...list).pexpire(keys.replies(target), Math.max(60_000, leaseMs * 4));
    }
    pipe.del(batchKey).hdel(keys.batches, batchKey);
    pipe.hincrby(keys.stats, 'slots', unique.length).hincrby(keys.stats, 'calls', items.length);
    // Request-equivalents per priority (a request counts by each priority's share of its calls): rescans' cap.
    byPriority.forEach((n, rank) => {
      if (n > 0) pipe.hincrbyfloat(keys.stats, `requests:${CALL_PRIORITIES[rank] ?? rank}`, n / items.length);
    });
    try {
      await pipe.exec();
    } catch (error) {
      report(error, 'delivering replies');
    }
  }

  async function tick(): Promise<void> {
    if (closed) return;
    try {
      await redis.set(keys.alive(id), '1', 'PX', leaseMs * 2);
      if (!transport || options.fetcher === false) return;
      if (leading) {
        if (Number(await redis.eval(RENEW, 1, keys.leader, id, String(leaseMs))) !== 1) {
          leading = false;
          return;
        }
      } else {
        if ((await redis.set(keys.leader, id, 'PX', leaseMs, 'NX')) !== 'OK') return;
        leading = true;
        await adoptPersisted();
        void lead();
      }
      await redis.eval(RECOVER, 5, ...keys.queues, keys.batches, keys.alivePrefix, id);
    } catch (error) {
      report(error, 'lease');
    }
  }

  function startTicks(): void {
    const run = (): void => {
      ticking = tick();
    };
    run();
    timer = setInterval(run, tickMs);
    timer.unref();
  }

  const router: CallRouter = { route };

  return {
    id,
    keys,
    limiter,
    attach(t) {
      if (transport) throw new ConfigError('budget: already attached to a client (one client per budget)');
      transport = t;
      startTicks();
      return router;
    },
    isLeader: () => leading,
    snapshot: () => readBudgetSnapshot(redis, keys, now()),
    async demand() {
      try {
        return parseBudgetDemand(await redis.get(keys.demand));
      } catch (error) {
        throw asService(error, 'reading the demand');
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      if (timer) clearInterval(timer);
      await ticking;
      const wasLeading = leading;
      leading = false;
      for (const f of slotFreed) f();
      slotFreed = [];
      await Promise.allSettled([...running]);
      await options.work?.close().catch((e: unknown) => report(e, 'closing the work estimate'));
      try {
        if (wasLeading) await redis.eval(RELEASE, 1, keys.leader, id);
        await redis.del(keys.alive(id), replyKey);
      } catch (error) {
        report(error, 'close');
      }
      const error = new AbortedError('budget: closed');
      for (const p of pending.values()) p.reject(error);
      pending.clear();
      replyConn?.disconnect();
      bellConn?.disconnect();
      await replyLoop;
    },
  };
}
