/**
 * A busy user's full-history walk cut into time pieces at planning, from the rate the feed's head page shows (issue
 * 32). A per-user walk is a chain of dependent page reads, ~1 s each at the real service's latency: a small full
 * history's busiest user (1 300 of 12 000 rows, 13 pages) was the run's last seconds even when started first, since a
 * walk splits only after it has read two pages (`spareKeySplitRule`). The head page (the volume estimate's) names
 * that user in 9 of its 100 rows: a rate, and so a first cut, known before any of its pages is read. The pieces are
 * read side by side from the first round, and each splits as it is read, like any walk.
 *
 * What it costs: one call per piece that ends up short or empty (a user whose rate fell), in requests the key sends
 * anyway, and only for users the head page names often ({@link BUSY_USER_MIN_ROWS}).
 */
import type { TimeRange } from '../../foundation/slicing/index.js';
import type { PlannedSlice } from './plan-partition.js';

/** The feed's head page as the planner read it: its rows, the time they span, and how many name each user. */
export interface FeedHead {
  /** The page's rows. */
  rows: number;
  /** From the page's oldest row to the window's end, ms. */
  spanMs: number;
  /** The rows of the page that name each user (buyer, seller or single-party user). */
  users: ReadonlyMap<string, number>;
  /** The rows of the feed's window at the page's rate (`readFeedHead` in `plan-partitioned.ts`). */
  windowRows: number;
}

/** The rows the newest piece is cut for: two pages, after which a walk's own split would have cut it. */
export const BUSY_USER_PIECE_ROWS = 200;
/**
 * The pieces of a cut walk, the oldest reaching back to the walk's start. How far back a busy user's rows go, and at
 * what rate, is not known at planning: a small full history's busiest user has ~290 rows in the feed's 71 h window at
 * the head's rate, 1 300 in all, reaching back four months at a tenth of that rate. So each piece spans twice the
 * time of the newer one (the newest: {@link BUSY_USER_PIECE_ROWS} at the head's rate), as a walk's own geometric
 * split does: 8 pieces reach 127 newest spans back (at seed 7, 254 days), the rest to the oldest piece. A piece
 * past the user's first trade costs one call, side by side with the others; a piece with more rows splits as it
 * is read.
 */
export const BUSY_USER_PIECES = 8;
/** A user is cut only when the head page's share gives it this many rows in the feed's window (1.5 pages)... */
export const BUSY_USER_MIN_ROWS = 150;
/** ...and the head page names it at least this often (one row is no rate). */
export const BUSY_USER_MIN_HEAD_ROWS = 2;

/**
 * The pieces of `range` for a user the head page names `headRows` times: newest first, up to
 * {@link BUSY_USER_PIECES} - 1 of them (fewer where `range` ends first), the newest spanning the time
 * {@link BUSY_USER_PIECE_ROWS} take at that rate and each older one twice the one before, then the last from
 * `range.start`. `[range]` for a user under {@link BUSY_USER_MIN_ROWS} or {@link BUSY_USER_MIN_HEAD_ROWS}. The pieces
 * tile `range` exactly.
 * @example
 * // 50 of the head page's 100 rows over 1 s: 200 rows take 4 s (and 1 000 rows in the window: busy)
 * busyUserPieces({ start: 0, end: 100_000 }, 50, { rows: 100, spanMs: 1_000, users: new Map(), windowRows: 2_000 })
 * // [96_000, 100_000), [88_000, 96_000), [72_000, 88_000), [40_000, 72_000), [0, 40_000)
 */
export function busyUserPieces(range: TimeRange, headRows: number, head: FeedHead): PlannedSlice[] {
  if (headRows < BUSY_USER_MIN_HEAD_ROWS || head.rows <= 0 || head.spanMs <= 0) return [range];
  if ((headRows * head.windowRows) / head.rows < BUSY_USER_MIN_ROWS) return [range];
  const pieceMs = Math.max(1, Math.round((BUSY_USER_PIECE_ROWS * head.spanMs) / headRows));
  const out: PlannedSlice[] = [];
  let end = range.end;
  let width = pieceMs;
  while (out.length < BUSY_USER_PIECES - 1 && end - width > range.start) {
    out.push({ start: end - width, end });
    end -= width;
    width *= 2;
  }
  out.push({ start: range.start, end });
  return out;
}
