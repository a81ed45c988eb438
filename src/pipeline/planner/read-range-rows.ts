/**
 * Reads every row of one listing over a range for the partition proof, with the range cut while it is read so a
 * long window is not one serial chain of cursors: after a piece's first page, the rest of the piece (below that
 * page's oldest row) is estimated at the page's rate and, when it holds more than `pagesPerPart` pages, cut evenly
 * into parts read at once (the part on top resumes from the page's cursor, so no row is read twice and ties on the
 * page's edge are kept). The pages of parts read at once ride in the same batched POSTs.
 */
import { splitEvenly, type TimeRange } from '../../foundation/slicing/index.js';

/** One page of a listing over a range: items newest first, the cursor after them (`null` at the range's end). */
export interface RangePage {
  items: Record<string, unknown>[];
  cursor: string | null | undefined;
}

/** The pages of one listing over `range`, resumed after `cursor` (the client's `readSlice`). */
export type ReadRangePages = (range: TimeRange, cursor?: string) => AsyncIterable<RangePage>;

export interface ReadRangeRowsOptions {
  /** Page size the reader uses (to estimate pages from rows). @default 100 */
  pageSize?: number;
  /**
   * A piece whose rest holds more pages than this is cut. 8: every part ends on a partial page, and the walks' window
   * pieces are read side by side in the same POSTs (the partition proof's setting, the only caller). @default 8
   */
  pagesPerPart?: number;
  /** Most parts one cut makes. @default 50 */
  maxParts?: number;
  /** Cuts at most this deep (a part may be cut again). @default 3 */
  maxDepth?: number;
  /** The sort field of the listing's items. @default 'createdAt' */
  sortField?: string;
}

export const DEFAULT_READ_RANGE_ROWS_OPTIONS = {
  pageSize: 100,
  pagesPerPart: 8,
  maxParts: 50,
  maxDepth: 3,
  sortField: 'createdAt',
} as const;

/** What a range read kept of every item (in no particular order across parts) and the pages it took. */
export interface RangeRows<T> {
  rows: T[];
  pages: number;
}

/**
 * Reads every row of `range` through `read`, cutting long pieces into parts read at once, and keeps what `keep` makes
 * of each item, `undefined` dropped (a window of the real feed is millions of rows: keep ids and types, not records).
 * @example const { rows, pages } = await readRangeRows((r, c) => readSlice(client, listing, r, { cursor: c }), window, (i) => i._id);
 */
export async function readRangeRows<T>(
  read: ReadRangePages,
  range: TimeRange,
  keep: (item: Record<string, unknown>) => T | undefined,
  options: ReadRangeRowsOptions = {},
): Promise<RangeRows<T>> {
  const o = { ...DEFAULT_READ_RANGE_ROWS_OPTIONS, ...options };
  const out: RangeRows<T> = { rows: [], pages: 0 };
  const timeOf = (item: Record<string, unknown> | undefined): number => {
    const v = item?.[o.sortField];
    return typeof v === 'string' ? Date.parse(v) : Number.NaN;
  };
  const readPiece = async (piece: TimeRange, cursor: string | undefined, depth: number): Promise<void> => {
    let first = true;
    for await (const page of read(piece, cursor)) {
      out.pages++;
      for (const item of page.items) {
        const kept = keep(item);
        if (kept !== undefined) out.rows.push(kept);
      }
      if (page.cursor === null || page.cursor === undefined) return;
      if (!first || depth >= o.maxDepth) continue;
      first = false;
      const newest = timeOf(page.items[0]);
      const oldest = timeOf(page.items[page.items.length - 1]);
      if (!Number.isFinite(newest) || !Number.isFinite(oldest) || oldest <= piece.start) continue;
      // The rest of the piece: rows at or below the page's oldest time (ties resume from the cursor).
      const span = Math.max(1, newest - oldest);
      const restPages = (page.items.length * (oldest - piece.start)) / span / o.pageSize;
      if (restPages <= o.pagesPerPart) continue;
      const parts = splitEvenly(
        { start: piece.start, end: oldest + 1 },
        Math.min(o.maxParts, Math.ceil(restPages / o.pagesPerPart), oldest + 1 - piece.start),
      ).sort((a, b) => b.start - a.start);
      const [top, ...below] = parts;
      if (top === undefined) continue;
      await Promise.all([
        readPiece(top, page.cursor, depth + 1),
        ...below.map((p) => readPiece(p, undefined, depth + 1)),
      ]);
      return;
    }
  };
  await readPiece(range, undefined, 0);
  return out;
}
