/** Dedup: the Redis seen-set that keeps a record from being published twice. */
export {
  createDedupStore,
  createRedisSeenSet,
  createMemorySeenSet,
  dedupKey,
  DEFAULT_DEDUP_STORE_OPTIONS,
} from './dedup-store.js';
export type {
  DedupStore,
  DedupStoreOptions,
  DedupRecord,
  Claim,
  ClaimOptions,
  SeenSetBackend,
} from './dedup-store.js';
