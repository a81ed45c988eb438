/* eslint-disable @typescript-eslint/require-await -- recording fakes implement async interfaces */
import { describe, expect, it } from 'vitest';
import {
  parseFilters,
  parseResources,
  planBackfill,
  UNFILTERED_TRANSACTION_WINDOW_MS,
  type PlannerSource,
} from '../../../../src/pipeline/planner/index.js';

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
    const { run, slices, planning } = await planBackfill({ resources: ['donations'], runId: 'r' }, src, {
      targetRows: 1000,
      plan: 'requests',
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
    expect(planning).toEqual({ plan: 'requests', probeRounds: 1, probePages: 16, emptyWalks: 0 });
    // Each slice expects its share of the ~5000 estimated rows in pages of 100, plus the page that ends its read.
    const share = Math.ceil(5000 / slices.length / 100) + 1;
    for (const s of slices) expect(s.expectedPages).toBeGreaterThanOrEqual(share - 1);
    for (const s of slices) expect(s.expectedPages).toBeLessThanOrEqual(share + 1);
  });

  it('walks users per country, full-history transactions per user, the feed over 72 h', async () => {
    const src = fakeSource();
    const users = await planBackfill({ resources: ['users'] }, src, { now: () => NOW, plan: 'requests' });
    expect(users.slices.map((s) => s.filters['countryId'])).toEqual(['c1', 'c2', 'c3']);
    const full = await planBackfill({ resources: ['transactions'], fullHistory: true }, src, {
      now: () => NOW,
      plan: 'requests',
    });
    expect(full.slices.map((s) => s.filters['userId'])).toEqual(['u1', 'u2']);
    expect(full.slices.every((s) => s.start === 0 && s.end === NOW)).toBe(true);
    const feed = await planBackfill({ resources: ['transactions'] }, src, {
      now: () => NOW,
      targetRows: 100_000,
      plan: 'requests',
    });
    expect(feed.slices).toHaveLength(1);
    expect(feed.slices[0]!.start).toBe(NOW - UNFILTERED_TRANSACTION_WINDOW_MS);
  });

  it('plans for rounds: batched probe rounds, then slices of at most one page each, covering the range', async () => {
    const src = fakeSource();
    const since = NOW - 200 * HOUR; // 2000 rows
    const { slices, planning } = await planBackfill({ resources: ['donations'], since, runId: 'r' }, src, {
      now: () => NOW,
      plan: 'rounds',
    });
    expect(planning.plan).toBe('rounds');
    expect(planning.probeRounds).toBeLessThanOrEqual(3);
    expect(planning.probePages).toBe(src.probes);
    const sorted = [...slices].sort((a, b) => a.start - b.start);
    expect(sorted[0]!.start).toBe(since);
    expect(sorted.at(-1)!.end).toBe(NOW);
    for (let i = 1; i < sorted.length; i++) expect(sorted[i]!.start).toBe(sorted[i - 1]!.end);
    const rows = (a: number, b: number): number => times.filter((t) => t >= a && t < b).length;
    for (const s of slices) expect(rows(s.start, s.end)).toBeLessThanOrEqual(99);
    expect(slices.length).toBeLessThanOrEqual(Math.ceil(2000 / 99) + 2);
    for (const s of slices) expect(s.expectedPages).toBe(1);
  });

  it('auto plans for requests while the budget binds, for rounds otherwise', async () => {
    const binding = { ...fakeSource(), budgetBinds: () => true };
    const a = await planBackfill({ resources: ['donations'], since: NOW - 200 * HOUR }, binding, {
      now: () => NOW,
    });
    expect(a.planning.plan).toBe('requests');
    expect(a.slices).toHaveLength(1); // 2000 rows < targetRows
    const free = { ...fakeSource(), budgetBinds: () => false };
    const b = await planBackfill({ resources: ['donations'], since: NOW - 200 * HOUR }, free, {
      now: () => NOW,
    });
    expect(b.planning.plan).toBe('rounds');
    expect(b.slices.length).toBeGreaterThan(20);
    await expect(
      planBackfill({ resources: ['donations'] }, free, { plan: 'fast' as 'auto', now: () => NOW }),
    ).rejects.toThrow(/plan/);
  });

  it('plans per-user walks for rounds without probing them: one whole-range slice per user', async () => {
    const probed: string[] = [];
    const src: PlannerSource = {
      probe: (_resource, filters) => async (before, limit) => {
        probed.push(String(filters['userId'] ?? '?'));
        return times.filter((t) => t < before).slice(0, limit);
      },
      countryIds: async () => [],
      userIds: async () => ['busy', 'idle', 'small'],
    };
    const { slices, planning, users } = await planBackfill(
      { resources: ['transactions'], fullHistory: true, runId: 'r' },
      src,
      { now: () => NOW, plan: 'rounds' },
    );
    expect(users?.ids).toEqual(['busy', 'idle', 'small']);
    // A user's first page is its probe: probing would read that page twice.
    expect(probed).toEqual([]);
    expect(planning).toEqual({ plan: 'rounds', probeRounds: 0, probePages: 0, emptyWalks: 0 });
    expect(slices.map((s) => [s.filters['userId'], s.start, s.end])).toEqual([
      ['busy', 0, NOW],
      ['idle', 0, NOW],
      ['small', 0, NOW],
    ]);
    expect(new Set(slices.map((s) => s.sliceId)).size).toBe(slices.length);
    // Unprobed: the planner does not know how many pages a user's walk reads.
    for (const s of slices) expect(s.expectedPages).toBeUndefined();
  });

  it('plans a listing that fits in its head page as one slice, without searching for its earliest row', async () => {
    const few = times.slice(0, 40); // 40 parties
    for (const plan of ['rounds', 'requests'] as const) {
      let probes = 0;
      const src: PlannerSource = {
        ...fakeSource(),
        probe: () => async (before, limit) => {
          probes++;
          return few.filter((t) => t < before).slice(0, limit);
        },
      };
      const { slices } = await planBackfill({ resources: ['parties'], runId: 'r' }, src, {
        now: () => NOW,
        plan,
      });
      expect(probes).toBe(1);
      expect(slices.map((s) => [s.start, s.end])).toEqual([[0, NOW]]);
    }
    const none: PlannerSource = { ...fakeSource(), probe: () => async () => [] };
    expect((await planBackfill({ resources: ['parties'] }, none, { now: () => NOW })).slices).toEqual([]);
  });

  it('plans every resource at the same time, so their probe rounds are shared', async () => {
    let inFlight = 0;
    let most = 0;
    const src: PlannerSource = {
      ...fakeSource(),
      probe: () => async (before: number, limit: number) => {
        inFlight++;
        most = Math.max(most, inFlight);
        await new Promise((r) => setTimeout(r, 1));
        inFlight--;
        return times.filter((t) => t < before).slice(0, limit);
      },
    };
    const { slices, planning } = await planBackfill(
      { resources: ['donations', 'articles'], since: NOW - 200 * HOUR, runId: 'r' },
      src,
      { now: () => NOW, plan: 'rounds' },
    );
    expect(most).toBe(100); // both walks' 50 first-round probes at once
    expect(planning.probeRounds).toBeLessThanOrEqual(3); // the longest walk's, not the sum
    expect(slices.findIndex((s) => s.resource === 'articles')).toBe(
      slices.filter((s) => s.resource === 'donations').length,
    ); // added in the request's order
  });

  it('parses flags and names bad ones', () => {
    expect(parseFilters(['countryId=x', 'a=b=c'])).toEqual({ countryId: 'x', a: 'b=c' });
    expect(() => parseFilters(['nope'])).toThrow(/filter/);
    expect(parseResources(['all'])).toHaveLength(6);
    expect(() => parseResources(['users', 'cats'])).toThrow(/resources/);
  });
});
