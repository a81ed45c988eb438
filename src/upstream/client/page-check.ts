/**
 * Checks of one listing page of a slice read and where the read goes next (issue 48, items 3 and 4). Pure: the read
 * loop (`read-slice.ts`) passes what it saw and follows the answer.
 *
 * - A page longer than its `limit` is an error (the upstream never sends more than asked: something is off).
 * - A cursor must move: a non-empty page whose next cursor is the one it was read at, or one already followed, is an
 *   error that names the cursor; so is a page that repeats a row of the page before (a cursor that keeps changing
 *   while the rows repeat looped for ever).
 * - An empty page whose cursor moved to a bound still inside the slice is followed (counted), at most
 *   `MAX_EMPTY_FOLLOWS` in a row; an empty page that echoes its cursor, or carries none, is the end as before.
 * - A full page without a cursor goes on from its last row's compound bound (counted): the read no longer ends as
 *   complete over the rows below it. Without a usable last row it stops, counted as an abnormal stop.
 * Each event is told once per page to `onPageEvent`, with the cursor concerned.
 */
import { ValidationError } from '../../foundation/errors/index.js';
import { encodeCursor, parseCursor, type CursorFormat } from './cursor.js';

/** What the read did that an operator should know of (counted, and logged once per kind). */
export type PageEventKind =
  /** An empty page with a cursor that moved (inside the slice): followed. */
  | 'empty-page-followed'
  /** Empty pages with moving cursors went on for `MAX_EMPTY_FOLLOWS` pages: the read stopped there. */
  | 'empty-pages-stopped'
  /** A full page without a cursor: the read went on from its last row's bound. */
  | 'missing-cursor-continued'
  /** A full page without a cursor and no usable last row: the read stopped there. */
  | 'missing-cursor-stopped';

export interface PageEvent {
  kind: PageEventKind;
  /** The cursor the page was read at (undefined: the slice's first page from its end bound). */
  cursor: string | undefined;
}

/** Empty pages with moving cursors followed in a row before the read stops. */
export const MAX_EMPTY_FOLLOWS = 3;

export interface PageCheckInput {
  items: readonly unknown[];
  nextCursor: unknown;
  hasMore: boolean | undefined;
  /** The cursor this page was read at. */
  cursor: string | undefined;
  pageLimit: number;
  /** A short page ends the read (`shortPages: 'end'`). */
  shortEnds: boolean;
  /** An item below the slice's start was met. */
  reachedStart: boolean;
  /** Cursors already followed in this read. */
  seen: ReadonlySet<string>;
  /** `_id`s of the page before. */
  previousIds: ReadonlySet<string>;
  /** Empty pages followed in a row just before this one. */
  emptyFollows: number;
  /** The slice's lower bound (epoch ms) and the sort field. */
  lowerBound: number;
  sortField: string;
  format: CursorFormat;
}

export interface PageCheck {
  /** Where to read next; null when the read is done. */
  next: string | null;
  event?: PageEventKind;
}

const idOf = (item: unknown): string | undefined => {
  const id = typeof item === 'object' && item !== null ? (item as { _id?: unknown })._id : undefined;
  return typeof id === 'string' && id !== '' ? id : undefined;
};

/** The bound of an item, `(sort time, _id)`, as the cursor the page should have carried; undefined when unusable. */
function boundOf(item: unknown, sortField: string, format: CursorFormat): string | undefined {
  const id = idOf(item);
  const t =
    typeof item === 'object' && item !== null ? (item as Record<string, unknown>)[sortField] : undefined;
  const ms = typeof t === 'string' ? Date.parse(t) : NaN;
  if (id === undefined || !/^[a-f\d]{24}$/.test(id) || Number.isNaN(ms)) return undefined;
  return encodeCursor(format, format === 'v1' ? Math.floor(ms / 1000) * 1000 : ms, id);
}

/** The time of a cursor's bound; undefined when it cannot be read. */
function boundTime(cursor: string): number | undefined {
  try {
    return parseCursor(cursor).timeMs;
  } catch {
    return undefined;
  }
}

/** An empty page: the end, or (its cursor moved to a bound still inside the slice) a page to follow. */
function checkEmpty(o: PageCheckInput, next: string | undefined): PageCheck {
  if (next === undefined || next === o.cursor || o.seen.has(next)) return { next: null };
  const t = boundTime(next);
  if (t === undefined || t < o.lowerBound) return { next: null };
  if (o.emptyFollows >= MAX_EMPTY_FOLLOWS) return { next: null, event: 'empty-pages-stopped' };
  return { next, event: 'empty-page-followed' };
}

/**
 * Checks one page and says where the read goes next.
 * @throws ValidationError (retriable: another read may be answered well) for a page longer than its limit, a cursor
 *   that does not move, or rows of the page before repeated.
 */
export function checkPage(o: PageCheckInput): PageCheck {
  const at = o.cursor === undefined ? "the slice's end bound" : `cursor ${o.cursor}`;
  if (o.items.length > o.pageLimit)
    throw new ValidationError(
      `page read at ${at} has ${o.items.length} items for limit ${o.pageLimit}`,
      'items',
      { retriable: true },
    );
  const next = typeof o.nextCursor === 'string' && o.nextCursor !== '' ? o.nextCursor : undefined;
  if (o.items.length === 0) return checkEmpty(o, next);
  const repeated = o.items.map(idOf).find((id) => id !== undefined && o.previousIds.has(id));
  if (repeated !== undefined)
    throw new ValidationError(
      `page read at ${at} repeats row ${repeated} of the page before: the cursor does not move`,
      'nextCursor',
      { retriable: true },
    );
  if (o.reachedStart) return { next: null };
  if (o.shortEnds && o.items.length < o.pageLimit && o.hasMore !== true) return { next: null };
  if (next === undefined) {
    // Full (or confirmed) page with no cursor: go on from its last row, as the cursor would have.
    const bound = boundOf(o.items[o.items.length - 1], o.sortField, o.format);
    if (bound === undefined || bound === o.cursor || o.seen.has(bound))
      return { next: null, event: 'missing-cursor-stopped' };
    return { next: bound, event: 'missing-cursor-continued' };
  }
  if (next === o.cursor || o.seen.has(next))
    throw new ValidationError(
      `page read at ${at} gave cursor ${next} again: the cursor does not move`,
      'nextCursor',
      { retriable: true },
    );
  return { next };
}
