/**
 * The shared budget's options: typed once, every default in {@link DEFAULT_SHARED_BUDGET_OPTIONS}, checked and
 * resolved once by {@link resolveSharedBudgetOptions} (bad values throw a `ConfigError` naming the option).
 */
import type { Redis } from 'ioredis';
import { UPSTREAM_MAX_BATCH } from '../client/batch-loader.js';
import { DEFAULT_RATE_LIMITER_OPTIONS } from '../client/rate-limiter.js';
import { ConfigError, type GamedataError } from '../../foundation/errors/index.js';
import type { CallPriority } from './priority.js';
import { priorityRank } from './priority.js';
import type { WorkEstimator } from './work-estimate.js';

export interface SharedBudgetOptions {
  /** A connected ioredis client (duplicated twice for the blocking reads). Required. */
  redis: Redis;
  /** The API key the budget governs; only its SHA-256 digest reaches Redis. */
  apiKey: string | undefined;
  /**
   * The upstream's origin (`http://127.0.0.1:4000`): part of the budget's digest with the API key, so processes
   * pointed at another upstream (staging) with the same key and prefix never answer for each other. @default '' (the
   * key alone)
   */
  upstream?: string | undefined;
  /**
   * Consecutive requests of this process's fetcher that reached no upstream (no connection could be made) before it
   * gives up the fetcher lease, so that a process that does reach the upstream takes the key over. @default 3
   */
  unreachableLimit?: number | undefined;
  /** How long a fetcher that gave up for that stays out of the election, ms. @default 30000 */
  unreachableCoolDownMs?: number | undefined;
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
   * `gatherMs`): slices answered by one POST come back for their next page milliseconds apart. A quarter of the
   * latency (~300 ms at the real service's) was a fixed wait on each step of the run's longest chains (a small full
   * history: 7.5-9.4 s, 16-19 requests; at 0.05, 6.5-7.0 s, 18-26; the budget acceptance run 23-26 requests either
   * way). 0 = none.
   * @default 0.05
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
  gatherShare: 0.05,
  tailShare: 0.05,
  demandTtlMs: 10_000,
  growthGraceMs: 2000,
  leaseMs: 5000,
  reserve: DEFAULT_RATE_LIMITER_OPTIONS.reserve,
  resetMarginMs: DEFAULT_RATE_LIMITER_OPTIONS.resetMarginMs,
  latencyMs: 1000,
  upstream: '',
  unreachableLimit: 3,
  unreachableCoolDownMs: 30_000,
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
/** The options after defaults and checks (`redis`, `work`, the callbacks and the clock as given). */
export interface ResolvedSharedBudgetOptions {
  redis: Redis;
  apiKey: string | undefined;
  upstream: string;
  unreachableLimit: number;
  unreachableCoolDownMs: number;
  prefix: string;
  /** Rank of {@link SharedBudgetOptions.defaultPriority}. */
  defaultRank: number;
  maxBatch: number;
  maxInFlight: number;
  maxSerialMs: number;
  maxHoldMs: number;
  gatherShare: number;
  tailShare: number;
  leaseMs: number;
  demandTtlMs: number;
  growthGraceMs: number;
  /** Lease tick: a third of `leaseMs`, at least 10 ms. */
  tickMs: number;
  reserve: number;
  resetMarginMs: number;
  latencyMs: number;
  fetcher: boolean;
  now: () => number;
  work: WorkEstimator | undefined;
  onError: ((error: GamedataError) => void) | undefined;
  onBatch: ((info: BatchInfo) => void) | undefined;
}

function positive(name: string, value: number, integer: boolean, max = Infinity): number {
  if (!(value > 0) || value > max || (integer && !Number.isInteger(value)))
    throw new ConfigError(
      `${name} must be ${integer ? 'an integer' : 'a number'} in (0, ${max}], got ${value}`,
      [name],
    );
  return value;
}

function atLeastZero(name: string, value: number): number {
  if (!(value >= 0)) throw new ConfigError(`${name} must be >= 0, got ${value}`, [name]);
  return value;
}

/**
 * Applies the defaults and checks every option, in the order the budget always did.
 * @throws ConfigError naming a bad option.
 */
export function resolveSharedBudgetOptions(options: SharedBudgetOptions): ResolvedSharedBudgetOptions {
  const d = DEFAULT_SHARED_BUDGET_OPTIONS;
  if (!options.redis)
    throw new ConfigError('budget: redis (a connected ioredis client) is required', ['redis']);
  const defaultRank = priorityRank(options.defaultPriority ?? d.defaultPriority);
  const maxBatch = positive('maxBatchSize', options.maxBatchSize ?? d.maxBatchSize, true, UPSTREAM_MAX_BATCH);
  const maxInFlight = positive('maxInFlight', options.maxInFlight ?? d.maxInFlight, true);
  const maxSerialMs = positive('maxSerialMs', options.maxSerialMs ?? d.maxSerialMs, false);
  const maxHoldMs = atLeastZero('maxHoldMs', options.maxHoldMs ?? d.maxHoldMs);
  const gatherShare = options.gatherShare ?? d.gatherShare;
  if (!(gatherShare >= 0 && gatherShare <= 1))
    throw new ConfigError(`gatherShare must be in [0, 1], got ${gatherShare}`, ['gatherShare']);
  const tailShare = options.tailShare ?? d.tailShare;
  if (!(tailShare >= 0 && tailShare < 1))
    throw new ConfigError(`tailShare must be in [0, 1), got ${tailShare}`, ['tailShare']);
  const leaseMs = positive('leaseMs', options.leaseMs ?? d.leaseMs, true);
  const demandTtlMs = positive('demandTtlMs', options.demandTtlMs ?? d.demandTtlMs, true);
  const growthGraceMs = atLeastZero('growthGraceMs', options.growthGraceMs ?? d.growthGraceMs);
  return {
    redis: options.redis,
    apiKey: options.apiKey,
    upstream: options.upstream ?? d.upstream,
    unreachableLimit: positive('unreachableLimit', options.unreachableLimit ?? d.unreachableLimit, true),
    unreachableCoolDownMs: atLeastZero(
      'unreachableCoolDownMs',
      options.unreachableCoolDownMs ?? d.unreachableCoolDownMs,
    ),
    prefix: options.prefix ?? d.prefix,
    defaultRank,
    maxBatch,
    maxInFlight,
    maxSerialMs,
    maxHoldMs,
    gatherShare,
    tailShare,
    leaseMs,
    demandTtlMs,
    growthGraceMs,
    tickMs: Math.max(10, Math.floor(leaseMs / 3)),
    reserve: options.reserve ?? d.reserve,
    resetMarginMs: options.resetMarginMs ?? d.resetMarginMs,
    latencyMs: options.latencyMs ?? d.latencyMs,
    fetcher: options.fetcher !== false,
    now: options.now ?? Date.now,
    work: options.work,
    onError: options.onError,
    onBatch: options.onBatch,
  };
}
