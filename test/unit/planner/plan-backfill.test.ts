/* eslint-disable @typescript-eslint/require-await -- recording fakes implement async interfaces */
import { describe, expect, it } from 'vitest';
import {
  parseFilters,
  parseResources,
  planBackfill,
  UNFILTERED_TRANSACTION_WINDOW_MS,
  type PlannerSource,
} from '../../../src/planner/index.js';

const HOUR = 3_600_000;
const NOW = 1_000 * HOUR;
// 5000 rows, one every 6 minutes, ending at NOW.
const times = Array.from({ length: 5000 }, (_, i) => NOW - 1 - i * 360_000);

function fakeSource(): PlannerSource & { probes: number } {
  const s = {
    probes: 0,
    probe: () => async (before: number, limit: number) => {
      s.probes += 1;
      return times.filter((t) => t < before).slice(0, limit);
    },
    countryIds: async () => ['c1', 'c2', 'c3'],
    userIds: async () => ['u1', 'u2'],
  };
  return s;
}

describe('planBackfill', () => {
  it('finds the earliest record, probes density and partitions [earliest, until) in rows', async () => {
    const src = fakeSource();
    const { run, slices } = await planBackfill({ resources: ['donations'], runId: 'r' }, src, {
      targetRows: 1000,
      now: () => NOW,
    });
    expect(run.slices).toBe(slices.length);
    expect(slices.length).toBeGreaterThanOrEqual(4);
    expect(slices.length).toBeLessThanOrEqual(7);
    const sorted = [...slices].sort((a, b) => a.start - b.start);
    expect(sorted[0]!.start).toBeLessThanOrEqual(Math.min(...times));
    expect(sorted.at(-1)!.end).toBe(NOW);
    for (let i = 1; i < sorted.length; i++) expect(sorted[i]!.start).toBe(sorted[i - 1]!.end);
    expect(new Set(slices.map((s) => s.sliceId)).size).toBe(slices.length);
    for (const s of slices) expect(s.sliceId).not.toContain(':');
  });

  it('walks users per country, full-history transactions per user, the feed over 72 h', async () => {
    const src = fakeSource();
    const users = await planBackfill({ resources: ['users'] }, src, { now: () => NOW });
    expect(users.slices.map((s) => s.filters['countryId'])).toEqual(['c1', 'c2', 'c3']);
    const full = await planBackfill({ resources: ['transactions'], fullHistory: true }, src, {
      now: () => NOW,
    });
    expect(full.slices.map((s) => s.filters['userId'])).toEqual(['u1', 'u2']);
    expect(full.slices.every((s) => s.start === 0 && s.end === NOW)).toBe(true);
    const feed = await planBackfill({ resources: ['transactions'] }, src, {
      now: () => NOW,
      targetRows: 100_000,
    });
    expect(feed.slices).toHaveLength(1);
    expect(feed.slices[0]!.start).toBe(NOW - UNFILTERED_TRANSACTION_WINDOW_MS);
  });

  it('parses flags and names bad ones', () => {
    expect(parseFilters(['countryId=x', 'a=b=c'])).toEqual({ countryId: 'x', a: 'b=c' });
    expect(() => parseFilters(['nope'])).toThrow(/filter/);
    expect(parseResources(['all'])).toHaveLength(6);
    expect(() => parseResources(['users', 'cats'])).toThrow(/resources/);
  });
});
