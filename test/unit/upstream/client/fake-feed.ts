/** A recording in-memory feed with the upstream's paging semantics (v2: (ms, _id); v1: (whole second, _id)). */
import type { ClientCore } from '../../../../src/upstream/client/core.js';
import { encodeCursorV1, encodeCursorV2, parseCursor } from '../../../../src/upstream/client/cursor.js';
import type { CursorPage } from '../../../../src/foundation/models/types.js';

export interface Row {
  _id: string;
  createdAt: string;
}

export function oid(n: number): string {
  return n.toString(16).padStart(24, '0');
}

export function makeRows(times: number[]): Row[] {
  return times.map((t, i) => ({ _id: oid(i + 1), createdAt: new Date(t).toISOString() }));
}

/** Newest first by the format's key. */
export function sortRows(rows: Row[], format: 'v2' | 'v1'): Row[] {
  const key = (r: Row): number =>
    format === 'v1' ? Math.floor(Date.parse(r.createdAt) / 1000) * 1000 : Date.parse(r.createdAt);
  return [...rows].sort((a, b) => key(b) - key(a) || (a._id < b._id ? 1 : a._id > b._id ? -1 : 0));
}

export interface FakeFeed extends ClientCore {
  calls: { cursor: string | undefined; limit: number }[];
  failAfter?: number;
}

export function createFakeFeed(
  rows: Row[],
  format: 'v2' | 'v1' = 'v2',
  options: {
    failWhen?: (call: number) => boolean;
    /**
     * As the real service: every page with items carries the cursor after its last one, and an empty page echoes the
     * cursor it was given (without: a page with nothing below it carries no cursor).
     */
    echoCursor?: boolean;
    /** Serves call `n`'s page cut to half its items (at least one) while items remain below them. */
    shortWhen?: (call: number) => boolean;
  } = {},
): FakeFeed {
  const sorted = sortRows(rows, format);
  const key = (r: Row): number =>
    format === 'v1' ? Math.floor(Date.parse(r.createdAt) / 1000) * 1000 : Date.parse(r.createdAt);
  const calls: FakeFeed['calls'] = [];
  return {
    cursorFormat: format,
    calls,
    async fetchPage<T>(
      _listing: unknown,
      request: { limit: number; cursor?: string | undefined },
    ): Promise<CursorPage<T>> {
      const n = calls.push({ cursor: request.cursor, limit: request.limit });
      await new Promise((r) => setImmediate(r));
      if (options.failWhen?.(n)) throw new Error('boom');
      let start = 0;
      if (request.cursor !== undefined) {
        const b = parseCursor(request.cursor);
        const bt = format === 'v1' ? Math.floor(b.timeMs / 1000) * 1000 : b.timeMs;
        start = sorted.findIndex((r) => key(r) < bt || (key(r) === bt && r._id < b.id));
        if (start < 0) start = sorted.length;
      }
      let items = sorted.slice(start, start + request.limit);
      if (items.length > 1 && start + items.length < sorted.length && options.shortWhen?.(n))
        items = items.slice(0, Math.ceil(items.length / 2));
      const last = items[items.length - 1];
      const more = start + items.length < sorted.length;
      const nextCursor =
        last && (more || options.echoCursor === true)
          ? format === 'v1'
            ? encodeCursorV1(Date.parse(last.createdAt), last._id, 'date')
            : encodeCursorV2(Date.parse(last.createdAt), last._id)
          : options.echoCursor === true
            ? (request.cursor ?? null)
            : null;
      return { items: items as T[], nextCursor };
    },
  };
}
