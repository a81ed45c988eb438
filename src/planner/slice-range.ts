/**
 * Pure slice planning: time ranges are half-open `[start, end)` in epoch milliseconds of the listing's sort time.
 * Every function here returns slices that partition its input exactly (no gap, no overlap), which is what lets
 * slices run in parallel and still read every row once.
 */
import { ConfigError } from '../errors.js';

/** A half-open time range `[start, end)` in epoch milliseconds. */
export interface TimeRange {
  start: number;
  end: number;
}

/**
 * Estimated rows per bucket: `edges` ascending (length n+1, first = range start, last = range end), `rows[i]` the
 * estimated row count in `[edges[i], edges[i+1])`.
 */
export interface DensityEstimate {
  edges: number[];
  rows: number[];
}

export interface PlanSlicesOptions {
  /** Rows one slice should hold (work is sized in rows, not days). @default 5000 */
  targetRows?: number;
  /** Upper bound on the number of slices. @default 1000 */
  maxSlices?: number;
  /** No slice is narrower than this (ms), except where the range itself is narrower. @default 1 */
  minSliceMs?: number;
}

export const DEFAULT_PLAN_SLICES_OPTIONS: Required<PlanSlicesOptions> = {
  targetRows: 5000,
  maxSlices: 1000,
  minSliceMs: 1,
};

function checkRange(range: TimeRange, name = 'range'): void {
  if (!Number.isSafeInteger(range.start) || !Number.isSafeInteger(range.end) || range.start >= range.end) {
    throw new ConfigError(`${name} must be integer ms with start < end, got [${range.start}, ${range.end})`);
  }
}

function positiveInt(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new ConfigError(`option ${name} must be a positive integer, got ${String(value)}`);
  }
  return value;
}

/**
 * Cuts `range` at the given points. Cuts outside `(start, end)` and repeats are ignored, so the result always
 * partitions the range exactly.
 */
export function cutRange(range: TimeRange, cuts: readonly number[]): TimeRange[] {
  checkRange(range);
  const points = [...new Set(cuts.map((c) => Math.floor(c)))]
    .filter((c) => c > range.start && c < range.end)
    .sort((a, b) => a - b);
  const out: TimeRange[] = [];
  let start = range.start;
  for (const p of points) {
    out.push({ start, end: p });
    start = p;
  }
  out.push({ start, end: range.end });
  return out;
}

/** Splits `range` into `parts` slices of (nearly) equal width; fewer when the range is narrower than `parts` ms. */
export function splitEvenly(range: TimeRange, parts: number): TimeRange[] {
  checkRange(range);
  positiveInt('parts', parts);
  const width = range.end - range.start;
  const n = Math.min(parts, width);
  const cuts: number[] = [];
  for (let i = 1; i < n; i++) cuts.push(range.start + Math.floor((width * i) / n));
  return cutRange(range, cuts);
}

/**
 * Plans the slices of `range` from a density estimate: cuts wherever the cumulative estimated rows reach another
 * `targetRows` (rows are assumed uniform inside one bucket). Empty stretches end up inside a neighbouring slice,
 * so a sparse history costs few slices.
 */
export function planSlices(
  range: TimeRange,
  density: DensityEstimate,
  options: PlanSlicesOptions = {},
): TimeRange[] {
  checkRange(range);
  const o = { ...DEFAULT_PLAN_SLICES_OPTIONS, ...options };
  positiveInt('targetRows', o.targetRows);
  positiveInt('maxSlices', o.maxSlices);
  positiveInt('minSliceMs', o.minSliceMs);
  const { edges, rows } = density;
  if (edges.length !== rows.length + 1) {
    throw new ConfigError(
      `density.edges must have one more entry than density.rows (${edges.length} vs ${rows.length})`,
    );
  }
  const total = rows.reduce((a, b) => a + Math.max(0, b), 0);
  // Never more slices than asked, so a dense range raises the rows per slice instead.
  const perSlice = Math.max(o.targetRows, Math.ceil(total / o.maxSlices));
  const cuts: number[] = [];
  // Walk from the newest end, the order in which slices are read.
  let acc = 0;
  let last = range.end;
  for (let i = rows.length - 1; i >= 0; i--) {
    const lo = Math.max(edges[i] ?? range.start, range.start);
    const hi = Math.min(edges[i + 1] ?? range.end, range.end);
    const r = Math.max(0, rows[i] ?? 0);
    if (hi <= lo || r === 0) continue;
    let remaining = r;
    let top = hi;
    // Strictly more than one slice's worth left: never cut at the bucket's bottom edge (an empty tail slice).
    while (acc + remaining > perSlice) {
      const need = perSlice - acc;
      const cut = Math.floor(top - ((top - lo) * need) / remaining);
      remaining -= need;
      top = cut;
      acc = 0;
      if (last - cut >= o.minSliceMs && cut - range.start >= o.minSliceMs) {
        cuts.push(cut);
        last = cut;
      }
    }
    acc += remaining;
  }
  return cutRange(range, cuts).sort((a, b) => b.start - a.start);
}

/**
 * The split of a slice that is being read: rows `[start, upper)` are still to read (`upper` = the time of the
 * checkpoint cursor). Returns the part the running slice keeps (`keep`, the newer end, read on from its cursor)
 * and the children that take the older part, so that keep + children = `[start, upper]` exactly.
 * Returns `null` when the remaining range is too narrow to split.
 */
export function splitRemaining(
  slice: TimeRange,
  upper: number,
  parts: number,
): { keepStart: number; children: TimeRange[] } | null {
  checkRange(slice, 'slice');
  positiveInt('parts', parts);
  // The running slice keeps [keepStart, ...) up to its cursor, which may hold rows at exactly `upper`.
  const top = Math.min(upper, slice.end);
  if (top - slice.start < 2 || parts < 2) return null;
  const pieces = splitEvenly({ start: slice.start, end: top }, parts);
  const keep = pieces[pieces.length - 1];
  if (keep === undefined || pieces.length < 2) return null;
  return { keepStart: keep.start, children: pieces.slice(0, -1) };
}
