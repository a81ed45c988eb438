/**
 * Contract: the pipeline's job contract, produced by the planner and consumed by the queue: typed job payloads,
 * queue and job names, deterministic job ids.
 */
export {
  QUEUE_NAMES,
  JOB_NAMES,
  DEFAULT_QUEUE_PREFIX,
  runJobId,
  sliceJobId,
  safeIdPart,
} from './queue-names.js';
export { RUN_ID_PATTERN, checkRunId } from './run-id.js';
export type {
  RunJobData,
  SliceJobData,
  SliceResult,
  RunResult,
  RunCounterValues,
  WalkFilters,
  PartitionSummary,
} from './job-types.js';
