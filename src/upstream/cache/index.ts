/** Cache: stale-while-revalidate single reads over a narrow store interface (memory LRU, Redis). */
export { createSwrCache, DEFAULT_SWR_CACHE_OPTIONS } from './swr-cache.js';
export type { SwrCache, SwrCacheOptions, SwrCacheStats } from './swr-cache.js';
export { createMemoryStore, DEFAULT_MEMORY_STORE_OPTIONS } from './memory-store.js';
export type { MemoryStoreOptions } from './memory-store.js';
export { createRedisStore, DEFAULT_REDIS_STORE_OPTIONS } from './redis-store.js';
export type { RedisStoreOptions } from './redis-store.js';
export { freshnessOf, makeEntry, mayReplace } from './freshness.js';
export type { CacheWindows, Freshness } from './freshness.js';
export type { CacheEntry, CacheStore } from './cache-store.js';
