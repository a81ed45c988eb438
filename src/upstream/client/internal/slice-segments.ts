/**
 * The slices of one `collectAll` call as a linked list in output order (listing by listing, each newest first).
 * A dense slice's older parts are linked in right after it, so emitting the list front to back stays in time order.
 * A segment's fields are written only here: the scheduler moves a segment through the operations below.
 */
import { planFirstRound, planSliceEdges, type RemainingSplit } from '../../../foundation/slicing/index.js';
import type { Listing } from '../listing.js';

/** One slice `[start, end)` of a listing, with the items read but not yet emitted. */
export interface Segment<T> {
  listing: Listing;
  start: number;
  end: number;
  buffer: T[];
  started: boolean;
  done: boolean;
  /** The round of the page whose answer created this slice (0: planned before any request). */
  round: number;
  next: Segment<T> | null;
}

/** Where the grid of every listing lies (resolved `collectAll` options). */
export interface SegmentGrid {
  oldest: number;
  top: number;
  anchor: number;
  sliceMs: number;
  /** Set when `oldestDate` is open-ended: the grid starts here and the oldest slice reads to the feed's end. */
  gridFloor?: number | undefined;
  /** Planned for rounds: this many equal slices over `[oldest, anchor)` instead of the grid of `sliceMs`. */
  firstRound?: number | undefined;
  /**
   * The newest row's sort time of each listing (a head probe; -Infinity: the listing is empty). The first round is
   * planned up to it rather than up to the client's clock, which need not be the upstream's.
   */
  heads?: ReadonlyMap<Listing, number> | undefined;
}

function newSegment<T>(
  listing: Listing,
  start: number,
  end: number,
  next: Segment<T> | null,
  round = 0,
): Segment<T> {
  return { listing, start, end, buffer: [], started: false, done: false, round, next };
}

/** The initial segments of every listing, linked in output order; returns them in that order too. */
export function planSegments<T>(
  listings: readonly Listing[],
  grid: SegmentGrid,
  alignMs: number,
): Segment<T>[] {
  const initial: Segment<T>[] = [];
  for (const listing of listings) {
    const bottom = grid.gridFloor !== undefined ? Math.min(grid.gridFloor, grid.anchor) : grid.oldest;
    const head = grid.heads?.get(listing);
    // Nothing at or above `oldest` (as far as the probe saw): one slice, ended by its first page.
    const anchor = head === undefined ? grid.anchor : Math.min(grid.anchor, head + 1);
    const plan =
      grid.firstRound === undefined || grid.gridFloor !== undefined
        ? planSliceEdges(bottom, grid.top, grid.anchor, grid.sliceMs, alignMs)
        : anchor - alignMs <= grid.oldest
          ? [{ start: grid.oldest, end: grid.top }]
          : planFirstRound(grid.oldest, grid.top, anchor, grid.firstRound, alignMs);
    const last = plan[plan.length - 1];
    if (grid.gridFloor !== undefined && last) last.start = -Infinity;
    for (const { start, end } of plan) {
      const seg = newSegment<T>(listing, start, end, null, grid.heads ? 1 : 0);
      const prev = initial[initial.length - 1];
      if (prev) prev.next = seg;
      initial.push(seg);
    }
  }
  return initial;
}

/**
 * Applies a split to a running segment: it keeps the newest part, the older parts are linked in after it (newest
 * first) and returned in that order, to be scheduled at once.
 */
export function splitSegment<T>(seg: Segment<T>, split: RemainingSplit, round = 0): Segment<T>[] {
  const added: Segment<T>[] = [];
  let prev = seg;
  for (let i = split.children.length - 1; i >= 0; i--) {
    const child = split.children[i];
    if (!child) continue;
    const older = newSegment<T>(seg.listing, child.start, child.end, prev.next, round);
    prev.next = older;
    prev = older;
    added.push(older);
  }
  seg.start = split.keepStart;
  return added;
}

/**
 * The page that ended a slice names the newest row older than the slice (`below`, -Infinity when there is none):
 * unstarted slices of the same listing lying wholly between it and the slice hold no row, so they are done
 * without a request (this is what keeps thousands of tiny, empty slices cheap). Returns how many were skipped.
 */
export function skipEmptyBelow<T>(seg: Segment<T>, below: number, alignMs: number): number {
  if (Number.isNaN(below)) return 0;
  // v1 orders by whole second: only seconds after the row's own second are known empty.
  const emptyFrom =
    below === -Infinity ? -Infinity : alignMs === 1 ? below + 1 : Math.floor(below / 1000) * 1000 + 1000;
  let skipped = 0;
  for (let s = seg.next; s && s.listing === seg.listing && s.start >= emptyFrom; s = s.next) {
    if (s.started) continue; // already reading: it will find nothing and end on its own
    s.started = true;
    s.done = true;
    skipped++;
  }
  return skipped;
}

/** A reader took the slice: no other reader takes it, and no neighbour's last page skips it. */
export function startSegment<T>(seg: Segment<T>): void {
  seg.started = true;
}

/** The slice's reader read its last page. */
export function finishSegment<T>(seg: Segment<T>): void {
  seg.done = true;
}

/** Buffers items read from the slice, for the emitter. */
export function bufferSegmentItems<T>(seg: Segment<T>, items: readonly T[]): void {
  for (const item of items) seg.buffer.push(item);
}

/** Takes the items buffered in the slice, leaving its buffer empty. */
export function takeSegmentItems<T>(seg: Segment<T>): T[] {
  const items = seg.buffer;
  seg.buffer = [];
  return items;
}
