/**
 * Planner: density probes, whole backfill runs, and the job contract a run is made of (job payloads, queue and
 * job names, deterministic job ids: owned by `pipeline/contract/`, re-exported here). The slicing itself (exact `[start, end)` slices, the split
 * of a dense slice) is the shared core in `src/foundation/slicing/`, re-exported here for the planner's callers.
 */
export {
  cutRange,
  splitEvenly,
  planSlices,
  splitRemaining,
  DEFAULT_PLAN_SLICES_OPTIONS,
} from '../../foundation/slicing/index.js';
export type { TimeRange, DensityEstimate, PlanSlicesOptions } from '../../foundation/slicing/index.js';
export {
  probeDensity,
  findEarliest,
  probeRows,
  DEFAULT_PROBE_DENSITY_OPTIONS,
  DEFAULT_PROBE_ROWS_OPTIONS,
} from './probe-density.js';
export type {
  ProbePage,
  ProbeDensityOptions,
  FindEarliestOptions,
  ProbeRowsOptions,
  ProbedRows,
} from './probe-density.js';
export {
  planBackfill,
  type EarlySlices,
  parseFilters,
  parseResources,
  UNFILTERED_TRANSACTION_WINDOW_MS,
  AUTO_PARTITION_ABOVE_ROWS,
  KNOWN_TRANSACTION_TYPES,
  DEFAULT_PLAN_BACKFILL_OPTIONS,
} from './plan-backfill.js';
export type {
  PlannerSource,
  BackfillRequest,
  PlanBackfillOptions,
  PlannedRun,
  UserListing,
} from './plan-backfill.js';
// The pipeline's job contract (owned by `pipeline/contract/`), re-exported for the planner's callers: typed job
// payloads, queue and job names, deterministic job ids.
export {
  QUEUE_NAMES,
  JOB_NAMES,
  DEFAULT_QUEUE_PREFIX,
  runJobId,
  sliceJobId,
  safeIdPart,
} from '../contract/queue-names.js';
export { createQueuedSlices } from './queued-slices.js';
export { proveCoverage } from './prove-coverage.js';
export type { ProofRow, CoverageCounts, CoverageProof } from './prove-coverage.js';
export type { QueuedSlicesOptions } from './queued-slices.js';
export type {
  RunJobData,
  SliceJobData,
  SliceResult,
  RunResult,
  RunCounterValues,
  WalkFilters,
  PartitionSummary,
} from '../contract/job-types.js';
export { provePartition, summarizePartition } from './prove-partition.js';
export type { PartitionProof, ProvePartitionOptions, ReadListingPages, WalkRow } from './prove-partition.js';
export {
  planPartitionWalks,
  partitionWalkFilters,
  DEFAULT_PLAN_PARTITION_WALKS_OPTIONS,
  UNSPLIT_DEPTH,
} from './plan-partition.js';
export type { PartitionWalk, PlannedSlice, PlanPartitionWalksOptions } from './plan-partition.js';
export { readRangeRows, DEFAULT_READ_RANGE_ROWS_OPTIONS } from './read-range-rows.js';
export type { RangePage, RangeRows, ReadRangePages, ReadRangeRowsOptions } from './read-range-rows.js';
export { estimatePlanCost, formatPlanCost, WORKER_CPU_MICROS_PER_RECORD } from './plan-cost.js';
export { sampleWalkPages, walkPages, spreadSample } from './sample-walk-pages.js';
export type { WalkPageSample, SampleWalkPagesOptions } from './sample-walk-pages.js';
export type { PlanCost, PlanCostOptions, ResourceCost } from './plan-cost.js';
export { parseKeyTime } from './run-key-time.js';
export type { RunKeyTime } from './run-key-time.js';
