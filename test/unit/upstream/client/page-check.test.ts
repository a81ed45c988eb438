/** Issue 48, items 3 and 4: the checks of one slice page and where the read goes next (pure). */
import { describe, expect, it } from 'vitest';
import {
  checkPage,
  MAX_EMPTY_FOLLOWS,
  type PageCheckInput,
} from '../../../../src/upstream/client/page-check.js';
import { encodeCursorV2 } from '../../../../src/upstream/client/cursor.js';
import { ValidationError } from '../../../../src/foundation/errors/index.js';

const T0 = Date.parse('2026-11-01T00:00:00.000Z');
const oid = (n: number): string => n.toString(16).padStart(24, '0');
const row = (n: number): Record<string, unknown> => ({
  _id: oid(n),
  createdAt: new Date(T0 - n * 1000).toISOString(),
});
const rows = (from: number, count: number) => Array.from({ length: count }, (_, i) => row(from + i));

function input(over: Partial<PageCheckInput>): PageCheckInput {
  return {
    items: rows(1, 3),
    nextCursor: encodeCursorV2(T0 - 3000, oid(3)),
    hasMore: undefined,
    cursor: 'v2.at',
    pageLimit: 3,
    shortEnds: true,
    reachedStart: false,
    seen: new Set(),
    previousIds: new Set(),
    emptyFollows: 0,
    lowerBound: T0 - 100_000,
    sortField: 'createdAt',
    format: 'v2',
    ...over,
  };
}

const thrown = (f: () => unknown): ValidationError => {
  try {
    f();
  } catch (e) {
    return e as ValidationError;
  }
  throw new Error('did not throw');
};

describe('checkPage', () => {
  it('a well-formed full page: follow its cursor, no event', () => {
    const o = input({});
    expect(checkPage(o)).toEqual({ next: o.nextCursor });
  });

  it('a page longer than its limit is a retriable error naming the cursor and the counts', () => {
    const e = thrown(() => checkPage(input({ items: rows(1, 4) })));
    expect(e).toBeInstanceOf(ValidationError);
    expect(e.retriable).toBe(true);
    expect(e.message).toBe('page read at cursor v2.at has 4 items for limit 3');
  });

  it('a repeated cursor (the one read at, or one already followed) is an error that names it', () => {
    expect(thrown(() => checkPage(input({ nextCursor: 'v2.at' }))).message).toBe(
      'page read at cursor v2.at gave cursor v2.at again: the cursor does not move',
    );
    const e = thrown(() => checkPage(input({ nextCursor: 'v2.old', seen: new Set(['v2.old']) })));
    expect(e.message).toContain('gave cursor v2.old again');
  });

  it('a cursor that keeps changing while the rows repeat is an error naming the row', () => {
    const e = thrown(() => checkPage(input({ previousIds: new Set([oid(2)]), nextCursor: 'v2.new' })));
    expect(e.message).toBe(
      `page read at cursor v2.at repeats row ${oid(2)} of the page before: the cursor does not move`,
    );
  });

  it('an empty page echoing its cursor, or with none, is the end (no event)', () => {
    expect(checkPage(input({ items: [], nextCursor: 'v2.at' }))).toEqual({ next: null });
    expect(checkPage(input({ items: [], nextCursor: undefined }))).toEqual({ next: null });
  });

  it('an empty page whose cursor moved inside the slice is followed (counted), at most MAX_EMPTY_FOLLOWS in a row', () => {
    const moved = encodeCursorV2(T0 - 50_000, oid(50));
    expect(checkPage(input({ items: [], nextCursor: moved }))).toEqual({
      next: moved,
      event: 'empty-page-followed',
    });
    expect(checkPage(input({ items: [], nextCursor: moved, emptyFollows: MAX_EMPTY_FOLLOWS }))).toEqual({
      next: null,
      event: 'empty-pages-stopped',
    });
    // Below the slice's start: nothing of the slice remains, the end.
    const below = encodeCursorV2(T0 - 200_000, oid(200));
    expect(checkPage(input({ items: [], nextCursor: below }))).toEqual({ next: null });
  });

  it("a full page without a cursor goes on from its last row's bound (counted)", () => {
    expect(checkPage(input({ nextCursor: undefined }))).toEqual({
      next: encodeCursorV2(T0 - 3000, oid(3)),
      event: 'missing-cursor-continued',
    });
    // No usable last row: stopped, counted.
    expect(checkPage(input({ nextCursor: undefined, items: [row(1), row(2), { note: 'no id' }] }))).toEqual({
      next: null,
      event: 'missing-cursor-stopped',
    });
  });

  it('a short page ends the read as before (shortPages end), an item below the start too', () => {
    expect(checkPage(input({ items: rows(1, 2) }))).toEqual({ next: null });
    expect(checkPage(input({ reachedStart: true }))).toEqual({ next: null });
  });
});
