/* eslint-disable @typescript-eslint/require-await -- recording fakes implement async interfaces */
import { describe, expect, it } from 'vitest';
import { findEarliest, probeDensity, probeRows } from '../../../../src/pipeline/planner/probe-density.js';
import { planRowSlices } from '../../../../src/foundation/slicing/index.js';

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

describe('probeRows', () => {
  /** A feed of rows at the given times; records every probe and counts rounds by awaiting ticks. */
  function feed(times: number[]): {
    probe: (before: number, limit: number) => Promise<number[]>;
    calls: number[];
  } {
    const sorted = [...times].sort((a, b) => b - a);
    const calls: number[] = [];
    return {
      calls,
      probe: async (before, limit) => {
        calls.push(before);
        return sorted.filter((t) => t < before).slice(0, limit);
      },
    };
  }
  const known = (r: Awaited<ReturnType<typeof probeRows>>): number =>
    r.stretches.reduce((n, s) => n + (s.times?.length ?? 0), 0);

  it('knows every row of a sparse range after one round of bucket probes', async () => {
    const times = Array.from({ length: 400 }, (_, i) => 1_000 + i * 97);
    const f = feed(times);
    const r = await probeRows(f.probe, { start: 0, end: 50_000 }, { buckets: 10, limit: 100 });
    expect(r.rounds).toBe(1);
    expect(r.probes).toBe(10);
    expect(known(r)).toBe(400);
    expect(r.stretches.every((s) => s.times !== undefined)).toBe(true);
  });

  it('refines dense buckets in later rounds until every row is known, covering the range exactly', async () => {
    const times = [
      ...Array.from({ length: 3000 }, (_, i) => 900_000 + i * 10),
      ...Array.from({ length: 50 }, (_, i) => 100_000 + i * 1000),
    ];
    const f = feed(times);
    const range = { start: 0, end: 1_000_000 };
    const r = await probeRows(f.probe, range, { buckets: 10, limit: 100, maxRounds: 4 });
    expect(r.rounds).toBeGreaterThan(1);
    expect(known(r)).toBe(3050);
    const s = r.stretches;
    expect(s[0]?.start).toBe(0);
    expect(s[s.length - 1]?.end).toBe(1_000_000);
    for (let i = 1; i < s.length; i++) expect(s[i]?.start).toBe(s[i - 1]?.end);
    // The plan then needs about one page per 99 rows.
    const slices = planRowSlices(range, s, { rowsPerSlice: 99 });
    expect(slices.length).toBeLessThanOrEqual(Math.ceil(3050 / 99) + 2);
  });

  it('estimates what is left after maxRounds, and finds a long history at growing depths', async () => {
    // One user's full history: 1 000 rows over the last ~10 days of a range reaching back to 0.
    const end = 2_000_000_000_000;
    const times = Array.from({ length: 1000 }, (_, i) => end - 1000 - i * 864_000);
    const f = feed(times);
    const r = await probeRows(f.probe, { start: 0, end }, { buckets: 1, limit: 100, maxRounds: 3 });
    expect(r.rounds).toBe(3);
    const total = r.stretches.reduce((n, s) => n + s.rows, 0);
    expect(total).toBeGreaterThan(700);
    expect(total).toBeLessThan(1500);
    // Rows are located: nothing is estimated far below the oldest row.
    const oldest = Math.min(...times);
    const far = r.stretches.filter((s) => s.end < oldest - 100 * 864_000).reduce((n, s) => n + s.rows, 0);
    expect(far).toBe(0);
  });

  it('keeps a same-millisecond burst as one unit and reads on below it', async () => {
    const times = [...Array.from({ length: 150 }, () => 5_000), 4_000, 3_000];
    const f = feed(times);
    const r = await probeRows(f.probe, { start: 0, end: 10_000 }, { buckets: 1, limit: 100 });
    const burst = r.stretches.find((s) => s.start === 5_000);
    expect(burst).toEqual({ start: 5_000, end: 5_001, rows: 100 });
    expect(known(r)).toBe(2);
  });

  it('names a bad option', async () => {
    await expect(probeRows(feed([]).probe, { start: 0, end: 10 }, { buckets: 0 })).rejects.toThrow(/buckets/);
  });
});
