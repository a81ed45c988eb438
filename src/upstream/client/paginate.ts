/**
 * Auto-pagination: pages followed with `nextCursor`, stopped by rules that do not need `hasMore` (the real service
 * omits it): an empty page, a missing or repeated cursor, `hasMore: false` when sent, `maxPages`, or a cursor whose
 * date is older than `cursorEnd` (v1 and v2 cursors both parse).
 */
import { ConfigError } from '../../foundation/errors/index.js';
import type { CursorPage } from '../../foundation/models/index.js';
import type { ClientCore, InvalidItemMode } from './core.js';
import { parseCursor } from './cursor.js';
import type { Listing } from './listing.js';

export interface AutoPaginateOptions {
  limit: number;
  cursor?: string | null | undefined;
  direction?: string | undefined;
  /** Most pages fetched. @default Infinity */
  maxPages?: number | undefined;
  /** Stop once a cursor's date is older than this (ISO or JS date text, Date or epoch ms). @default none */
  cursorEnd?: string | Date | number | null | undefined;
  signal?: AbortSignal | undefined;
  onInvalidItem?: InvalidItemMode | undefined;
}

function cursorEndMs(value: AutoPaginateOptions['cursorEnd']): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (value instanceof Date) return value.getTime();
  if (typeof value === 'number') return value;
  try {
    return parseCursor(
      value.includes('|') || value.startsWith('v2.') ? value : `${value}|000000000000000000000000`,
    ).timeMs;
  } catch {
    throw new ConfigError(
      `cursorEnd must be a date (ISO or JS date text) or a cursor, got ${JSON.stringify(value)}`,
      ['cursorEnd'],
    );
  }
}

/** The pages of a listing, followed from `cursor`. */
export async function* paginatePages<T>(
  core: ClientCore,
  listing: Listing,
  options: AutoPaginateOptions,
): AsyncGenerator<CursorPage<T>> {
  const maxPages = options.maxPages ?? Infinity;
  if (!(maxPages >= 0)) throw new ConfigError(`maxPages must be >= 0, got ${maxPages}`, ['maxPages']);
  const endMs = cursorEndMs(options.cursorEnd);
  let cursor = options.cursor ?? undefined;
  const followed = new Set<string>();
  for (let pages = 0; pages < maxPages; pages++) {
    const page = await core.fetchPage<T>(
      listing,
      { limit: options.limit, cursor, direction: options.direction },
      { signal: options.signal, onInvalidItem: options.onInvalidItem },
    );
    yield page;
    const next = page.nextCursor;
    if (
      page.items.length === 0 ||
      page.hasMore === false ||
      typeof next !== 'string' ||
      next === '' ||
      followed.has(next) ||
      next === cursor
    )
      return;
    if (endMs !== undefined) {
      let nextMs: number | undefined;
      try {
        nextMs = parseCursor(next).timeMs;
      } catch {
        nextMs = undefined; // an unreadable cursor cannot be compared; keep paging like the spec's client
      }
      if (nextMs !== undefined && nextMs < endMs) return;
    }
    followed.add(next);
    cursor = next;
  }
}

/** The items of every page (the `autoItems: true` form). */
export async function* paginateItems<T>(
  core: ClientCore,
  listing: Listing,
  options: AutoPaginateOptions,
): AsyncGenerator<T> {
  for await (const page of paginatePages<T>(core, listing, options)) yield* page.items;
}
