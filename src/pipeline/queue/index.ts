/**
 * Queue: the BullMQ shell of the pipeline. Owns the flow (a run and its slices), the workers, run counters and the
 * Redis connection. The processing of one slice is `pipeline/slice/`; the runtime that wires the real parts together
 * is `app/`.
 */
export { startPipelineWorkers, DEFAULT_PIPELINE_WORKER_OPTIONS } from './pipeline-worker.js';
export type { PipelineWorkerOptions, PipelineWorkerDeps, PipelineWorkers } from './pipeline-worker.js';
export type { ConcurrencyChange } from './slot-sizing.js';
export { enqueueRun, getRunStatus, waitForRun, sliceJobOptions } from './backfill-flow.js';
export type { EnqueueRunOptions, RunStatus } from './backfill-flow.js';
export { enqueueOpenRun, planningHoldId, PLANNING_HOLD_MS } from './planning-hold.js';
export type { OpenRun } from './planning-hold.js';
export { createRunCounters, emptyCounters } from './run-counters.js';
export type { RunCounters, RunFigures } from './run-counters.js';
export { startBackfill } from './start-backfill.js';
export type { StartBackfillOptions } from './start-backfill.js';
export { connectRedis, redisTlsOptions } from './connect-redis.js';
export { createRangeGaps, runCoversGap } from './range-gaps.js';
export type { RangeGap, RangeGaps } from './range-gaps.js';
export { connectWithRetry, waitForStop, drainWithin } from './worker-lifecycle.js';
export { createRedisSliceOwners } from './redis-slice-owners.js';
export { leaseProducerMember } from './producer-member-lease.js';
