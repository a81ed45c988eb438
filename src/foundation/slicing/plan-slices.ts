/**
 * Planning the slices of a range before reading: from a density estimate (the pipeline sizes slices in rows) or on
 * a fixed time grid (the client's `collectAll`, which learns density while reading and splits then).
 */
import { ConfigError } from '../errors/index.js';
import { cutRange } from './cut-range.js';
import { checkRange, positiveInt, type TimeRange } from './time-range.js';

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

/**
 * Plans the slices of `range` from a density estimate: cuts wherever the cumulative estimated rows reach another
 * `targetRows` (rows are assumed uniform inside one bucket). Empty stretches end up inside a neighbouring slice,
 * so a sparse history costs few slices. Newest first (the order slices are read in).
 * @throws ConfigError for an empty range, a bad option or a density whose edges and rows do not match.
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

/** Most slices one grid may plan (a guard against a typo'd tiny slice width). */
export const MAX_PLANNED_SLICES = 1_000_000;

/**
 * Plans the slices of `[oldest, top)` on a time grid, newest first: inner edges sit on `anchor - k*sliceMs`
 * (the top slice reaches up to `top`, which may be `Infinity`: the feed's head). `alignMs` (1000 for a v1
 * upstream) keeps every inner edge on a multiple, since v1 bounds have second precision.
 * @throws ConfigError naming `timeSliceDays` when the grid would exceed MAX_PLANNED_SLICES.
 */
export function planSliceEdges(
  oldest: number,
  top: number,
  anchor: number,
  sliceMs: number,
  alignMs = 1,
): TimeRange[] {
  const step = Math.max(alignMs, Math.round(sliceMs / alignMs) * alignMs);
  const a = Math.floor(anchor / alignMs) * alignMs;
  const slices: TimeRange[] = [];
  let end = top;
  let edge = a - step;
  for (;;) {
    const start = edge <= oldest ? oldest : edge;
    slices.push({ start, end });
    if (start === oldest) break;
    if (slices.length > MAX_PLANNED_SLICES)
      throw new ConfigError(`timeSliceDays too small: more than ${MAX_PLANNED_SLICES} slices`, [
        'timeSliceDays',
      ]);
    end = start;
    edge = start - step;
  }
  return slices;
}

/**
 * Plans the first round of a finite range `[oldest, anchor)` (the top slice reaches on to `top`, which may be
 * `Infinity`): at most `parts` slices of equal width (every inner edge a multiple of `alignMs`), newest first, so
 * that one batched POST of `parts` first pages reads all of them at once. Each page both returns rows and measures
 * the density where it lands, which is what sizes the splits of the next round.
 * @throws ConfigError for a non-finite `oldest`, `oldest >= min(top, anchor)` or a non-positive `parts`.
 */
export function planFirstRound(
  oldest: number,
  top: number,
  anchor: number,
  parts: number,
  alignMs = 1,
): TimeRange[] {
  positiveInt('parts', parts);
  positiveInt('alignMs', alignMs);
  const bottom = Math.min(top, anchor);
  if (!Number.isFinite(oldest) || !(oldest < bottom))
    throw new ConfigError(`first round needs a finite range, got [${oldest}, ${bottom})`);
  const width = Math.floor(anchor / alignMs) * alignMs - oldest;
  const step = Math.max(alignMs, Math.ceil(width / parts / alignMs) * alignMs);
  return planSliceEdges(oldest, top, anchor, step, alignMs);
}
