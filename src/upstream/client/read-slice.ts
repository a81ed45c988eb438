/**
 * Reading one time slice `[start, end)` of a listing: from the synthetic cursor `bound(end, 000…0)` (everything
 * strictly older than `end`) page by page, newest first, until the first item older than `start`. Adjacent slices
 * therefore partition time exactly, whatever ties sit on their edges.
 *
 * v1 upstreams: a v1 bound has second precision, so slice edges must be whole seconds (the slicers align them).
 */
import { ConfigError } from '../../foundation/errors/index.js';
import type { ClientCore, InvalidItemMode } from './core.js';
import { encodeCursor, ZERO_OID } from './cursor.js';
import type { Listing } from './listing.js';
import { checkOpenRange, type TimeRange } from '../../foundation/slicing/index.js';
import type { ShortPages } from '../../foundation/models/index.js';
import { checkPage, MAX_EMPTY_FOLLOWS, type PageEvent } from './page-check.js';

const idOf = (item: unknown): string | undefined => {
  const id = typeof item === 'object' && item !== null ? (item as { _id?: unknown })._id : undefined;
  return typeof id === 'string' && id !== '' ? id : undefined;
};

export interface ReadSliceOptions {
  /** Resume after a checkpoint: a `cursor` yielded by an earlier read of the same slice. */
  cursor?: string | null | undefined;
  /** Page size (the upstream's maximum is 100). @default 100 */
  limit?: number | undefined;
  signal?: AbortSignal | undefined;
  /** @default 'throw' (the pipeline passes `'pass'` and dead-letters malformed items) */
  onInvalidItem?: InvalidItemMode | undefined;
  /** What a page with fewer items than asked for means (`ShortPages`, src/foundation/models/short-pages.ts). @default 'end' */
  shortPages?: ShortPages | undefined;
  /** Told of each page the read went on from, or stopped at, abnormally (`page-check.ts`). Must not throw. */
  onPageEvent?: ((event: PageEvent) => void) | undefined;
}

export const DEFAULT_READ_SLICE_OPTIONS = {
  limit: 100,
  onInvalidItem: 'throw',
  shortPages: 'end',
} as const satisfies ReadSliceOptions;

/** One page of a slice. */
export interface SlicePage<T> {
  /** The page's items inside the slice, newest first. */
  items: T[];
  /** Where to resume after this page (checkpoint it once `items` are safely stored); `null` when the slice is done. */
  cursor: string | null;
}

/** Internal detail of a page, used by the collect engine to split dense slices. */
export interface SlicePageDetail<T> extends SlicePage<T> {
  /** Rows the upstream returned (before trimming to the slice). */
  fetched: number;
  /** Sort time of the oldest item of the page inside the slice (NaN when unknown). */
  lastTimeMs: number;
  /** Sort time of the newest item of the page (NaN when unknown). */
  firstTimeMs: number;
  /** Sort time of the first item below the slice's start (NaN when the page had none). */
  belowTimeMs: number;
  /** The page size requested. */
  limit: number;
}

/** The sort time of an item in epoch ms, NaN when missing or malformed. */
export function sortTimeOf(item: unknown, field: string): number {
  if (typeof item !== 'object' || item === null) return NaN;
  const v = (item as Record<string, unknown>)[field];
  return typeof v === 'string' ? Date.parse(v) : NaN;
}

/** The synthetic cursor that starts a slice ending at `end` (undefined: read from the head). */
export function sliceStartCursor(core: ClientCore, end: number): string | undefined {
  if (end === Infinity) return undefined;
  if (core.cursorFormat === 'v1' && end % 1000 !== 0)
    throw new ConfigError(
      `slice edge ${new Date(end).toISOString()} is not a whole second; a v1 upstream cannot bound it`,
    );
  return encodeCursor(core.cursorFormat, end, ZERO_OID);
}

/**
 * Pages of one slice with a lower bound that may move up while reading (`lowerBound()` is read before each page;
 * the collect engine raises it when it splits off the rest of a dense slice).
 */
export async function* readSlicePages<T>(
  core: ClientCore,
  listing: Listing,
  end: number,
  lowerBound: () => number,
  options: ReadSliceOptions & { firstLimit?: number | undefined } = {},
): AsyncGenerator<SlicePageDetail<T>> {
  const limit = options.limit ?? DEFAULT_READ_SLICE_OPTIONS.limit;
  let pageLimit = Math.min(limit, Math.max(1, options.firstLimit ?? limit));
  const shortEnds = (options.shortPages ?? DEFAULT_READ_SLICE_OPTIONS.shortPages) === 'end';
  if (!Number.isInteger(limit) || limit < 1 || limit > 100)
    throw new ConfigError(`limit must be an integer in [1, 100], got ${limit}`);
  let cursor =
    options.cursor === undefined || options.cursor === null ? sliceStartCursor(core, end) : options.cursor;
  const seen = new Set<string>();
  let previousIds: ReadonlySet<string> = new Set<string>();
  let emptyFollows = 0;
  for (;;) {
    const page = await core.fetchPage<T>(
      listing,
      { limit: pageLimit, cursor },
      {
        signal: options.signal,
        onInvalidItem: options.onInvalidItem ?? DEFAULT_READ_SLICE_OPTIONS.onInvalidItem,
      },
    );
    const lo = lowerBound();
    // A v1 upstream orders by (whole second, _id): inside a second times are not monotonic, so the read stops only
    // below the start's second and merely skips earlier rows of that second.
    const stopBelow = core.cursorFormat === 'v1' ? Math.floor(lo / 1000) * 1000 : lo;
    const items: T[] = [];
    let reachedStart = false;
    let lastTimeMs = NaN;
    let belowTimeMs = NaN;
    for (const item of page.items) {
      const t = sortTimeOf(item, listing.sortField);
      if (t < stopBelow) {
        reachedStart = true;
        belowTimeMs = t;
        break;
      }
      if (t < lo || t >= end) continue;
      items.push(item);
      if (!Number.isNaN(t)) lastTimeMs = t;
    }
    // Stop rules that do not rely on hasMore (the real service omits it), and the checks of a page (page-check.ts):
    // an item older than the slice, an empty page, a short page (unless `shortPages: 'confirm'`) end the read; a
    // cursor that does not move, repeated rows and a page longer than its limit are errors; an empty page with a
    // moved cursor and a full page without one go on (counted).
    const check = checkPage({
      items: page.items,
      nextCursor: page.nextCursor,
      hasMore: page.hasMore,
      cursor,
      pageLimit,
      shortEnds,
      reachedStart,
      seen,
      previousIds,
      emptyFollows,
      lowerBound: lo,
      sortField: listing.sortField,
      format: core.cursorFormat,
    });
    if (check.event !== undefined) options.onPageEvent?.({ kind: check.event, cursor });
    emptyFollows = page.items.length === 0 && check.next !== null ? emptyFollows + 1 : 0;
    previousIds = new Set(page.items.map(idOf).filter((id): id is string => id !== undefined));
    const next = check.next;
    const done = next === null;
    if (next !== null) seen.add(next);
    yield {
      items,
      cursor: next,
      fetched: page.items.length,
      lastTimeMs,
      firstTimeMs: sortTimeOf(page.items[0], listing.sortField),
      belowTimeMs,
      limit: pageLimit,
    };
    if (done) return;
    cursor = next;
    pageLimit = limit;
  }
}

/**
 * The pages of ONE slice `[start, end)` of a listing, newest first: each page's items restricted to the slice, each
 * with the cursor to resume after it, ending at the first item older than `start`. Resuming with
 * `{ cursor }` from a yielded page yields exactly the rest of the slice. Pages of concurrent calls on the same client
 * ride in the same batched POST.
 *
 * @example
 * for await (const { items, cursor } of readSlice(client, createListing('transactions'), { start, end })) {
 *   await sink(items);
 *   await checkpoint(cursor); // null: the slice is complete
 * }
 * @throws ConfigError for an empty range or a bad limit; upstream errors after retries; ValidationError for a
 *   malformed envelope (or item, unless `onInvalidItem: 'pass'`); AbortedError when the signal aborts.
 */
export async function* readSlice<T = Record<string, unknown>>(
  client: ClientCore,
  listing: Listing,
  range: TimeRange,
  options: ReadSliceOptions = {},
): AsyncGenerator<SlicePage<T>> {
  checkOpenRange(range);
  for await (const page of readSlicePages<T>(client, listing, range.end, () => range.start, options)) {
    yield { items: page.items, cursor: page.cursor };
  }
}

/**
 * The sort times (epoch ms, newest first) of at most `limit` rows strictly older than `beforeMs`: one page at the
 * synthetic cursor. This is the `ProbePage` the planner's density probe and earliest-row search use.
 */
export async function probeSortTimes(
  client: ClientCore,
  listing: Listing,
  beforeMs: number,
  limit = 100,
  signal?: AbortSignal,
): Promise<number[]> {
  let cursor = sliceStartCursor(client, beforeMs);
  let page = await client.fetchPage(listing, { limit, cursor }, { signal, onInvalidItem: 'pass' });
  // An empty page whose cursor moved (issue 48) is not "no rows": follow it, as a slice read does.
  for (let follows = 0; page.items.length === 0 && follows < MAX_EMPTY_FOLLOWS; follows++) {
    const next = page.nextCursor;
    if (typeof next !== 'string' || next === '' || next === cursor) break;
    cursor = next;
    page = await client.fetchPage(listing, { limit, cursor }, { signal, onInvalidItem: 'pass' });
  }
  return page.items.map((item) => sortTimeOf(item, listing.sortField)).filter((t) => !Number.isNaN(t));
}
