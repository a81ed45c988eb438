/**
 * Schema drift (issue 35): the pure tracker folding a page's unknown fields and wrong-typed values into bounded
 * counts, the Redis store keeping them per resource, and what would absorb a drifted path into the
 * catalogue (the schema contracts are a setting: `config/schema-contract.ts`). Imports only the foundations.
 */
export {
  createDriftTracker,
  mergeDriftRecord,
  jsonTypeOf,
  normalizeDriftPath,
  dominantType,
  DRIFT_KINDS,
  DEFAULT_DRIFT_TRACKER_OPTIONS,
} from './drift-tracker.js';
export type {
  DriftKind,
  JsonType,
  DriftTracker,
  DriftTrackerOptions,
  PageDrift,
  PageDriftEntry,
  DriftRecord,
} from './drift-tracker.js';
export { createRedisDriftStore, driftKey, DEFAULT_REDIS_DRIFT_STORE_OPTIONS } from './redis-drift-store.js';
export type { DriftStore, RedisDriftStoreOptions, ResourceDrift } from './redis-drift-store.js';
export {
  createBufferedDriftStore,
  DEFAULT_BUFFERED_DRIFT_STORE_OPTIONS,
} from './buffered-drift-store.js';
export type { BufferedDriftStore, BufferedDriftStoreOptions } from './buffered-drift-store.js';
export { formatDriftRecord, formatDriftTypes } from './format-drift.js';
export { proposeAbsorption } from './absorb-drift.js';
export { createQuietFields, DEFAULT_QUIET_FIELDS_OPTIONS } from './quiet-fields.js';
export type { QuietFields, QuietFieldsOptions } from './quiet-fields.js';
export type { DriftAbsorption, AbsorbedKind } from './absorb-drift.js';
