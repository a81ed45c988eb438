/** Jobs: the BullMQ flow (run + slices), the slice processing and the workers. */
export {
  QUEUE_NAMES,
  JOB_NAMES,
  DEFAULT_QUEUE_PREFIX,
  runJobId,
  sliceJobId,
  safeIdPart,
} from './queue-names.js';
export type { RunJobData, SliceJobData, SliceResult, RunResult, RunCounterValues } from './job-types.js';
export {
  processSlice,
  isRetriableSliceError,
  SliceInterruptedError,
  DEFAULT_PROCESS_SLICE_OPTIONS,
} from './process-slice.js';
export type {
  SlicePage,
  SliceSource,
  PagePublisher,
  Lineage,
  CounterSink,
  SliceJobHandle,
  ProcessSliceOptions,
  ProcessSliceDeps,
} from './process-slice.js';
export { startPipelineWorkers, DEFAULT_PIPELINE_WORKER_OPTIONS } from './pipeline-worker.js';
export type { PipelineWorkerOptions, PipelineWorkerDeps, PipelineWorkers } from './pipeline-worker.js';
export { enqueueRun, getRunStatus, waitForRun, sliceJobOptions } from './backfill-flow.js';
export type { EnqueueRunOptions, RunStatus } from './backfill-flow.js';
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
  readPipelineSettings,
  connectRedis,
  createClientSliceSource,
  createClientPlannerSource,
  createPipelineRuntime,
  PIPELINE_CLIENT_DEFAULTS,
} from './pipeline-runtime.js';
export type { PipelineSettings, PipelineRuntime, PipelineRuntimeOptions } from './pipeline-runtime.js';
