/**
 * planRowSlices: slices planned from probed row times partition the range exactly, and where every row's time is
 * known each slice holds at most `rowsPerSlice` rows unless one time unit alone holds more.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  planRowSlices,
  rowsWithin,
  planSplit,
  roundSplitRule,
  splitGeometric,
  type TimeRange,
} from '../../../../src/foundation/slicing/index.js';

function expectPartition(range: TimeRange, slices: TimeRange[]): void {
  const s = [...slices].sort((a, b) => a.start - b.start);
  expect(s[0]?.start).toBe(range.start);
  expect(s[s.length - 1]?.end).toBe(range.end);
  for (let i = 1; i < s.length; i++) expect(s[i]?.start).toBe(s[i - 1]?.end);
  for (const x of s) expect(x.start).toBeLessThan(x.end);
}

const rowsIn = (times: number[], s: TimeRange): number =>
  times.filter((t) => t >= s.start && t < s.end).length;

describe('planRowSlices', () => {
  it('cuts between known rows: every slice holds at most rowsPerSlice rows, as few slices as that allows', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 9_999 }), { maxLength: 600 }),
        fc.integer({ min: 1, max: 120 }),
        fc.constantFrom(1, 10),
        (raw, per, alignMs) => {
          const range = { start: 0, end: 10_000 };
          const times = [...raw].sort((a, b) => b - a);
          const slices = planRowSlices(range, [{ ...range, times, rows: times.length }], {
            rowsPerSlice: per,
            alignMs,
          });
          expectPartition(range, slices);
          expect(slices[0]?.end).toBe(range.end); // newest first
          for (const s of slices) {
            if (s.start !== range.start) expect(s.start % alignMs).toBe(0);
            const n = rowsIn(times, s);
            // Only a single time unit holding more than a slice's worth may exceed it.
            const units = new Set(
              times.filter((t) => t >= s.start && t < s.end).map((t) => Math.floor(t / alignMs)),
            );
            if (n > per) expect(units.size).toBe(1);
          }
          // Greedy from the newest row: no two neighbours could have been one slice.
          if (alignMs === 1)
            for (let i = 1; i < slices.length; i++) {
              const a = slices[i - 1] as TimeRange;
              const b = slices[i] as TimeRange;
              expect(rowsIn(times, a) + rowsIn(times, b)).toBeGreaterThan(per);
            }
        },
      ),
    );
  });

  it('keeps a same-millisecond burst whole, in a slice of its own', () => {
    const times = [900, 800, ...Array.from({ length: 150 }, () => 500), 200, 100];
    const slices = planRowSlices(
      { start: 0, end: 1000 },
      [{ start: 0, end: 1000, times, rows: times.length }],
      {
        rowsPerSlice: 99,
      },
    );
    expect(slices).toEqual([
      { start: 501, end: 1000 },
      { start: 201, end: 501 }, // the burst alone (nothing else fits beside it)
      { start: 0, end: 201 },
    ]);
  });

  it('cuts estimated stretches evenly at their rate, known ones by row, and respects maxSlices', () => {
    const range = { start: 0, end: 1000 };
    const known = Array.from({ length: 50 }, (_, i) => 999 - i * 10); // 500..999, 50 rows
    const slices = planRowSlices(
      range,
      [
        { start: 500, end: 1000, times: known, rows: 50 },
        { start: 0, end: 500, rows: 400 }, // estimated
      ],
      { rowsPerSlice: 99, rowsPerEstimatedSlice: 50 },
    );
    expectPartition(range, slices);
    expect(slices.length).toBeGreaterThanOrEqual(8);
    expect(slices.length).toBeLessThanOrEqual(10);
    const capped = planRowSlices(range, [{ start: 0, end: 1000, rows: 100_000 }], {
      rowsPerSlice: 99,
      maxSlices: 20,
    });
    expectPartition(range, capped);
    expect(capped.length).toBeLessThanOrEqual(20);
  });

  it('returns the whole range for no rows, and names bad options', () => {
    expect(planRowSlices({ start: 0, end: 10 }, [], { rowsPerSlice: 5 })).toEqual([{ start: 0, end: 10 }]);
    expect(() => planRowSlices({ start: 0, end: 10 }, [], { rowsPerSlice: 0 })).toThrow(/rowsPerSlice/);
    expect(() => planRowSlices({ start: 5, end: 5 }, [], { rowsPerSlice: 1 })).toThrow(/range/);
  });
});

describe('roundSplitRule', () => {
  it('cuts the rest of a slice after one full page into half-page pieces, at most 200', () => {
    const rule = roundSplitRule(100);
    expect(rule).toEqual({
      rowsPerPart: 50,
      splitAbove: 50,
      maxParts: 200,
      alignMs: 1,
      geometricAbove: Infinity,
    });
    // 100 rows read over [10 000, 11 000): the rest [0, 10 000] holds ~1 000 rows -> 20 pieces of ~50.
    const split = planSplit(
      { start: 0, end: 11_000 },
      { rowsRead: 100, topTime: 11_000, lastTime: 10_000 },
      rule,
    );
    expect(split?.children.length).toBe(19); // plus the kept part
    expect(split?.keepStart).toBe(9_500);
    const dense = planSplit(
      { start: 0, end: 11_000 },
      { rowsRead: 100, topTime: 11_000, lastTime: 10_999 },
      rule,
    );
    expect((dense?.children.length ?? 0) + 1).toBe(200);
    expect(
      planSplit({ start: 0, end: 11_000 }, { rowsRead: 3, topTime: 11_000, lastTime: 10_000 }, rule),
    ).toBeNull();
    expect(() => roundSplitRule(0)).toThrow(/pageSize/);
  });
});

describe('splitGeometric (a long, mostly empty rest: a per-user walk from 1970)', () => {
  const DAY = 86_400_000;
  it('cuts the rest at quadrupling depths, partitioning it exactly, in a logarithmic number of pieces', () => {
    const slice = { start: 0, end: 20_000 * DAY };
    // One page read over the newest 3 days.
    const rule = { ...roundSplitRule(100), geometricAbove: 16 };
    const split = planSplit(
      slice,
      { rowsRead: 100, topTime: slice.end, lastTime: slice.end - 3 * DAY },
      rule,
    );
    expect(split).not.toBeNull();
    const { keepStart, children } = split!;
    expect(keepStart).toBe(slice.end - 3 * DAY - 1.5 * DAY); // half the span read stays with the reader
    expect(children[0]!.start).toBe(0);
    for (let i = 1; i < children.length; i++) expect(children[i]!.start).toBe(children[i - 1]!.end);
    expect(children.at(-1)!.end).toBe(keepStart);
    // 20 000 days from a 1.5-day start at x4 per piece: ~9 pieces, not the 200 of an even cut.
    expect(children.length).toBeGreaterThanOrEqual(7);
    expect(children.length).toBeLessThanOrEqual(10);
    const widths = children.map((c) => c.end - c.start).reverse(); // newest first
    for (let i = 1; i < widths.length - 1; i++) expect(widths[i]).toBe(4 * widths[i - 1]!);
    // Without geometricAbove the same progress cuts evenly into the 200 most.
    const even = planSplit(
      slice,
      { rowsRead: 100, topTime: slice.end, lastTime: slice.end - 3 * DAY },
      roundSplitRule(100),
    );
    expect(even!.children.length + 1).toBe(200);
  });

  it('keeps every cut aligned and inside the rest; nothing to split gives null; bad input throws', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 1_000_000 }),
        fc.integer({ min: 2, max: 10_000_000 }),
        fc.integer({ min: 1, max: 100_000 }),
        fc.integer({ min: 2, max: 30 }),
        fc.constantFrom(1, 1000),
        (start, width, span, maxParts, alignMs) => {
          const slice = { start, end: start + width };
          const split = splitGeometric(slice, slice.end, span, maxParts, alignMs);
          if (split === null) return;
          expect(split.children.length + 1).toBeLessThanOrEqual(maxParts);
          expect(split.children[0]!.start).toBe(start);
          expect(split.children.at(-1)!.end).toBe(split.keepStart);
          expect(split.keepStart).toBeLessThan(slice.end);
          for (const c of split.children) {
            expect(c.end).toBeGreaterThan(c.start);
            expect(c.end % alignMs).toBe(0);
          }
        },
      ),
    );
    expect(splitGeometric({ start: 0, end: 1 }, 1, 5)).toBeNull();
    expect(() => splitGeometric({ start: 0, end: 100 }, 100, 0)).toThrow(/span/);
  });
});

describe('rowsWithin', () => {
  it('counts known times exactly and estimated stretches by their overlap', () => {
    const stretches = [
      { start: 0, end: 100, rows: 50 },
      { start: 100, end: 200, times: [199, 150, 120, 101], rows: 4 },
    ];
    expect(rowsWithin({ start: 0, end: 200 }, stretches)).toBe(54);
    expect(rowsWithin({ start: 50, end: 150 }, stretches)).toBe(25 + 2);
    expect(rowsWithin({ start: 200, end: 300 }, stretches)).toBe(0);
  });
});
