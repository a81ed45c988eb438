/** Planner: exact time slices sized from density probes, and whole backfill runs. */
export {
  cutRange,
  splitEvenly,
  planSlices,
  splitRemaining,
  DEFAULT_PLAN_SLICES_OPTIONS,
} from './slice-range.js';
export type { TimeRange, DensityEstimate, PlanSlicesOptions } from './slice-range.js';
export { probeDensity, findEarliest, DEFAULT_PROBE_DENSITY_OPTIONS } from './probe-density.js';
export type { ProbePage, ProbeDensityOptions, FindEarliestOptions } from './probe-density.js';
export {
  planBackfill,
  parseFilters,
  parseResources,
  UNFILTERED_TRANSACTION_WINDOW_MS,
  DEFAULT_PLAN_BACKFILL_OPTIONS,
} from './plan-backfill.js';
export type {
  PlannerSource,
  BackfillRequest,
  PlanBackfillOptions,
  PlannedRun,
  UserListing,
} from './plan-backfill.js';
