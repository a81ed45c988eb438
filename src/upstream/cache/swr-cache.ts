/**
 * Stale-while-revalidate cache over one or more stores (checked in order, e.g. memory then Redis; written to all).
 * - fresh: served without a fetch;
 * - stale: served at once, and revalidated in the background by ONE fetch per key: in process (a map of in-flight
 *   fetches) and across processes (the last store's lock, `SET NX PX` in Redis); a failed revalidation keeps
 *   serving the stale value until it expires;
 * - expired or missing: fetched (callers of the same key share the fetch; a process that sees another holding the
 *   lock waits briefly for its result instead of fetching too).
 * An older fetch never overwrites a newer entry (stores compare `fetchedAt`), and `clear()` drops every entry of
 * every store; fetches started before a clear do not write back.
 */
import { GamedataError } from '../../foundation/errors/index.js';
import type { CacheEntry, CacheStore } from './cache-store.js';
import type { CacheWindows } from './freshness.js';
import { freshnessOf, makeEntry } from './freshness.js';
import { sleep } from '../../foundation/retry/index.js';

export interface SwrCacheOptions {
  /** Stores, fastest first. The last one holds the cross-process lock. */
  stores: readonly CacheStore[];
  /** How long a revalidation lock is held at most, ms. @default 10 000 */
  lockTtlMs?: number;
  /** How long a miss waits for another process's fetch of the same key, ms. @default 2 000 */
  peerWaitMs?: number;
  /** Injected clock. @default Date.now */
  now?: () => number;
  /** Called with failures that do not reach a caller (background revalidation, store errors). */
  onError?: (error: GamedataError, key: string) => void;
}

export const DEFAULT_SWR_CACHE_OPTIONS = { lockTtlMs: 10_000, peerWaitMs: 2_000 } as const;

export interface SwrCacheStats {
  fresh: number;
  stale: number;
  misses: number;
  fetches: number;
  revalidations: number;
  revalidationFailures: number;
}

export interface SwrCache {
  /** The value of `key`, from the cache or `fetcher` per the SWR rules. */
  get<T>(key: string, windows: CacheWindows, fetcher: () => Promise<T>): Promise<T>;
  /** Drops every entry of every store. */
  clear(): Promise<void>;
  /** Resolves when background revalidations in flight have settled (tests, shutdown). */
  idle(): Promise<void>;
  stats(): SwrCacheStats;
}

const NO_STATS: SwrCacheStats = {
  fresh: 0,
  stale: 0,
  misses: 0,
  fetches: 0,
  revalidations: 0,
  revalidationFailures: 0,
};

export function createSwrCache(options: SwrCacheOptions): SwrCache {
  if (options.stores.length === 0)
    throw new GamedataError('createSwrCache: stores must hold at least one store');
  const stores = options.stores;
  const lockStore = stores[stores.length - 1] as CacheStore;
  const now = options.now ?? Date.now;
  const lockTtlMs = options.lockTtlMs ?? DEFAULT_SWR_CACHE_OPTIONS.lockTtlMs;
  const peerWaitMs = options.peerWaitMs ?? DEFAULT_SWR_CACHE_OPTIONS.peerWaitMs;
  const report = (error: unknown, key: string): void => options.onError?.(GamedataError.from(error), key);
  const stats: SwrCacheStats = { ...NO_STATS };
  const inFlight = new Map<string, Promise<unknown>>();
  const revalidating = new Set<string>();
  const background = new Set<Promise<void>>();
  let generation = 0;

  const read = (key: string): Promise<CacheEntry | undefined> => readNewest(stores, key, now, report);

  async function write(key: string, entry: CacheEntry, gen: number): Promise<void> {
    if (gen !== generation) return; // cleared meanwhile: the value may predate the invalidation
    for (const store of stores) await store.set(key, entry).catch((e: unknown) => report(e, key));
  }

  async function fetchAndStore<T>(
    key: string,
    windows: CacheWindows,
    fetcher: () => Promise<T>,
    gen: number,
  ): Promise<T> {
    const fetchedAt = now();
    stats.fetches++;
    const value = await fetcher();
    await write(key, makeEntry(value, fetchedAt, windows), gen);
    return value;
  }

  const withLock = <T>(key: string, fn: (token: string | undefined | null) => Promise<T>): Promise<T> =>
    underLock(lockStore, key, lockTtlMs, report, fn);

  function load<T>(key: string, windows: CacheWindows, fetcher: () => Promise<T>, gen: number): Promise<T> {
    return withLock(key, async (token) => {
      if (token === undefined) {
        // Another process is fetching this key: wait a little for its result.
        const entry = await waitForPeer(read, key, now, peerWaitMs);
        if (entry) return entry.value as T;
      }
      return fetchAndStore(key, windows, fetcher, gen);
    });
  }

  function revalidate<T>(key: string, windows: CacheWindows, fetcher: () => Promise<T>, gen: number): void {
    if (inFlight.has(key) || revalidating.has(key)) return;
    revalidating.add(key);
    const run = withLock(key, async (token) => {
      if (token === undefined) return; // another process revalidates it
      try {
        stats.revalidations++;
        await fetchAndStore(key, windows, fetcher, gen);
      } catch (error) {
        stats.revalidationFailures++;
        report(error, key); // the stale value keeps being served
      }
    });
    const tracked = run.finally(() => {
      revalidating.delete(key);
      background.delete(tracked);
    });
    background.add(tracked);
  }

  return {
    async get<T>(key: string, windows: CacheWindows, fetcher: () => Promise<T>): Promise<T> {
      const gen = generation;
      const entry = await read(key);
      const state = freshnessOf(entry, now());
      if (entry && state === 'fresh') {
        stats.fresh++;
        return entry.value as T;
      }
      if (entry && state === 'stale') {
        stats.stale++;
        revalidate(key, windows, fetcher, gen);
        return entry.value as T;
      }
      stats.misses++;
      return shareInFlight(inFlight, key, () => load(key, windows, fetcher, gen));
    },
    async clear() {
      generation++;
      for (const store of stores) await store.clear();
    },
    async idle() {
      while (background.size > 0) await Promise.allSettled([...background]);
    },
    stats: () => ({ ...stats }),
  };
}

/**
 * The newest unexpired entry of `key` across the stores: a fresh one ends the search, a stale one asks the slower
 * (shared) stores whether another process already revalidated it; the entry found is promoted into the faster stores.
 * A store that fails is reported and skipped.
 */
async function readNewest(
  stores: readonly CacheStore[],
  key: string,
  now: () => number,
  report: (error: unknown, key: string) => void,
): Promise<CacheEntry | undefined> {
  let best: CacheEntry | undefined;
  let bestAt = -1;
  for (let i = 0; i < stores.length; i++) {
    let entry: CacheEntry | undefined;
    try {
      entry = await stores[i]?.get(key);
    } catch (error) {
      report(error, key);
      continue;
    }
    if (!entry || freshnessOf(entry, now()) === 'expired') continue;
    if (!best || entry.fetchedAt > best.fetchedAt) {
      best = entry;
      bestAt = i;
    }
    // A fresh entry ends the search; a stale one asks the slower (shared) stores whether another process
    // already revalidated it.
    if (freshnessOf(entry, now()) === 'fresh') break;
  }
  // Promote into the faster stores.
  if (best)
    for (let j = 0; j < bestAt; j++) await stores[j]?.set(key, best).catch((e: unknown) => report(e, key));
  return best;
}

/** The revalidation lock of `key`: its token, undefined when another process holds it, null when the store fails. */
async function tryLock(
  lockStore: CacheStore,
  key: string,
  ttlMs: number,
  report: (error: unknown, key: string) => void,
): Promise<string | undefined | null> {
  try {
    return await lockStore.tryLock(key, ttlMs);
  } catch (error) {
    report(error, key);
    return null; // the lock store is down: behave as a single process
  }
}

/**
 * Runs `fn` with the revalidation lock of `key` as {@link tryLock} took it (undefined: another process holds it),
 * then releases the lock if it was taken.
 */
async function underLock<T>(
  lockStore: CacheStore,
  key: string,
  ttlMs: number,
  report: (error: unknown, key: string) => void,
  fn: (token: string | undefined | null) => Promise<T>,
): Promise<T> {
  const token = await tryLock(lockStore, key, ttlMs, report);
  try {
    return await fn(token);
  } finally {
    if (token) await lockStore.unlock(key, token).catch((e: unknown) => report(e, key));
  }
}

/** The entry another process's fetch of `key` writes, looked for every 25 ms for `waitMs`; undefined if none comes. */
async function waitForPeer(
  read: (key: string) => Promise<CacheEntry | undefined>,
  key: string,
  now: () => number,
  waitMs: number,
): Promise<CacheEntry | undefined> {
  const deadline = now() + waitMs;
  while (now() < deadline) {
    await sleep(25);
    const entry = await read(key);
    if (entry) return entry;
  }
  return undefined;
}

/** One fetch of a key at a time in this process: callers of a key being fetched share its fetch. */
function shareInFlight<T>(
  inFlight: Map<string, Promise<unknown>>,
  key: string,
  start: () => Promise<T>,
): Promise<T> {
  const shared = inFlight.get(key);
  if (shared) return shared as Promise<T>;
  const p = start().finally(() => {
    if (inFlight.get(key) === p) inFlight.delete(key);
  });
  inFlight.set(key, p);
  return p;
}
