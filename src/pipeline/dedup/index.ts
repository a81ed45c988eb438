/**
 * Dedup: the Redis seen-set that keeps a record from being published twice, and the pending-marks protocol that keeps
 * it exact across the crash window of exactly-once (transactional) delivery.
 */
export {
  createDedupStore,
  createMemorySeenSet,
  dedupKey,
  hasDedupId,
  seenEntry,
  nextVersion,
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
export {
  createPendingMarks,
  pageCommitted,
  pageKeyOf,
  parsePageKey,
  DEFAULT_PENDING_MARKS_OPTIONS,
} from './pending-marks.js';
export type {
  PendingMarks,
  PendingMarksOptions,
  PendingMarksBackend,
  PendingPage,
  PageClaim,
  PageClaimOptions,
  ResolveForeignPage,
  LockState,
  PageKeyParts,
} from './pending-marks.js';
export { createRedisPendingMarks } from './redis-pending-marks.js';
export { createRunRegistry } from './lone-runs.js';
export type { RegisteredRun, RunRegistration, RunRegistry, RunRegistryOptions } from './lone-runs.js';
export { sweepOrphanedLocks } from './lock-sweep.js';
export type { LockSweepOptions, LockSweepReport } from './lock-sweep.js';
/** EVALSHA with the script's digest, EVAL once when Redis does not know it yet (the pipeline's scripts use it). */
export { scriptRunner } from './internal/seen-set-lua.js';
export { createMemoryPendingMarks } from './memory-pending-marks.js';
export type { MemoryPendingMarks, MemoryPendingMarksOptions } from './memory-pending-marks.js';
