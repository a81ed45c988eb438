/** Dedup: the Redis seen-set that keeps a record from being published twice. */
export {
  createDedupStore,
  createMemorySeenSet,
  dedupKey,
  seenEntry,
  DEFAULT_DEDUP_STORE_OPTIONS,
} from './dedup-store.js';
export type {
  DedupStore,
  DedupStoreOptions,
  DedupRecord,
  Claim,
  ClaimOptions,
  MemorySeenSet,
} from './dedup-store.js';
export { createRedisSeenSet, DEFAULT_REDIS_SEEN_SET_OPTIONS } from './redis-seen-set.js';
export type { SeenEntry, SeenSetBackend, RedisSeenSetOptions } from './redis-seen-set.js';
export { migrateLegacySeenSets } from './migrate-legacy-seen-sets.js';
export type { MigrateLegacyOptions, MigrateLegacyReport } from './migrate-legacy-seen-sets.js';
