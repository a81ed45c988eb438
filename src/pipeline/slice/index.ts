/**
 * Slice: the processing of one slice (`processSlice`, pure over small interfaces), its pages and its end-of-slice
 * recovery, and user discovery. No BullMQ here: the queue wiring is `pipeline/queue/`. The job payloads, queue names
 * and job ids are the contract's (`pipeline/contract/`); the publish path is `pipeline/publish/`.
 */
export { processSlice } from './process-slice.js';
export { isRetriableSliceError, DEFAULT_PROCESS_SLICE_OPTIONS, pageLineage } from './slice-contract.js';
export type {
  SlicePage,
  SliceSource,
  CounterSink,
  SliceJobHandle,
  ProcessSliceOptions,
  ProcessSliceDeps,
  ExactlyOnceDelivery,
} from './slice-contract.js';
export {
  createRedisUserDirectory,
  counterparties,
  discoversUsers,
  userWalk,
  withUserDiscovery,
  COUNTERPARTY_FIELDS,
} from './user-discovery.js';
export type { UserDirectory } from './user-discovery.js';
export { USER_WALK_GEOMETRIC_ABOVE } from './slice-split-rule.js';
