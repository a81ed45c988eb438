/**
 * Splitting a slice while it is being read: the reader has read down to `upper` (the time of its checkpoint
 * cursor), so `[start, upper]` is still to read. The reader keeps the newest part (it reads on from its cursor)
 * and the older parts become new slices. `planSplit` is the rule both readers share (the client's `collectAll`
 * and the pipeline's `processSlice`): estimate the rows left from the rows read so far, split when too many.
 */
import { ConfigError } from '../errors/index.js';
import { checkOpenRange, positiveInt, type TimeRange } from './time-range.js';

/** The running slice keeps `[keepStart, …)`; `children` (oldest first) take `[start, keepStart)` exactly. */
export interface RemainingSplit {
  keepStart: number;
  children: TimeRange[];
}

/**
 * Splits the unread part of `slice` (`[start, upper]`, `upper` clipped to `end`) into at most `parts` pieces of
 * (nearly) equal width, every cut a multiple of `alignMs`. Returns `null` when there is nothing to split: an
 * open-ended start, `parts < 2`, or less than `2 * alignMs` left.
 * @throws ConfigError for an empty or NaN slice, a NaN `upper` or a non-positive `parts`.
 */
export function splitRemaining(
  slice: TimeRange,
  upper: number,
  parts: number,
  alignMs = 1,
): RemainingSplit | null {
  checkOpenRange(slice, 'slice');
  positiveInt('parts', parts);
  positiveInt('alignMs', alignMs);
  if (Number.isNaN(upper)) throw new ConfigError(`upper must be a time in ms, got ${upper}`);
  const { start } = slice;
  // The running slice keeps [keepStart, ...) up to its cursor, which may hold rows at exactly `upper`.
  const top = Math.min(upper, slice.end);
  const width = top - start;
  if (!Number.isFinite(start) || !(width >= 2 * alignMs) || parts < 2) return null;
  const cuts: number[] = [];
  for (let i = 1; i < parts; i++) {
    const cut = Math.floor((start + Math.floor((width * i) / parts)) / alignMs) * alignMs;
    if (cut > start && cut < top && cut > (cuts[cuts.length - 1] ?? -Infinity)) cuts.push(cut);
  }
  const keepStart = cuts[cuts.length - 1];
  if (keepStart === undefined) return null;
  const children: TimeRange[] = [];
  let lo = start;
  for (const cut of cuts) {
    children.push({ start: lo, end: cut });
    lo = cut;
  }
  return { keepStart, children };
}

/** How far a running slice has read since it (re)started. */
export interface ReadProgress {
  /** Rows read since the (re)start. */
  rowsRead: number;
  /** Sort time of the newest row read since the (re)start. */
  topTime: number;
  /** Sort time of the oldest row read so far (the reader's position). */
  lastTime: number;
}

/** When and how finely a running slice splits. */
export interface SplitRule {
  /** Rows each piece should hold. */
  rowsPerPart: number;
  /** Split only when the rows estimated left exceed this. */
  splitAbove: number;
  /** At most this many pieces (the kept part included). */
  maxParts: number;
  /** Every cut a multiple of this (1000 for a v1 upstream). @default 1 */
  alignMs?: number;
  /**
   * When the unread part is more than this many times wider than the span read so far (a per-user walk from 1970
   * that has read three days), cut it at quadrupling depths below the reader ({@link splitGeometric}) instead of
   * evenly: an even cut of a mostly empty history spends one page read per empty piece. @default Infinity (never)
   */
  geometricAbove?: number;
  /** At most this many pieces in a geometric split (the kept part included). @default `maxParts` */
  geometricParts?: number;
}

/** Rows left in `[start, lastTime)` at the rate read so far (rows over `[lastTime, topTime]`). */
export function estimateRemainingRows(start: number, progress: ReadProgress): number {
  const covered = Math.max(1, progress.topTime - progress.lastTime);
  return (progress.rowsRead * Math.max(0, progress.lastTime - start)) / covered;
}

/**
 * The split rule: when the rows estimated left exceed `splitAbove`, split the unread part into
 * `ceil(estimate / rowsPerPart)` pieces (at most `maxParts`). `null`: keep reading as is.
 */
export function planSplit(slice: TimeRange, progress: ReadProgress, rule: SplitRule): RemainingSplit | null {
  if (!Number.isFinite(slice.start)) return null;
  const estimate = estimateRemainingRows(slice.start, progress);
  if (!(estimate > rule.splitAbove)) return null;
  const covered = Math.max(1, progress.topTime - progress.lastTime);
  const unread = Math.min(progress.lastTime, slice.end) - slice.start;
  if (unread > (rule.geometricAbove ?? Infinity) * covered)
    return splitGeometric(
      slice,
      progress.lastTime,
      covered,
      Math.min(rule.maxParts, rule.geometricParts ?? rule.maxParts),
      rule.alignMs ?? 1,
    );
  const parts = Math.min(rule.maxParts, Math.ceil(estimate / rule.rowsPerPart));
  return splitRemaining(slice, progress.lastTime, parts, rule.alignMs ?? 1);
}

/** Most pieces of a geometric split (the kept part included). */
export const MAX_GEOMETRIC_SPLIT_PARTS = 24;

/**
 * Splits the unread part `[start, upper]` of `slice` at quadrupling depths below `upper`: the reader keeps
 * `[upper - span / 2, …)` (about half of what it read so far), then pieces end `2, 8, 32, …` spans deep, and the last
 * piece reaches `start`. Where rows thin out with depth (a user's history), each piece holds about as many pages as
 * it is deep, and an empty far past costs one page read per piece, a logarithmic number, not one per even part.
 * Pieces that still hold many rows split again when read. Returns `null` when nothing is left to split.
 * @throws ConfigError for an empty or NaN slice, a NaN `upper` or a non-positive `span`, `maxParts` or `alignMs`.
 */
export function splitGeometric(
  slice: TimeRange,
  upper: number,
  span: number,
  maxParts = MAX_GEOMETRIC_SPLIT_PARTS,
  alignMs = 1,
): RemainingSplit | null {
  checkOpenRange(slice, 'slice');
  positiveInt('maxParts', maxParts);
  positiveInt('alignMs', alignMs);
  if (Number.isNaN(upper)) throw new ConfigError(`upper must be a time in ms, got ${upper}`);
  if (!(span > 0)) throw new ConfigError(`span must be positive, got ${span}`);
  const { start } = slice;
  const top = Math.min(upper, slice.end);
  if (!Number.isFinite(start) || !(top - start >= 2 * alignMs) || maxParts < 2) return null;
  const parts = Math.min(maxParts, MAX_GEOMETRIC_SPLIT_PARTS);
  // Newest first: the kept part's lower edge, then each piece's.
  const cuts: number[] = [];
  for (let depth = span / 2; cuts.length < parts - 1; depth *= 4) {
    const cut = Math.floor((top - depth) / alignMs) * alignMs;
    if (!(cut > start)) break;
    if (cut < top && cut < (cuts[cuts.length - 1] ?? Infinity)) cuts.push(cut);
  }
  const keepStart = cuts[0];
  if (keepStart === undefined) return null;
  const edges = [start, ...cuts.reverse()];
  const children: TimeRange[] = [];
  for (let i = 1; i < edges.length; i++)
    children.push({ start: edges[i - 1] as number, end: edges[i] as number });
  return { keepStart, children };
}

/** Most pieces one split makes when planning for rounds (each read in the next round). */
export const MAX_ROUND_SPLIT_PARTS = 200;

/**
 * The split rule of a reader planned for fewest rounds (the budget does not bind): as soon as a page comes back full,
 * the unread rest is cut into pieces of half a page at the density read so far (at most 200), so nearly every piece
 * ends with its first page, and all of them are read in the next round. Half a page, not a whole one, because the
 * density varies: a piece that still overflows splits again, one round later. The client's `collectAll` uses it;
 * a pipeline slice can too (after its first page).
 * @throws ConfigError for a non-positive `pageSize` or `alignMs`.
 */
export function roundSplitRule(pageSize: number, alignMs = 1): Required<Omit<SplitRule, 'geometricParts'>> {
  positiveInt('pageSize', pageSize);
  positiveInt('alignMs', alignMs);
  const rowsPerPart = Math.max(1, Math.floor(pageSize / 2));
  return {
    rowsPerPart,
    splitAbove: rowsPerPart,
    maxParts: MAX_ROUND_SPLIT_PARTS,
    alignMs,
    geometricAbove: Infinity,
  };
}
