/** Exact partitions of a finite range: cutting it at points, or into parts of (nearly) equal width. */
import { checkRange, positiveInt, type TimeRange } from './time-range.js';

/**
 * Cuts `range` at the given points. Cuts outside `(start, end)` and repeats are ignored, so the result always
 * partitions the range exactly (oldest first).
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
