/** A bounded in-memory store (lru-cache). Locks are process-local. */
import { randomUUID } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { CacheEntry, CacheStore } from './cache-store.js';
import { mayReplace } from './freshness.js';

export interface MemoryStoreOptions {
  /** Most entries kept (least recently used evicted first). @default 10 000 */
  max?: number;
  /** Injected clock for lock expiry. @default Date.now */
  now?: () => number;
}

export const DEFAULT_MEMORY_STORE_OPTIONS = { max: 10_000 } as const;

export function createMemoryStore(options: MemoryStoreOptions = {}): CacheStore {
  const now = options.now ?? Date.now;
  const lru = new LRUCache<string, CacheEntry>({ max: options.max ?? DEFAULT_MEMORY_STORE_OPTIONS.max });
  const locks = new Map<string, { token: string; until: number }>();
  // Synchronous underneath; the store interface is async because Redis is.
  return {
    get: (key) => Promise.resolve(lru.get(key)),
    set(key, entry) {
      if (!mayReplace(lru.get(key), entry)) return Promise.resolve(false);
      lru.set(key, entry);
      return Promise.resolve(true);
    },
    delete(key) {
      lru.delete(key);
      return Promise.resolve();
    },
    clear() {
      lru.clear();
      return Promise.resolve();
    },
    tryLock(key, ttlMs) {
      const held = locks.get(key);
      if (held && held.until > now()) return Promise.resolve(undefined);
      const token = randomUUID();
      locks.set(key, { token, until: now() + ttlMs });
      return Promise.resolve(token);
    },
    unlock(key, token) {
      if (locks.get(key)?.token === token) locks.delete(key);
      return Promise.resolve();
    },
  };
}
