/**
 * The slicing core's property tests, once for both of its users (the planner's and the client's former tests,
 * merged): every plan and every split partitions its range exactly.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  cutRange,
  planFirstRound,
  planSliceEdges,
  planSlices,
  planSplit,
  splitEvenly,
  splitRemaining,
  type TimeRange,
} from '../../../../src/foundation/slicing/index.js';

/** Exact partition: sorted by start, first starts at range.start, each ends where the next starts, last ends at end. */
function expectPartition(range: TimeRange, slices: TimeRange[]): void {
  const s = [...slices].sort((a, b) => a.start - b.start);
  expect(s[0]?.start).toBe(range.start);
  expect(s[s.length - 1]?.end).toBe(range.end);
  for (const x of s) expect(x.start).toBeLessThan(x.end);
  for (let i = 1; i < s.length; i++) expect(s[i]?.start).toBe(s[i - 1]?.end);
}

const rangeArb = fc
  .tuple(fc.integer({ min: 0, max: 2_000_000_000_000 }), fc.integer({ min: 1, max: 400_000_000_000 }))
  .map(([start, w]) => ({ start, end: start + w }));

/** Every integer time point falls in exactly one slice (half-open). */
function owners(slices: TimeRange[], t: number): number {
  return slices.filter((s) => s.start <= t && t < s.end).length;
}

describe('slice planning', () => {
  it('cutRange partitions exactly whatever the cuts', () => {
    fc.assert(
      fc.property(
        rangeArb,
        fc.array(fc.integer({ min: -10, max: 2_500_000_000_000 }), { maxLength: 30 }),
        (r, cuts) => {
          expectPartition(r, cutRange(r, cuts));
        },
      ),
    );
  });

  it('splitEvenly partitions exactly and every point has one owner', () => {
    fc.assert(
      fc.property(
        rangeArb,
        fc.integer({ min: 1, max: 200 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (r, n, f) => {
          const slices = splitEvenly(r, n);
          expectPartition(r, slices);
          expect(slices.length).toBeLessThanOrEqual(n);
          const t = r.start + Math.floor((r.end - r.start - 1) * f);
          expect(owners(slices, t)).toBe(1);
          expect(owners(slices, r.end)).toBe(0);
          expect(owners(slices, r.start - 1)).toBe(0);
        },
      ),
    );
  });

  it('planSlices partitions exactly and sizes slices by rows', () => {
    fc.assert(
      fc.property(
        rangeArb,
        fc.array(fc.integer({ min: 0, max: 50_000 }), { minLength: 1, maxLength: 40 }),
        fc.integer({ min: 1, max: 20_000 }),
        (r, rows, targetRows) => {
          const edges = splitEvenly(r, rows.length).map((s) => s.start);
          edges.push(r.end);
          const usable = rows.slice(0, edges.length - 1);
          const slices = planSlices(r, { edges, rows: usable }, { targetRows, maxSlices: 500 });
          expectPartition(r, slices);
          expect(slices.length).toBeLessThanOrEqual(501);
          // Newest first: the order slices are read in.
          for (let i = 1; i < slices.length; i++) expect(slices[i]!.start).toBeLessThan(slices[i - 1]!.start);
          const total = usable.reduce((a, b) => a + b, 0);
          if (total < targetRows) expect(slices.length).toBe(1);
        },
      ),
    );
  });

  it('planSlices gives a dense bucket many slices and an empty stretch none', () => {
    const r = { start: 0, end: 1000 };
    const slices = planSlices(r, { edges: [0, 500, 1000], rows: [0, 10_000] }, { targetRows: 1000 });
    expectPartition(r, slices);
    expect(slices.length).toBe(10);
    expect(slices.filter((s) => s.end <= 500)).toHaveLength(0);
  });

  it('splitRemaining: keep + children cover [start, upper] exactly', () => {
    fc.assert(
      fc.property(
        rangeArb,
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.integer({ min: 2, max: 16 }),
        (r, f, parts) => {
          const upper = r.start + Math.floor((r.end - r.start) * f);
          const split = splitRemaining(r, upper, parts);
          if (split === null) {
            expect(upper - r.start).toBeLessThan(parts >= 2 ? 2 : Infinity);
            return;
          }
          expect(split.keepStart).toBeGreaterThan(r.start);
          expect(split.keepStart).toBeLessThanOrEqual(upper);
          expectPartition({ start: r.start, end: split.keepStart }, split.children);
        },
      ),
    );
  });

  it('rejects an empty range, naming it', () => {
    expect(() => splitEvenly({ start: 5, end: 5 }, 2)).toThrow(/range/);
    expect(() => planSlices({ start: 0, end: 10 }, { edges: [0, 10], rows: [1] }, { targetRows: 0 })).toThrow(
      /targetRows/,
    );
  });
});

const T0 = Date.UTC(2026, 10, 1);

describe('planSliceEdges', () => {
  it('partitions [oldest, top) into adjacent slices, newest first, inner edges on the grid', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10_000 }),
        fc.integer({ min: 1, max: 500 }),
        fc.constantFrom(1, 1000),
        (span, slice, align) => {
          const anchor = T0 + 100_000;
          const oldest = anchor - span * 37;
          const plan = planSliceEdges(oldest, Infinity, anchor, slice * 13, align);
          expect(plan[0]?.end).toBe(Infinity);
          expect(plan[plan.length - 1]?.start).toBe(oldest);
          for (let i = 1; i < plan.length; i++) {
            expect(plan[i]?.end).toBe(plan[i - 1]?.start);
            const edge = plan[i]?.end ?? 0;
            expect(edge % align).toBe(0);
          }
        },
      ),
      { numRuns: 40 },
    );
  });

  it('refuses a grid of more than a million slices, naming timeSliceDays', () => {
    expect(() => planSliceEdges(0, 10_000_000, 10_000_000, 1)).toThrow(/timeSliceDays/);
  });
});

describe('splitting a slice while reading', () => {
  it('splitRemaining with alignment: cuts on the grid, keep + children cover [start, keepStart) exactly', () => {
    fc.assert(
      fc.property(
        rangeArb,
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.integer({ min: 2, max: 64 }),
        fc.constantFrom(1, 1000),
        fc.boolean(),
        (r, f, parts, align, openEnd) => {
          const upper = r.start + Math.floor((r.end - r.start) * f);
          const slice = openEnd ? { start: r.start, end: Infinity } : r;
          const split = splitRemaining(slice, upper, parts, align);
          if (split === null) return;
          expect(split.keepStart % align).toBe(0);
          expect(split.keepStart).toBeGreaterThan(r.start);
          expect(split.keepStart).toBeLessThan(upper);
          expect(split.children.length).toBeLessThan(parts);
          expectPartition({ start: r.start, end: split.keepStart }, split.children);
          for (const c of split.children.slice(1)) expect(c.start % align).toBe(0);
        },
      ),
    );
  });

  it('splitRemaining never splits an open-ended start or a slice narrower than two alignment steps', () => {
    expect(splitRemaining({ start: -Infinity, end: 10_000 }, 5000, 4)).toBeNull();
    expect(splitRemaining({ start: 0, end: 10_000 }, 1999, 4, 1000)).toBeNull();
    expect(splitRemaining({ start: 0, end: 10_000 }, 2000, 4, 1000)).not.toBeNull();
    expect(() => splitRemaining({ start: 5, end: 5 }, 5, 2)).toThrow(/slice/);
  });

  it('planSplit splits only above the threshold, into ceil(estimate / rowsPerPart) parts at most maxParts', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10_000 }),
        fc.integer({ min: 1, max: 100_000 }),
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.integer({ min: 1, max: 5000 }),
        fc.integer({ min: 2, max: 64 }),
        (rowsRead, covered, left, rowsPerPart, maxParts) => {
          const slice = { start: 0, end: left + covered + 1 };
          const progress = { rowsRead, topTime: left + covered, lastTime: left };
          const estimate = (rowsRead * left) / covered;
          const rule = { rowsPerPart, splitAbove: rowsPerPart * 2, maxParts };
          const split = planSplit(slice, progress, rule);
          if (estimate <= rule.splitAbove) expect(split).toBeNull();
          if (split === null) return;
          expect(split.children.length + 1).toBeLessThanOrEqual(
            Math.min(maxParts, Math.ceil(estimate / rowsPerPart)),
          );
          expectPartition({ start: 0, end: split.keepStart }, split.children);
          expect(split.keepStart).toBeLessThan(left);
        },
      ),
    );
  });
});

describe('planFirstRound', () => {
  it('partitions [oldest, top) into at most `parts` slices, newest first, inner edges aligned', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2_000_000_000_000 }),
        fc.integer({ min: 2_000, max: 400_000_000 }),
        fc.integer({ min: 0, max: 100_000 }),
        fc.integer({ min: 1, max: 120 }),
        fc.constantFrom(1, 1000),
        (oldest, width, above, parts, alignMs) => {
          const anchor = oldest + width;
          const top = anchor + above;
          const slices = planFirstRound(oldest, top, anchor, parts, alignMs);
          expectPartition({ start: oldest, end: top }, slices);
          expect(slices.length).toBeLessThanOrEqual(parts);
          for (let i = 1; i < slices.length; i++) {
            expect(slices[i]?.start).toBeLessThan(slices[i - 1]?.start ?? NaN);
            expect((slices[i - 1]?.start ?? NaN) % alignMs).toBe(0);
          }
        },
      ),
    );
  });

  it('reaches the head (top Infinity) and cuts equal widths', () => {
    const slices = planFirstRound(0, Infinity, 48_000, 48);
    expect(slices).toHaveLength(48);
    expect(slices[0]).toEqual({ start: 47_000, end: Infinity });
    expect(slices[47]).toEqual({ start: 0, end: 1_000 });
  });

  it('refuses an open or empty range with one clear error', () => {
    expect(() => planFirstRound(-Infinity, Infinity, 10, 5)).toThrow(/finite range/);
    expect(() => planFirstRound(10, 10, 10, 5)).toThrow(/finite range/);
    expect(() => planFirstRound(0, 10, 10, 0)).toThrow(/parts/);
  });
});
