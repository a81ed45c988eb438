/* eslint-disable @typescript-eslint/require-await -- recording fakes implement async interfaces */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  cutRange,
  planSlices,
  splitEvenly,
  splitRemaining,
  type TimeRange,
} from '../../../src/planner/slice-range.js';
import { findEarliest, probeDensity } from '../../../src/planner/probe-density.js';

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

describe('density probe', () => {
  // A world of rows at known times; the probe returns the newest `limit` times strictly older than `before`.
  const times = [
    ...Array.from({ length: 3000 }, (_, i) => 900_000 + i * 10), // dense recent stretch
    ...Array.from({ length: 50 }, (_, i) => 100_000 + i * 1000), // sparse old stretch
  ].sort((a, b) => b - a);
  const calls: number[] = [];
  const probe = async (before: number, limit: number): Promise<number[]> => {
    calls.push(before);
    return times.filter((t) => t < before).slice(0, limit);
  };

  it('estimates rows per bucket, exact where a page ends inside the bucket', async () => {
    const est = await probeDensity(probe, { start: 0, end: 1_000_000 }, { buckets: 10, limit: 100 });
    expect(est.edges).toHaveLength(11);
    expect(est.rows[0]).toBe(0);
    expect(est.rows[1]).toBe(50);
    const total = est.rows.reduce((a, b) => a + b, 0);
    expect(total).toBeGreaterThan(2500);
    expect(total).toBeLessThan(4000);
  });

  it('finds the earliest row within the precision, and null for an empty range', async () => {
    const earliest = await findEarliest(probe, 1_000_000, 0, { precisionMs: 100 });
    expect(earliest).not.toBeNull();
    expect(earliest!).toBeLessThanOrEqual(100_000);
    expect(earliest!).toBeGreaterThan(100_000 - 100);
    expect(await findEarliest(probe, 50_000)).toBeNull();
  });
});
