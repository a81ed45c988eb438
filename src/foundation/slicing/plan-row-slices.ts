/**
 * Planning slices from what probing saw, row by row: where the probe pages read a stretch to its start, every row's
 * time is known and the cuts fall exactly between rows, so each slice holds at most `rowsPerSlice` rows and ends
 * with ONE page (a page of `rowsPerSlice + 1` rows also shows the row below the slice, which is what ends a read).
 * Stretches the probe could only estimate are cut evenly at their estimated rate. This is how a pipeline run
 * planned for rounds gets slices whose first pages are all the pages there are.
 */
import { cutRange } from './cut-range.js';
import { checkRange, positiveInt, type TimeRange } from './time-range.js';

/** What probing learned about one stretch `[start, end)` of a range. */
export interface ProbedStretch {
  start: number;
  end: number;
  /** Every row's sort time in the stretch (the probe read it to its start). Absent: only `rows` is estimated. */
  times?: readonly number[] | undefined;
  /** Rows in the stretch: `times.length` when known, else the probe's estimate. */
  rows: number;
}

export interface PlanRowSlicesOptions {
  /** Most rows of one slice where every row's time is known (a page holds this plus the row below). */
  rowsPerSlice: number;
  /** Rows of one slice over an estimated stretch (estimates err: less than a page). @default rowsPerSlice */
  rowsPerEstimatedSlice?: number | undefined;
  /** Upper bound on the number of slices (a dense range raises the rows per slice instead). @default 1000 */
  maxSlices?: number | undefined;
  /** Every cut a multiple of this (1000 for a v1 upstream, whose rows order by whole second). @default 1 */
  alignMs?: number | undefined;
}

export const DEFAULT_PLAN_ROW_SLICES_OPTIONS = { maxSlices: 1000, alignMs: 1 } as const;

/**
 * Plans the slices of `range` from probed stretches (they may overlap the range's edges or leave gaps: a gap holds
 * no row as far as the probe knows). Newest first. The slices partition the range exactly whatever the input; only
 * how many rows each holds depends on the probe being right. Rows of one time unit (one ms, one second with
 * `alignMs` 1000) are never cut apart, so a same-millisecond burst larger than a page is one slice of several pages.
 * @throws ConfigError for an empty or non-integer range or a non-positive option.
 */
export function planRowSlices(
  range: TimeRange,
  stretches: readonly ProbedStretch[],
  options: PlanRowSlicesOptions,
): TimeRange[] {
  checkRange(range);
  const align = positiveInt('alignMs', options.alignMs ?? DEFAULT_PLAN_ROW_SLICES_OPTIONS.alignMs);
  const maxSlices = positiveInt('maxSlices', options.maxSlices ?? DEFAULT_PLAN_ROW_SLICES_OPTIONS.maxSlices);
  positiveInt('rowsPerSlice', options.rowsPerSlice);
  positiveInt('rowsPerEstimatedSlice', options.rowsPerEstimatedSlice ?? options.rowsPerSlice);
  const total = stretches.reduce((sum, s) => sum + Math.max(0, s.rows), 0);
  // Never more slices than allowed: a dense range raises the rows per slice instead.
  const floor = Math.ceil(total / maxSlices);
  const perKnown = Math.max(options.rowsPerSlice, floor);
  const perEstimated = Math.max(options.rowsPerEstimatedSlice ?? options.rowsPerSlice, floor);

  const cuts: number[] = [];
  let last = range.end;
  // Rows since the last cut, counted in "slices": known rows weigh 1/perKnown, estimated ones 1/perEstimated.
  let acc = 0;
  const cutAt = (t: number): boolean => {
    const c = Math.floor(t / align) * align;
    if (c >= last || c <= range.start) return false;
    cuts.push(c);
    last = c;
    return true;
  };
  // Walk newest first, the order slices are read in.
  for (const s of [...stretches].sort((a, b) => b.start - a.start)) {
    const lo = Math.max(s.start, range.start);
    const hi = Math.min(s.end, last);
    if (!(hi > lo)) continue;
    if (s.times !== undefined) {
      // Rows per time unit, newest first (a unit is never cut apart).
      const units = new Map<number, number>();
      for (const t of s.times) {
        if (!(t >= lo && t < hi)) continue;
        const unit = Math.floor(t / align) * align;
        units.set(unit, (units.get(unit) ?? 0) + 1);
      }
      for (const [unit, count] of [...units].sort((a, b) => b[0] - a[0])) {
        const weight = count / perKnown;
        // Cut right above this unit when it would overfill the slice being planned.
        if (acc > 0 && acc + weight > 1 + 1e-9 && cutAt(unit + align)) acc = 0;
        acc += weight;
      }
      continue;
    }
    // An estimate: rows uniform over the stretch, cut wherever another slice's worth is reached.
    let remaining = Math.max(0, s.rows) / perEstimated;
    let top = hi;
    while (acc + remaining > 1 + 1e-9) {
      const need = 1 - acc;
      const cut = top - ((top - lo) * need) / remaining;
      remaining -= need;
      top = cut;
      acc = 0;
      cutAt(cut);
    }
    acc += remaining;
  }
  return cutRange(range, cuts).sort((a, b) => b.start - a.start);
}

/**
 * The rows probing puts in `range`: every known time inside it, and an estimated stretch's rows in proportion to its
 * overlap (the probe saw them spread evenly over it).
 */
export function rowsWithin(range: TimeRange, stretches: readonly ProbedStretch[]): number {
  let rows = 0;
  for (const s of stretches) {
    const start = Math.max(s.start, range.start);
    const end = Math.min(s.end, range.end);
    if (end <= start) continue;
    if (s.times !== undefined) rows += s.times.filter((t) => t >= range.start && t < range.end).length;
    else rows += (Math.max(0, s.rows) * (end - start)) / Math.max(1, s.end - s.start);
  }
  return rows;
}
