/** The narrow store interface the SWR cache runs on (memory LRU, Redis, or both tiered). */

/** One cached value with its freshness windows (epoch ms). */
export interface CacheEntry<T = unknown> {
  value: T;
  /** When the fetch that produced the value started (orders concurrent writers). */
  fetchedAt: number;
  /** Until then the value is fresh and served without a fetch. */
  staleAt: number;
  /** Until then a stale value is still served (and revalidated in the background); after it, a read fetches. */
  expiresAt: number;
}

export interface CacheStore {
  get(key: string): Promise<CacheEntry | undefined>;
  /**
   * Stores the entry unless the stored one was fetched later (an older fetch never overwrites a newer entry).
   * Resolves true when written.
   */
  set(key: string, entry: CacheEntry): Promise<boolean>;
  delete(key: string): Promise<void>;
  /** Removes every entry of this store (every resource). */
  clear(): Promise<void>;
  /**
   * Takes the revalidation lock of a key for `ttlMs` (across processes for shared stores). Resolves a token when
   * taken, `undefined` when another holder has it.
   */
  tryLock(key: string, ttlMs: number): Promise<string | undefined>;
  unlock(key: string, token: string): Promise<void>;
}
