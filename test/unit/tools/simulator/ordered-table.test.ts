import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  createOrderedTable,
  indexView,
  listRows,
  tableView,
  type OrderedTable,
  type RowView,
} from '../../../../tools/simulator/ordered-table.js';
import type { CursorBound } from '../../../../tools/simulator/cursor.js';

const BASE = Date.parse('2026-10-01T00:00:00.000Z');

/** A table whose times cluster heavily (many rows per millisecond and per second). */
function table(offsets: number[]): OrderedTable {
  const times = Float64Array.from(offsets, (o) => BASE + o);
  const secs = Uint32Array.from(times, (t) => Math.floor(t / 1000));
  return createOrderedTable('t', 5, times, secs);
}

const keyOf = (t: OrderedTable, row: number): [number, string] => [t.time(row), t.oid(row)];
const before = (a: [number, string], b: [number, string]): boolean =>
  a[0] < b[0] || (a[0] === b[0] && a[1] < b[1]);

function walk(
  t: OrderedTable,
  view: RowView,
  limit: number,
  mode: 'v2' | 'v1',
  first?: CursorBound,
): number[] {
  const out: number[] = [];
  let bound = first;
  for (;;) {
    const { rows } = listRows(t, view, { bound, limit, mode });
    if (rows.length === 0) return out;
    out.push(...rows);
    const last = rows[rows.length - 1] as number;
    bound = {
      format: mode,
      timeMs: mode === 'v1' ? Math.floor(t.time(last) / 1000) * 1000 : t.time(last),
      oid: t.oid(last),
    };
  }
}

const offsets = fc.array(fc.oneof(fc.integer({ min: 0, max: 5 }), fc.integer({ min: 0, max: 5000 })), {
  minLength: 0,
  maxLength: 400,
});

describe('ordered table', () => {
  it('keeps rows ascending by (time, _id) with unique ids whose first 4 bytes are the creation seconds', () => {
    fc.assert(
      fc.property(offsets, (o) => {
        const t = table(o);
        const seen = new Set<string>();
        for (let row = 0; row < t.length; row++) {
          const id = t.oid(row);
          expect(id).toMatch(/^[0-9a-f]{24}$/);
          expect(parseInt(id.slice(0, 8), 16)).toBe(Math.floor(t.time(row) / 1000));
          seen.add(id);
          if (row > 0) expect(before(keyOf(t, row - 1), keyOf(t, row))).toBe(true);
          expect(t.find(id)).toBe(row);
          expect(t.rowOf(t.ident(row))).toBe(row);
        }
        expect(seen.size).toBe(t.length);
      }),
      { numRuns: 50 },
    );
  });

  it('v2 walk at any page size yields every row once, newest first, across same-millisecond ties', () => {
    fc.assert(
      fc.property(offsets, fc.integer({ min: 1, max: 100 }), (o, limit) => {
        const t = table(o);
        const rows = walk(t, tableView(t), limit, 'v2');
        expect(rows).toEqual(Array.from({ length: t.length }, (_, i) => t.length - 1 - i));
      }),
      { numRuns: 60 },
    );
  });

  it('a v2 bound is strict on (time, _id): 000… excludes its millisecond, fff… includes it', () => {
    fc.assert(
      fc.property(offsets, fc.integer({ min: -10, max: 5010 }), (o, cut) => {
        const t = table(o);
        const at = BASE + cut;
        const lo = walk(t, tableView(t), 100, 'v2', {
          format: 'v2',
          timeMs: at,
          oid: '000000000000000000000000',
        });
        const hi = walk(t, tableView(t), 100, 'v2', {
          format: 'v2',
          timeMs: at,
          oid: 'ffffffffffffffffffffffff',
        });
        expect(lo.every((row) => t.time(row) < at)).toBe(true);
        expect(lo.length).toBe(
          Array.from({ length: t.length }, (_, r) => r).filter((r) => t.time(r) < at).length,
        );
        expect(hi.length).toBe(
          Array.from({ length: t.length }, (_, r) => r).filter((r) => t.time(r) <= at).length,
        );
      }),
      { numRuns: 60 },
    );
  });

  it('synthetic v2 cursors at arbitrary instants partition the rows exactly', () => {
    fc.assert(
      fc.property(offsets, fc.array(fc.integer({ min: -5, max: 5005 }), { maxLength: 12 }), (o, cuts) => {
        const t = table(o);
        const edges = [...new Set(cuts.map((c) => BASE + c))].sort((a, b) => a - b);
        const bounds = [...edges, BASE + 10_000];
        const slices: number[][] = [];
        let start = -Infinity;
        for (const end of bounds) {
          // A slice [start, end) read newest first from v2(end, 000…0) until a row older than start.
          const rows = walk(t, tableView(t), 7, 'v2', {
            format: 'v2',
            timeMs: end,
            oid: '000000000000000000000000',
          });
          slices.push(rows.filter((r) => t.time(r) >= start));
          start = end;
        }
        const all = slices.reverse().flat();
        expect(all).toEqual(Array.from({ length: t.length }, (_, i) => t.length - 1 - i));
      }),
      { numRuns: 50 },
    );
  });

  it('v1 walk (second precision) still yields every row exactly once', () => {
    fc.assert(
      fc.property(offsets, fc.integer({ min: 1, max: 50 }), (o, limit) => {
        const t = table(o);
        const rows = walk(t, tableView(t), limit, 'v1');
        expect(rows.length).toBe(t.length);
        expect(new Set(rows).size).toBe(t.length);
        // Order: whole second descending, then _id descending.
        for (let i = 1; i < rows.length; i++) {
          const a = rows[i - 1] as number;
          const b = rows[i] as number;
          const sa = Math.floor(t.time(a) / 1000);
          const sb = Math.floor(t.time(b) / 1000);
          expect(sa > sb || (sa === sb && t.oid(a) > t.oid(b))).toBe(true);
        }
      }),
      { numRuns: 60 },
    );
  });

  it('posting lists page like the table, and the time floor stops a walk', () => {
    const t = table(Array.from({ length: 300 }, (_, i) => Math.floor(i / 3)));
    for (let row = 0; row < t.length; row++) t.addToIndex('parity', t.ident(row) % 2, row);
    const even = walk(t, indexView(t, 'parity', 0), 9, 'v2');
    expect(even.map((r) => t.ident(r) % 2)).toEqual(even.map(() => 0));
    expect(even.length).toBe(150);
    const floor = BASE + 50;
    const { rows, more } = listRows(t, tableView(t), { limit: 1000, mode: 'v2', minTimeMs: floor });
    expect(more).toBe(false);
    expect(rows.every((r) => t.time(r) >= floor)).toBe(true);
    expect(rows.length).toBe(150);
    expect(indexView(t, 'parity', 7).length).toBe(0);
  });

  it('appends sort last', () => {
    const t = table([0, 0, 1]);
    const row = t.append(BASE + 1, Math.floor((BASE + 1) / 1000));
    expect(row).toBe(3);
    expect(before(keyOf(t, 2), keyOf(t, 3))).toBe(true);
    expect(t.find(t.oid(3))).toBe(3);
  });
});
