import type { SliceJobData } from '../planner/job-types.js';
import type { SplitRule } from '../slicing/index.js';

/**
 * A per-user walk whose unread past is more than this many times wider than the span it read splits at quadrupling
 * depths (`splitGeometric`), not evenly: a user's rows crowd into the time since the user joined, so an even cut of
 * its history from 1970 leaves nearly every row in the reader's own piece (issue 11's acceptance run: a busy user's
 * walk split into 7 empty 11-month pieces and read its 12 remaining pages alone, one POST each, after every other
 * slice had finished). The feed's slices are cut evenly (their rows do not thin out with depth).
 */
export const USER_WALK_GEOMETRIC_ABOVE = 16;

/** How a running slice splits its unread rest, in both delivery paths. */
export function sliceSplitRule(
  data: Pick<SliceJobData, 'filters'>,
  o: { targetRows: number; splitFactor: number; maxSplitParts: number },
): SplitRule {
  return {
    rowsPerPart: o.targetRows,
    splitAbove: o.targetRows * o.splitFactor,
    maxParts: o.maxSplitParts,
    ...(data.filters['userId'] === undefined ? {} : { geometricAbove: USER_WALK_GEOMETRIC_ABOVE }),
  };
}
