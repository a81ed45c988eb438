/* eslint-disable @typescript-eslint/require-await -- recording fakes implement async interfaces */
import { describe, expect, it } from 'vitest';
import { findEarliest, probeDensity } from '../../../src/planner/probe-density.js';

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
