/**
 * Jobs: the BullMQ shell of the pipeline. Owns the flow (a run and its slices), the processing of one slice
 * (`processSlice`, pure over small interfaces), the workers, run counters, user discovery and the runtime that
 * wires the real parts together. The job payloads, queue names and job ids are the planner's (`planner/`); the
 * publish path is `publish/`.
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
export { startPipelineWorkers, DEFAULT_PIPELINE_WORKER_OPTIONS } from './pipeline-worker.js';
export type { PipelineWorkerOptions, PipelineWorkerDeps, PipelineWorkers } from './pipeline-worker.js';
export type { ConcurrencyChange } from './slot-sizing.js';
export { enqueueRun, getRunStatus, waitForRun, sliceJobOptions } from './backfill-flow.js';
export type { EnqueueRunOptions, RunStatus } from './backfill-flow.js';
export { enqueueOpenRun, planningHoldId, PLANNING_HOLD_MS } from './planning-hold.js';
export type { OpenRun } from './planning-hold.js';
export { createRunCounters, emptyCounters } from './run-counters.js';
export type { RunCounters } from './run-counters.js';
export { startBackfill } from './start-backfill.js';
export {
  createRedisUserDirectory,
  counterparties,
  discoversUsers,
  userWalk,
  withUserDiscovery,
  COUNTERPARTY_FIELDS,
} from './user-discovery.js';
export type { UserDirectory } from './user-discovery.js';
export type { StartBackfillOptions } from './start-backfill.js';
export {
  connectRedis,
  createClientSliceSource,
  createClientPlannerSource,
  createPipelineRuntime,
  PIPELINE_CLIENT_DEFAULTS,
} from './pipeline-runtime.js';
export type { PipelineRuntime, PipelineRuntimeOptions } from './pipeline-runtime.js';
