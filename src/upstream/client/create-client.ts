/**
 * `createClient(options)`: the spec's client-side resource layer over one shared transport, auto-batcher, rate
 * limiter and SWR cache. Every call of every resource goes through the same batcher, so concurrent reads (including
 * the pages of many time slices) ride in the same 50-procedure POSTs.
 */
import type { Redis } from 'ioredis';
import { createMemoryStore } from '../cache/memory-store.js';
import { createRedisStore } from '../cache/redis-store.js';
import type { CacheWindows } from '../cache/freshness.js';
import type { SwrCache, SwrCacheStats } from '../cache/swr-cache.js';
import { createSwrCache } from '../cache/swr-cache.js';
import type { CacheStore } from '../cache/cache-store.js';
import type { GamedataError } from '../../foundation/errors/index.js';
import { ConfigError, ValidationError } from '../../foundation/errors/index.js';
import type { ModelDef, CursorPage } from '../../foundation/models/index.js';
import type { BatchLoaderOptions, ClientBudget } from './batch-loader.js';
import { createBatchLoader, DEFAULT_BATCH_LOADER_OPTIONS } from './batch-loader.js';
import type { ClientCore, FetchPageOptions, PageRequest } from './core.js';
import type { CursorFormat } from './cursor.js';
import type { Listing } from './listing.js';
import { listingModel } from './listing.js';
import type { RateLimiter, RateLimiterOptions, RateLimiterState } from './rate-limiter.js';
import { createRateLimiter } from './rate-limiter.js';
import type { RetryPolicy } from '../../foundation/retry/index.js';
import { resolveClientRetryPolicy, withRetry } from './retry.js';
import type { FetchLike, Transport } from './transport.js';
import { createTransport, isSlotError } from './transport.js';
import type { Resources } from './resources.js';
import { createResources } from './resources.js';
import { assertRecordLike } from './internal/assert.js';

/** SWR windows per cached operation (see {@link DEFAULT_CACHE_WINDOWS}). */
export type CacheWindowsByOperation = Readonly<Record<string, CacheWindows>>;

/**
 * Default freshness windows. Reference data (countries) is fresh for an hour (the spec's client ttl, 3600 s);
 * entity reads for a minute or five; nothing else is cached (listings used for ingestion never are).
 */
export const DEFAULT_CACHE_WINDOWS: CacheWindowsByOperation = {
  'country.getAllCountries': { freshMs: 3_600_000, staleMs: 86_400_000 },
  'article.getArticleById': { freshMs: 300_000, staleMs: 3_600_000 },
  'article.getArticleLiteById': { freshMs: 300_000, staleMs: 3_600_000 },
  'party.getById': { freshMs: 60_000, staleMs: 600_000 },
  'user.getUserById': { freshMs: 60_000, staleMs: 600_000 },
  'user.getUserLite': { freshMs: 60_000, staleMs: 600_000 },
  'donation.getTotalDonations': { freshMs: 30_000, staleMs: 300_000 },
  'inventory.fetchCurrentEquipment': { freshMs: 30_000, staleMs: 300_000 },
};

export interface ClientCacheOptions {
  /** Per-operation windows merged over {@link DEFAULT_CACHE_WINDOWS}. */
  windows?: CacheWindowsByOperation;
  /** Most entries of the in-memory LRU. @default 10 000 */
  maxEntries?: number;
  /** Redis key prefix when `redis` is set. @default 'gamedata:cache:' */
  redisPrefix?: string;
  /** Use the in-memory tier in front of Redis. @default true */
  memory?: boolean;
}

export interface ClientOptions {
  /** The tRPC base URL, ending in `/trpc` (e.g. a simulator's `url`). Required. */
  baseUrl: string;
  /** Sent as `X-API-Key`. @default undefined (anonymous: a lower rate limit; transactions refuse) */
  apiKey?: string | undefined;
  /** Injected fetch. @default globalThis.fetch (keep-alive connection pool of Node's dispatcher) */
  fetch?: FetchLike | undefined;
  /** Timeout of one HTTP request, ms. @default 30 000 */
  timeoutMs?: number | undefined;
  /** Retry policy for whole requests and for retriable per-procedure errors. @default CLIENT_RETRY_POLICY (5 attempts) */
  retry?: Partial<RetryPolicy> | undefined;
  /** Most procedures per POST (never above 50, the upstream's limit). @default 50 */
  maxBatchSize?: number | undefined;
  /** Extra ms to gather calls into a batch. @default 0 (same tick) */
  batchWindowMs?: number | undefined;
  /** Most HTTP requests in flight. @default 8 */
  maxInFlight?: number | undefined;
  /** How long a partial batch may wait for more calls while other requests are in flight, ms. @default 1000 */
  maxBatchHoldMs?: number | undefined;
  /** Header-driven pacing; `false` disables it. @default {} (on) */
  rateLimit?: RateLimiterOptions | false | undefined;
  /** The upstream's cursor format: `v1` for the pre-2026-08-17 service (second-precision bounds). @default 'v2' */
  cursorFormat?: CursorFormat | undefined;
  /** SWR cache of single reads and reference data; `false` disables it. @default {} (memory) */
  cache?: ClientCacheOptions | false | undefined;
  /** A connected ioredis client: the cache gets a shared Redis tier (and cross-process revalidation locks). */
  redis?: Redis | undefined;
  /** Custom cache stores (fastest first), instead of memory/Redis. */
  cacheStores?: readonly CacheStore[] | undefined;
  /** Injected clock for the cache. @default Date.now */
  now?: (() => number) | undefined;
  /** Called after every HTTP exchange (logs, metrics). */
  onRequest?: ((info: { procedures: number; status: number | undefined; ms: number }) => void) | undefined;
  /** Called with errors that reach no caller (background cache revalidation). */
  onError?: ((error: GamedataError) => void) | undefined;
  /**
   * A budget shared by every process on the API key (`createSharedBudget` from `src/upstream/budget`): calls go to its
   * queues, one elected fetcher packs them 50 per POST and paces the key; `rateLimit`, `maxInFlight`,
   * `batchWindowMs` and `maxBatchHoldMs` then do not apply. @default undefined (batch and pace in process)
   */
  budget?: ClientBudget | undefined;
  /**
   * The largest answer body read, bytes (issue 48): a larger one is cut off as it arrives and is a retriable
   * UpstreamError. @default 67108864 (64 MiB, `DEFAULT_MAX_RESPONSE_BYTES`)
   */
  maxResponseBytes?: number | undefined;
}

export const DEFAULT_CLIENT_OPTIONS = {
  timeoutMs: 30_000,
  maxBatchSize: DEFAULT_BATCH_LOADER_OPTIONS.maxBatchSize,
  batchWindowMs: DEFAULT_BATCH_LOADER_OPTIONS.windowMs,
  maxInFlight: DEFAULT_BATCH_LOADER_OPTIONS.maxInFlight,
  cursorFormat: 'v2',
} as const;

export interface CallOptions {
  signal?: AbortSignal | undefined;
}

/** Counters of one client (tests, the benchmark, metrics). */
export interface ClientStats {
  httpRequests: number;
  procedures: number;
  /**
   * Sequential waves of calls: a call made while no other call of this client is in flight starts a new wave
   * (calls that ride the same POSTs, or overlap them, share a wave).
   */
  rounds: number;
  status429: number;
  networkErrors: number;
  cache: SwrCacheStats | undefined;
  rateLimit: RateLimiterState | undefined;
}

export interface Client extends ClientCore, Resources {
  /**
   * One raw procedure call through the batcher, rate limiter and retry (a retriable per-procedure error is retried
   * alone). The result is not checked.
   */
  call(procedure: string, input: Record<string, unknown>, options?: CallOptions): Promise<unknown>;
  /** A read through the SWR cache when the operation has windows (else a plain call), checked against `model`. */
  read<T>(
    procedure: string,
    input: Record<string, unknown>,
    model: ModelDef | undefined,
    options?: CallOptions,
  ): Promise<T>;
  /** Clears the SWR cache of every resource, in every store (memory and Redis). */
  invalidateCache(): Promise<void>;
  stats(): ClientStats;
  /** Waits for background cache revalidations. */
  idle(): Promise<void>;
}

function checkEnvelope(procedure: string, data: unknown): CursorPage<unknown> {
  if (typeof data !== 'object' || data === null || Array.isArray(data))
    throw new ValidationError(
      `${procedure}: expected a page object {items, nextCursor}, got ${Array.isArray(data) ? 'array' : typeof data}`,
      '',
    );
  const page = data as Record<string, unknown>;
  if (!Array.isArray(page['items']))
    throw new ValidationError(`${procedure}: page.items must be an array`, 'items');
  const next = page['nextCursor'];
  if (next !== undefined && next !== null && typeof next !== 'string')
    throw new ValidationError(
      `${procedure}: page.nextCursor must be a string or null, got ${typeof next}`,
      'nextCursor',
    );
  const hasMore = page['hasMore'];
  if (hasMore !== undefined && hasMore !== null && typeof hasMore !== 'boolean')
    throw new ValidationError(
      `${procedure}: page.hasMore must be a boolean, got ${typeof hasMore}`,
      'hasMore',
    );
  return page as unknown as CursorPage<unknown>;
}

/** Checks the options nothing else checks; returns the ones with defaults. @throws ConfigError naming the option. */
function checkClientOptions(options: ClientOptions): { timeoutMs: number; cursorFormat: CursorFormat } {
  if (typeof options.baseUrl !== 'string' || !/^https?:\/\//.test(options.baseUrl))
    throw new ConfigError(`baseUrl must be an http(s) URL, got ${JSON.stringify(options.baseUrl)}`, [
      'baseUrl',
    ]);
  const timeoutMs = options.timeoutMs ?? DEFAULT_CLIENT_OPTIONS.timeoutMs;
  if (!(timeoutMs > 0)) throw new ConfigError(`timeoutMs must be > 0, got ${timeoutMs}`, ['timeoutMs']);
  const cursorFormat = options.cursorFormat ?? DEFAULT_CLIENT_OPTIONS.cursorFormat;
  if (cursorFormat !== 'v2' && cursorFormat !== 'v1')
    throw new ConfigError(`cursorFormat must be 'v2' or 'v1', got ${String(cursorFormat)}`, ['cursorFormat']);
  return { timeoutMs, cursorFormat };
}

/** The client's pacing: the shared budget's limiter, none (`rateLimit: false`), or its own header-driven one. */
function createClientLimiter(
  options: ClientOptions,
): Pick<RateLimiter, 'acquire' | 'complete'> & { state(): RateLimiterState | undefined } {
  return options.budget
    ? options.budget.limiter
    : options.rateLimit === false
      ? { acquire: async () => {}, complete: () => {}, state: () => undefined }
      : createRateLimiter(options.rateLimit ?? {});
}

/** The SWR cache over the given stores, or memory and/or Redis; undefined with `cache: false`. */
function createClientCache(options: ClientOptions): SwrCache | undefined {
  if (options.cache === false) return undefined;
  const c = options.cache ?? {};
  const stores: CacheStore[] = options.cacheStores ? [...options.cacheStores] : [];
  if (!options.cacheStores) {
    if (c.memory !== false || !options.redis)
      stores.push(
        createMemoryStore({ max: c.maxEntries ?? 10_000, ...(options.now ? { now: options.now } : {}) }),
      );
    if (options.redis)
      stores.push(
        createRedisStore({ redis: options.redis, ...(c.redisPrefix ? { prefix: c.redisPrefix } : {}) }),
      );
  }
  return createSwrCache({
    stores,
    ...(options.now ? { now: options.now } : {}),
    onError: (error) => options.onError?.(error),
  });
}

/** The client's one transport over its limiter, counting each HTTP exchange into `counters`. */
function createClientTransport(
  options: ClientOptions,
  o: {
    timeoutMs: number;
    retry: RetryPolicy;
    limiter: ReturnType<typeof createClientLimiter>;
    counters: Pick<ClientStats, 'httpRequests' | 'procedures' | 'status429' | 'networkErrors'>;
  },
): Transport {
  const { limiter, counters } = o;
  const fetchImpl: FetchLike = options.fetch ?? ((input, init) => fetch(input, init));
  return createTransport({
    baseUrl: options.baseUrl,
    apiKey: options.apiKey,
    fetch: fetchImpl,
    timeoutMs: o.timeoutMs,
    maxResponseBytes: options.maxResponseBytes,
    limiter: {
      acquire: (signal) => limiter.acquire(signal),
      complete: (headers, status, retryAfterMs) => limiter.complete(headers, status, retryAfterMs),
      state: () => limiter.state() ?? ({} as RateLimiterState),
    },
    retry: o.retry,
    onRequest: (info) => {
      counters.httpRequests++;
      counters.procedures += info.procedures;
      if (info.status === 429) counters.status429++;
      if (info.status === undefined) counters.networkErrors++;
      options.onRequest?.(info);
    },
  });
}

/** The wire input of one listing page. */
function pageInput(listing: Listing, request: PageRequest): Record<string, unknown> {
  const input: Record<string, unknown> = { ...listing.filters, limit: request.limit };
  if (request.cursor !== undefined) input['cursor'] = request.cursor;
  if (request.direction !== undefined) input['direction'] = request.direction;
  return input;
}

/**
 * The shared budget's own rule when plugged in (its limiter's `binds`: sending all that waits would spend the
 * tokens left before the reset, or a pause runs); else a pause runs, or less than a fifth of the window is left.
 */
function limiterBinds(limiter: { state(): RateLimiterState | undefined }, maxInFlight: number): boolean {
  const rule = (limiter as { binds?: unknown }).binds;
  if (typeof rule === 'function') return Boolean((rule as (n: number) => unknown).call(limiter, maxInFlight));
  const st = limiter.state();
  if (!st) return false;
  if (st.pauseUntil > Date.now()) return true;
  return st.limit !== undefined && st.remaining !== undefined && st.remaining < st.limit / 5;
}

/**
 * Creates a client.
 * @example
 * const client = createClient({ baseUrl: sim.url, apiKey: 'k' });
 * const txs = await client.transaction.collectAll({ oldestDate: Date.now() - 3_600_000 });
 * @throws ConfigError naming a bad option.
 */
export function createClient(options: ClientOptions): Client {
  const { timeoutMs, cursorFormat } = checkClientOptions(options);
  const retry = resolveClientRetryPolicy(options.retry);

  const counters = { httpRequests: 0, procedures: 0, rounds: 0, status429: 0, networkErrors: 0 };
  let callsInFlight = 0;
  const limiter = createClientLimiter(options);
  const transport = createClientTransport(options, { timeoutMs, retry, limiter, counters });
  const loaderOptions: BatchLoaderOptions = {
    maxBatchSize: options.maxBatchSize ?? DEFAULT_CLIENT_OPTIONS.maxBatchSize,
    windowMs: options.batchWindowMs ?? DEFAULT_CLIENT_OPTIONS.batchWindowMs,
    maxInFlight: options.maxInFlight ?? DEFAULT_CLIENT_OPTIONS.maxInFlight,
    maxHoldMs: options.maxBatchHoldMs ?? DEFAULT_BATCH_LOADER_OPTIONS.maxHoldMs,
  };
  const loader = createBatchLoader(transport, {
    ...loaderOptions,
    router: options.budget?.attach(transport),
  });
  // Whole-request failures were already retried by the transport; here only a failed slot is retried, alone.
  const slotPolicy: RetryPolicy = { ...retry, isRetriable: (e) => isSlotError(e) && retry.isRetriable(e) };

  const windows: CacheWindowsByOperation = {
    ...DEFAULT_CACHE_WINDOWS,
    ...(options.cache ? options.cache.windows : {}),
  };
  const cache = createClientCache(options);

  function call(
    procedure: string,
    input: Record<string, unknown>,
    callOptions: CallOptions = {},
  ): Promise<unknown> {
    const signal = callOptions.signal;
    if (callsInFlight++ === 0) counters.rounds++;
    const done = (): void => {
      callsInFlight--;
    };
    const pending = withRetry(() => loader.load(procedure, input, signal), slotPolicy, { signal });
    pending.then(done, done);
    return pending;
  }

  async function read<T>(
    procedure: string,
    input: Record<string, unknown>,
    model: ModelDef | undefined,
    callOptions: CallOptions = {},
  ): Promise<T> {
    const fetchChecked = async (): Promise<T> => {
      const data = await call(procedure, input, callOptions);
      if (model) assertRecordLike(model, data, procedure);
      return data as T;
    };
    const w = windows[procedure];
    if (!cache || !w) return fetchChecked();
    return cache.get(`${procedure}:${JSON.stringify(input)}`, w, fetchChecked);
  }

  async function fetchPage<T>(
    listing: Listing,
    request: PageRequest,
    pageOptions: FetchPageOptions = {},
  ): Promise<CursorPage<T>> {
    const data = await call(listing.procedure, pageInput(listing, request), { signal: pageOptions.signal });
    const page = checkEnvelope(listing.procedure, data);
    if ((pageOptions.onInvalidItem ?? 'throw') === 'throw') {
      const model = listingModel(listing);
      page.items.forEach((item, i) => assertRecordLike(model, item, listing.procedure, `items[${i}]`));
    }
    return page as CursorPage<T>;
  }

  const maxInFlight = options.maxInFlight ?? DEFAULT_CLIENT_OPTIONS.maxInFlight;
  const budgetBinds = (): boolean => limiterBinds(limiter, maxInFlight);
  const core: ClientCore = { fetchPage, cursorFormat, budgetBinds };
  const invalidateCache = async (): Promise<void> => {
    await cache?.clear();
  };
  const client = {
    fetchPage,
    cursorFormat,
    budgetBinds,
    call,
    read,
    invalidateCache,
    stats: (): ClientStats => ({ ...counters, cache: cache?.stats(), rateLimit: limiter.state() }),
    idle: async () => {
      await cache?.idle();
    },
  } as Client;
  Object.assign(client, createResources({ core, read, invalidateCache }));
  return client;
}
