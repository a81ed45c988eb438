import { describe, expect, it } from 'vitest';
import type { ClientCore } from '../../../../src/upstream/client/core.js';
import { encodeCursorV1, encodeCursorV2 } from '../../../../src/upstream/client/cursor.js';
import { createListing } from '../../../../src/upstream/client/listing.js';
import { paginateItems, paginatePages } from '../../../../src/upstream/client/paginate.js';
import type { CursorPage } from '../../../../src/foundation/models/types.js';

/** A core answering scripted pages in order, recording the cursors asked for. */
function scripted(pages: CursorPage<number>[]): ClientCore & { asked: (string | undefined)[] } {
  const asked: (string | undefined)[] = [];
  return {
    cursorFormat: 'v2',
    asked,
    fetchPage<T>(_l: unknown, request: { cursor?: string | undefined }): Promise<CursorPage<T>> {
      asked.push(request.cursor);
      const page = pages.shift() ?? { items: [], nextCursor: null };
      return Promise.resolve(page as unknown as CursorPage<T>);
    },
  };
}

const listing = createListing('parties');
async function all<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

describe('auto-pagination stop rules (no hasMore needed)', () => {
  it('follows nextCursor and stops on a missing cursor', async () => {
    const core = scripted([
      { items: [1, 2], nextCursor: 'a' },
      { items: [3], nextCursor: 'b' },
      { items: [4], nextCursor: null },
    ]);
    expect(await all(paginateItems(core, listing, { limit: 2 }))).toEqual([1, 2, 3, 4]);
    expect(core.asked).toEqual([undefined, 'a', 'b']);
  });

  it('stops on an empty page even when it carries a cursor, and on a repeated cursor', async () => {
    expect(
      await all(
        paginateItems(
          scripted([
            { items: [1], nextCursor: 'a' },
            { items: [], nextCursor: 'b' },
          ]),
          listing,
          { limit: 1 },
        ),
      ),
    ).toEqual([1]);
    const loop = scripted([
      { items: [1], nextCursor: 'a' },
      { items: [2], nextCursor: 'a' },
      { items: [3], nextCursor: 'z' },
    ]);
    expect(await all(paginateItems(loop, listing, { limit: 1 }))).toEqual([1, 2]);
  });

  it('honours hasMore: false when sent, and maxPages', async () => {
    expect(
      await all(
        paginateItems(scripted([{ items: [1], nextCursor: 'a', hasMore: false }]), listing, { limit: 1 }),
      ),
    ).toEqual([1]);
    const many = scripted(Array.from({ length: 10 }, (_, i) => ({ items: [i], nextCursor: `c${i}` })));
    expect(await all(paginatePages(many, listing, { limit: 1, maxPages: 3 }))).toHaveLength(3);
  });

  it('cursorEnd stops once the next cursor is older, for v2 and v1 cursors alike', async () => {
    const t = Date.UTC(2026, 9, 1);
    const v2 = scripted([
      { items: [1], nextCursor: encodeCursorV2(t + 2000) },
      { items: [2], nextCursor: encodeCursorV2(t - 1) },
      { items: [3], nextCursor: encodeCursorV2(t - 2) },
    ]);
    expect(await all(paginateItems(v2, listing, { limit: 1, cursorEnd: new Date(t).toISOString() }))).toEqual(
      [1, 2],
    );
    const v1 = scripted([
      { items: [1], nextCursor: encodeCursorV1(t + 2000, undefined, 'date') },
      { items: [2], nextCursor: encodeCursorV1(t - 1000, undefined, 'date') },
      { items: [3], nextCursor: null },
    ]);
    expect(
      await all(
        paginateItems(v1, listing, {
          limit: 1,
          cursorEnd: 'Thu Oct 01 2026 00:00:00 GMT+0000 (Coordinated Universal Time)',
        }),
      ),
    ).toEqual([1, 2]);
  });
});
