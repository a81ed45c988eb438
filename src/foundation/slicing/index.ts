/**
 * Slicing: the one pure core that cuts time into exact half-open slices `[start, end)`: planning them (on a grid or
 * from a density estimate) and splitting the unread part of a dense slice while it is read.
 *
 * It lives in its own low-level folder, below both of its users: the client (`collectAll`) and the planner and the
 * slice walk (backfill runs) import it, and it imports nothing but `src/foundation/errors/`, so no folder cycle can
 * pass through it and the client never has to import from `pipeline/`.
 */
export { checkRange, checkOpenRange, positiveInt } from './time-range.js';
export type { TimeRange } from './time-range.js';
export { cutRange, splitEvenly } from './cut-range.js';
export {
  planSlices,
  planSliceEdges,
  planFirstRound,
  DEFAULT_PLAN_SLICES_OPTIONS,
  MAX_PLANNED_SLICES,
} from './plan-slices.js';
export type { DensityEstimate, PlanSlicesOptions } from './plan-slices.js';
export { planRowSlices, rowsWithin, DEFAULT_PLAN_ROW_SLICES_OPTIONS } from './plan-row-slices.js';
export type { ProbedStretch, PlanRowSlicesOptions } from './plan-row-slices.js';
export {
  splitRemaining,
  planSplit,
  estimateRemainingRows,
  roundSplitRule,
  splitGeometric,
  MAX_ROUND_SPLIT_PARTS,
  MAX_GEOMETRIC_SPLIT_PARTS,
} from './split-remaining.js';
export type { RemainingSplit, ReadProgress, SplitRule } from './split-remaining.js';
