/* eslint-disable @typescript-eslint/require-await -- recording fakes implement async interfaces */
/**
 * Full-history transactions planned from a partition proof (issue 23): the proof on the window, partition walks of
 * the proven types, per-user walks of the others, and exactly the per-user plan when nothing is proven. The slices
 * are read back through a model upstream, so "every row once" is checked on what the walks would return.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  planBackfill,
  provePartition,
  UNSPLIT_DEPTH,
  type PlannerSource,
  type EarlySlices,
  type ReadListingPages,
  type SliceJobData,
  type WalkFilters,
} from '../../../../src/pipeline/planner/index.js';
import { readRangeRows } from '../../../../src/pipeline/planner/read-range-rows.js';
import { BUSY_USER_PIECES } from '../../../../src/pipeline/planner/busy-user-pieces.js';
import type { TimeRange } from '../../../../src/foundation/slicing/index.js';

const HOUR = 3_600_000;
const NOW = 10_000 * HOUR;
const WINDOW = 71 * HOUR;

/** A row of the model upstream. */
interface Tx {
  _id: string;
  createdAt: string;
  transactionType: string;
  buyerId: string;
  sellerId?: string;
  /** The countries a countryId filter matches this row under (none, one, or two). */
  countries: string[];
}

const time = (r: Tx): number => Date.parse(r.createdAt);
/** Newest first by (time, id), as the upstream. */
const order = (a: Tx, b: Tx): number => time(b) - time(a) || (a._id < b._id ? 1 : a._id > b._id ? -1 : 0);

function matches(r: Tx, f: WalkFilters): boolean {
  for (const [k, v] of Object.entries(f)) {
    if (k === 'countryId' && !r.countries.includes(String(v))) return false;
    if (k === 'userId' && r.buyerId !== v && r.sellerId !== v) return false;
    if (k === 'transactionType' && !(typeof v === 'string' ? [v] : v).includes(r.transactionType))
      return false;
  }
  return true;
}

/** The model upstream as a planner source; counts pages. The unfiltered feed stops at NOW - 72 h. */
function modelSource(
  rows: Tx[],
  countries: string[],
  users: string[],
): PlannerSource & { pages: number; listings: number } {
  const sorted = [...rows].sort(order);
  const listing = (f: WalkFilters): Tx[] =>
    sorted.filter(
      (r) =>
        matches(r, f) && (Object.keys(f).some((k) => k !== 'transactionType') || time(r) >= NOW - 72 * HOUR),
    );
  const src = {
    pages: 0,
    listings: 0,
    probe: (_resource: string, f: WalkFilters) => async (before: number, limit: number) => {
      src.pages++;
      return listing(f)
        .map(time)
        .filter((t) => t < before)
        .slice(0, limit);
    },
    countryIds: async () => countries,
    userIds: async () => {
      src.listings++;
      return users;
    },
    async *readPages(_resource: string, f: WalkFilters, range: TimeRange, cursor?: string) {
      const all = listing(f);
      // Cursor: the index in `all` of the next row (a compound bound, so ties page exactly).
      let i = cursor === undefined ? all.findIndex((r) => time(r) < range.end) : Number(cursor);
      if (i < 0) i = all.length;
      for (;;) {
        src.pages++;
        const page = all.slice(i, i + 100);
        const items = page.filter((r) => time(r) >= range.start);
        const done = items.length < page.length || page.length < 100;
        i += page.length;
        yield { items: items as unknown as Record<string, unknown>[], cursor: done ? null : String(i) };
        if (done) return;
      }
    },
  };
  return src;
}

/** Every row the planned slices return, with how often (a slice reads its walk's rows in [start, end)). */
function readBack(rows: Tx[], slices: SliceJobData[]): Map<string, number> {
  const reads = new Map<string, number>();
  for (const s of slices)
    for (const r of rows)
      if (matches(r, s.filters) && time(r) >= s.start && time(r) < s.end)
        reads.set(r._id, (reads.get(r._id) ?? 0) + 1);
  return reads;
}

const TYPES = ['trading', 'wage', 'donation', 'openCase'];
const COUNTRIES = ['c0', 'c1', 'c2'];
const USERS = ['u0', 'u1', 'u2', 'u3'];

/** A world: rows over the last 200 h (the window is the last 71 h), each with one country unless told. */
function makeWorld(n: number, country: (i: number, type: string) => string[]): Tx[] {
  return Array.from({ length: n }, (_, i) => {
    const type = TYPES[i % TYPES.length] as string;
    const buyer = USERS[i % USERS.length] as string;
    const seller = type === 'trading' ? (USERS[(i + 1) % USERS.length] as string) : undefined;
    return {
      _id: `t${String(i).padStart(5, '0')}`,
      createdAt: new Date(NOW - 1 - Math.floor((i * 200 * HOUR) / n)).toISOString(),
      transactionType: type,
      buyerId: buyer,
      ...(seller === undefined ? {} : { sellerId: seller }),
      countries: country(i, type),
    };
  });
}

const plan = (src: PlannerSource, extra: Record<string, unknown> = {}, early?: EarlySlices) =>
  planBackfill(
    { resources: ['transactions'], fullHistory: true, runId: 'r' },
    src,
    { now: () => NOW, partition: 'countryId', knownTypes: TYPES, plan: 'rounds', ...extra },
    early,
  );

describe('planBackfill with a partition proof', () => {
  it('every type proven: per-country walks only, no type filter, every row read once; the run keeps the proof', async () => {
    const rows = makeWorld(900, (i) => [COUNTRIES[i % 3] as string]);
    const src = modelSource(rows, COUNTRIES, USERS);
    const { run, slices, users, planning } = await plan(src);
    expect(run.partition?.provenTypes).toEqual([...TYPES].sort());
    expect(run.partition?.unprovenTypes).toEqual([]);
    expect(run.partition?.rows).toEqual({ covered: 320, uncovered: 0, repeated: 0, foreign: 0 });
    expect(run.partition?.window).toEqual({ start: NOW - WINDOW, end: NOW });
    expect(users).toBeUndefined();
    expect(src.listings).toBe(0); // no per-user walk: the users are not listed
    for (const s of slices) {
      expect(Object.keys(s.filters)).toEqual(['countryId']);
      expect(s.start === 0 || s.start >= NOW - WINDOW).toBe(true);
    }
    const reads = readBack(rows, slices);
    expect(reads.size).toBe(rows.length);
    expect([...reads.values()].every((n) => n === 1)).toBe(true);
    // Quiet walks (fewer than historyProbeAbove rows in the window): one whole-range slice each.
    expect(slices.map((s) => [s.start, s.end])).toEqual([
      [0, NOW],
      [0, NOW],
      [0, NOW],
    ]);
    // ... not split while read (their start is 1970: the workers' estimate from there would cut them apart).
    for (const s of slices) expect(s.depth).toBe(UNSPLIT_DEPTH);
    expect(planning.proofPages).toBe(run.partition?.pages);
    expect(planning.proofPages).toBeGreaterThan(0);
  });

  it('rows outside the key leave their type unproven: walked per user, filtered to it; the rest per country, each once', async () => {
    // Every 10th wage row has no country: wage is unproven; openCase is known but absent from the window.
    const rows = makeWorld(800, (i, type) =>
      type === 'wage' && i % 10 === 1 ? [] : [COUNTRIES[i % 3] as string],
    );
    const src = modelSource(rows, COUNTRIES, USERS);
    const { run, slices, users } = await plan(src, { knownTypes: [...TYPES, 'battleLoot'] });
    expect(run.partition?.provenTypes).toEqual(['donation', 'openCase', 'trading']);
    expect(run.partition?.unprovenTypes).toEqual(['battleLoot', 'wage']);
    expect(run.partition?.byType['wage']?.uncovered).toBeGreaterThan(0);
    expect(users?.ids).toEqual(USERS);
    expect(src.listings).toBe(1);
    const perUser = slices.filter((s) => s.filters['userId'] !== undefined);
    expect(perUser).toHaveLength(USERS.length);
    for (const s of perUser) expect(s.filters['transactionType']).toEqual(['battleLoot', 'wage']);
    const perCountry = slices.filter((s) => s.filters['countryId'] !== undefined);
    for (const s of perCountry)
      expect(s.filters['transactionType']).toEqual(['donation', 'openCase', 'trading']);
    // Union: every row; the partition walks read each proven row once (per-user walks may read a wage twice).
    const partitionReads = readBack(rows, perCountry);
    expect([...partitionReads.values()].every((n) => n === 1)).toBe(true);
    const all = readBack(rows, slices);
    expect(all.size).toBe(rows.length);
    for (const r of rows) if (r.transactionType !== 'wage') expect(all.get(r._id)).toBe(1);
  });

  it('some types unproven and users hidden from the listings: the per-user plan of every type (discovery reaches them)', async () => {
    const rows = makeWorld(800, (i, type) =>
      type === 'wage' && i % 10 === 1 ? [] : [COUNTRIES[i % 3] as string],
    );
    const hiding = (): PlannerSource => ({
      ...modelSource(rows, COUNTRIES, USERS),
      userListing: async () => ({ ids: USERS, unlisted: 2 }),
    });
    const planned = await plan(hiding());
    const today = await plan(hiding(), { partition: 'off' });
    expect(planned.run.partition?.unprovenTypes).toEqual(['wage']);
    expect(planned.run.partition?.used).toBe(false);
    expect(planned.slices).toEqual(today.slices);
    // Every type proven: hidden users do not matter (the country walks read every row, listed or not).
    const whole = makeWorld(800, (i) => [COUNTRIES[i % 3] as string]);
    const all = await plan({
      ...modelSource(whole, COUNTRIES, USERS),
      userListing: async () => ({ ids: USERS, unlisted: 2 }),
    });
    expect(all.run.partition?.used).toBeUndefined();
    expect(all.slices.every((s) => s.filters['userId'] === undefined)).toBe(true);
  });

  it('nothing proven (a filter that matches two countries a row): exactly the per-user plan of every type', async () => {
    const rows = makeWorld(600, (i) => [COUNTRIES[i % 3] as string, COUNTRIES[(i + 1) % 3] as string]);
    const proven = await plan(modelSource(rows, COUNTRIES, USERS));
    const today = await plan(modelSource(rows, COUNTRIES, USERS), { partition: 'off' });
    expect(proven.run.partition?.provenTypes).toEqual([]);
    expect(proven.run.partition?.rows.repeated).toBeGreaterThan(0);
    expect(proven.slices).toEqual(today.slices);
    expect(proven.users).toEqual(today.users);
  });

  it('a busy walk: its window cut between the rows the proof saw, its older part probed and cut; a partition still', async () => {
    const rows = makeWorld(3000, (i) => [COUNTRIES[i % 3] as string]);
    const src = modelSource(rows, COUNTRIES, USERS);
    const { slices, planning, run } = await plan(src, {
      historyProbeAbove: 100,
      plan: 'requests',
      targetRows: 200,
    });
    const older = slices.filter((s) => s.end <= NOW - WINDOW);
    expect(older.length).toBeGreaterThan(3);
    // The window (~355 rows a walk) in slices of at most 200 known rows, each expecting its pages.
    const recent = slices.filter((s) => s.start >= NOW - WINDOW);
    expect(recent).toHaveLength(6);
    for (const s of recent) {
      const rowsIn = rows.filter(
        (r) => matches(r, s.filters) && time(r) >= s.start && time(r) < s.end,
      ).length;
      expect(rowsIn).toBeLessThanOrEqual(200);
      expect(s.expectedPages).toBe(Math.floor(rowsIn / 100) + 1);
    }
    for (const s of slices) expect(s.depth).toBe(0);
    expect(planning.probePages).toBeGreaterThan(0);
    // The older slices expect the pages their probed rows fill (the dry run's and the budget's figure): summed per
    // walk, within a quarter of the pages its rows need.
    for (const c of COUNTRIES) {
      const mine = older.filter((s) => s.filters['countryId'] === c);
      const expected = mine.reduce((n, s) => n + (s.expectedPages ?? Number.NaN), 0);
      const rowsIn = rows.filter((r) => matches(r, { countryId: c }) && time(r) < NOW - WINDOW).length;
      const needed = mine.length + Math.floor(rowsIn / 100);
      expect(expected).toBeGreaterThanOrEqual(needed * 0.75);
      expect(expected).toBeLessThanOrEqual(needed * 1.25 + 1);
    }
    // Each walk's rows in the proof's window, for the dry run's ratio.
    const proven = run.partition?.window.start ?? Number.NaN;
    expect(planning.walkWindowRows?.size).toBe(COUNTRIES.length);
    for (const c of COUNTRIES)
      expect(planning.walkWindowRows?.get(c)).toBe(
        rows.filter((r) => matches(r, { countryId: c }) && time(r) >= proven).length,
      );
    for (const c of COUNTRIES) {
      const mine = slices.filter((s) => s.filters['countryId'] === c).sort((a, b) => a.start - b.start);
      expect(mine[0]?.start).toBe(0);
      expect(mine.at(-1)?.end).toBe(NOW);
      for (let i = 1; i < mine.length; i++) expect(mine[i]?.start).toBe(mine[i - 1]?.end);
    }
    const reads = readBack(rows, slices);
    expect(reads.size).toBe(rows.length);
  });

  it('without the option, or without readPages, full history is walked per user as before (no proof read)', async () => {
    const rows = makeWorld(300, (i) => [COUNTRIES[i % 3] as string]);
    const src = modelSource(rows, COUNTRIES, USERS);
    const off = await plan(src, { partition: 'off' });
    expect(off.run.partition).toBeUndefined();
    expect(src.pages).toBe(0);
    const { readPages: _r, ...noReader } = modelSource(rows, COUNTRIES, USERS);
    const without = await plan(noReader);
    expect(without.run.partition).toBeUndefined();
    expect(without.slices.map((s) => s.filters['userId'])).toEqual(USERS);
  });
});

/** Object ids, as the service's (the head page counts only well-formed user ids): a, b, c, d. */
const OBJECT_USERS = ['a', 'b', 'c', 'd'].map((x) => x.repeat(24));

/** `makeWorld` with row i bought by `OBJECT_USERS[buyer(i)]`, one country a row. */
function busyWorld(n: number, buyer: (i: number) => number): Tx[] {
  return makeWorld(n, (i) => [COUNTRIES[i % 3] as string]).map((r, i) => ({
    ...r,
    buyerId: OBJECT_USERS[buyer(i)] as string,
  }));
}

describe("planBackfill: the partition only where it pays (partitionAboveRows, the CLI's --partition auto)", () => {
  it('a window whose head rate gives fewer rows than the threshold: the per-user walks, no proof read', async () => {
    const rows = makeWorld(900, (i) => [COUNTRIES[i % 3] as string]);
    const src = modelSource(rows, COUNTRIES, USERS);
    const inWindow = rows.filter((r) => time(r) >= NOW - WINDOW).length;
    const small = await plan(src, { partitionAboveRows: 10_000 });
    expect(small.run.partition).toBeUndefined();
    expect(small.slices.every((s) => s.filters['userId'] !== undefined)).toBe(true);
    expect(small.slices.length).toBe(USERS.length);
    // One head page read to estimate: the window's rows at its rate, within a page's worth of the truth.
    const est = small.planning.feedWindowRows ?? 0;
    expect(Math.abs(est - inWindow)).toBeLessThan(0.2 * inWindow);
    const big = await plan(src, { partitionAboveRows: Math.floor(est / 2) });
    expect(big.run.partition?.provenTypes).toEqual([...TYPES].sort());
    expect(big.slices.every((s) => s.filters['userId'] === undefined)).toBe(true);
  });

  it("starts with the users the estimate's head page names most: the busiest walk is not the last one enqueued", async () => {
    // The last user listed trades in 3 of every 6 rows, the second in 2, the first in 1.
    const users = OBJECT_USERS;
    const rows = busyWorld(900, (i) => (i % 6 < 3 ? 3 : i % 6 < 5 ? 1 : 0));
    const small = await plan(modelSource(rows, COUNTRIES, users), { partitionAboveRows: 10_000 });
    expect(small.run.partition).toBeUndefined();
    // d (most), then b, then a; c, never named, keeps its place after them (d's walk cut in pieces: its slices first)
    const order = small.slices.map((s) => s.filters['userId']).filter((u, k, all) => u !== all[k - 1]);
    expect(order).toEqual([users[3], users[1], users[0], users[2]]);
    // the per-user plan without the head page (partition off) keeps the listing's order
    const off = await plan(modelSource(rows, COUNTRIES, users), { partition: 'off' });
    expect(off.slices.map((s) => s.filters['userId'])).toEqual(users);
  });

  it('cuts the users the head page names often into time pieces that tile the history: every row once per walk', async () => {
    // 4 000 rows over 200 h: ~1 420 in the 71 h window; d in 6 of 10 rows (~850: cut), b in 3 (~430: cut), a in 1
    // (~140, under BUSY_USER_MIN_ROWS: one walk), c in none
    const users = OBJECT_USERS;
    const rows = busyWorld(4_000, (i) => (i % 10 < 6 ? 3 : i % 10 < 9 ? 1 : 0));
    const { slices, run } = await plan(modelSource(rows, COUNTRIES, users), { partitionAboveRows: 100_000 });
    expect(run.partition).toBeUndefined();
    const of = (u: string): SliceJobData[] => slices.filter((x) => x.filters['userId'] === u);
    expect(of(users[3] as string)).toHaveLength(BUSY_USER_PIECES);
    expect(of(users[1] as string)).toHaveLength(BUSY_USER_PIECES);
    expect(of(users[0] as string)).toHaveLength(1);
    expect(of(users[2] as string)).toHaveLength(1);
    for (const u of users) {
      const mine = of(u).sort((x, y) => x.start - y.start);
      expect(mine[0]?.start).toBe(0);
      expect(mine.at(-1)?.end).toBe(NOW);
      for (let i = 1; i < mine.length; i++) expect(mine[i]?.start).toBe(mine[i - 1]?.end);
    }
    // the busiest user's pieces come first, newest first
    expect(slices[0]?.filters['userId']).toBe(users[3]);
    expect(slices[0]?.end).toBe(NOW);
    // each row is read once per listed user it names (its buyer here; sellers are unlisted): not once per piece
    const reads = readBack(rows, slices);
    for (const r of rows) expect(reads.get(r._id), r._id).toBe(1);
  });
});

describe('provePartition', () => {
  it('leaves rows without an id or a type string out (counted), so no filter ever names a type it made up', async () => {
    const good = {
      _id: 'a',
      createdAt: new Date(NOW - 5).toISOString(),
      transactionType: 'wage',
      countryId: 'c',
    };
    const noId = { createdAt: new Date(NOW - 4).toISOString(), transactionType: 'wage', countryId: 'c' };
    const noType = {
      _id: 'b',
      createdAt: new Date(NOW - 3).toISOString(),
      transactionType: 7,
      countryId: 'c',
    };
    const items = [noType, noId, good] as Record<string, unknown>[];
    const read = async function* () {
      yield { items, cursor: null };
    };
    const p = await provePartition(read, ['c'], { start: NOW - WINDOW, end: NOW });
    expect(p.unidentified).toBe(4); // two in the feed, two in the walk
    expect(p.proof.provenTypes).toEqual(['wage']);
    expect(p.proof.unprovenTypes).toEqual([]);
    expect(p.pages).toEqual({ feed: 1, walks: 1 });
  });
});

describe('provePartition on a feed whose deep pages cost seconds (issue 32)', () => {
  it('reads the feed from the head as deep as its serial budget reaches, and proves exactly that window', async () => {
    // 9 000 rows over 200 h: the 71 h window holds ~3 200 (~32 pages at ~2.2 h each).
    const rows = makeWorld(9000, (i) => [COUNTRIES[i % 3] as string]);
    const src = modelSource(rows, COUNTRIES, USERS);
    const read = src.readPages as ReadListingPages;
    const window = { start: NOW - WINDOW, end: NOW };
    const budgets = [2_000, 10_000, 60_000];
    const proofs = [];
    for (const feedBudgetMs of budgets) {
      const p = await provePartition(read, COUNTRIES, window, { feedBudgetMs, knownTypes: TYPES });
      // What the feed pages cost stays within the budget (planned from the head page's rate: a steady rate here,
      // so within one page's cost).
      expect(p.feedMs).toBeLessThanOrEqual(feedBudgetMs * 1.1);
      // The proven window: the newest part of the one asked for, ending at its end.
      expect(p.window.end).toBe(NOW);
      expect(p.window.start).toBeGreaterThanOrEqual(window.start);
      // Every feed row of the proven window is covered by exactly one walk, and every row kept lies in it.
      expect(p.proof.uncovered + p.proof.repeated + p.proof.foreign).toBe(0);
      const inWindow = rows.filter((r) => time(r) >= p.window.start && time(r) < NOW).length;
      expect(p.proof.covered).toBe(inWindow);
      proofs.push(p);
    }
    // A larger budget reaches deeper; 2 s reaches only a few pages, 60 s the whole 71 h (~32 pages, ~100 s at
    // 0.24 s + 0.09 s per hour would exceed it: so not quite whole).
    const [small, mid, large] = proofs;
    expect(small?.pages.feed).toBeLessThan(mid?.pages.feed ?? 0);
    expect(mid?.pages.feed).toBeLessThan(large?.pages.feed ?? 0);
    expect(small?.window.start).toBeGreaterThan(mid?.window.start ?? 0);
    expect(small?.pages.feed).toBeLessThanOrEqual(5);
  });

  it('a budget that reaches the whole window proves all of it', async () => {
    const rows = makeWorld(600, (i) => [COUNTRIES[i % 3] as string]);
    const src = modelSource(rows, COUNTRIES, USERS);
    const window = { start: NOW - WINDOW, end: NOW };
    const p = await provePartition(src.readPages as ReadListingPages, COUNTRIES, window, {
      feedBudgetMs: 1e9,
    });
    expect(p.window).toEqual(window);
    expect(p.proof.covered).toBe(rows.filter((r) => time(r) >= window.start).length);
  });
});

describe('readRangeRows', () => {
  it('reads every row of a range once, cutting long pieces, ties on page edges included', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 5000 }), { minLength: 200, maxLength: 1500 }),
        fc.integer({ min: 1, max: 6 }),
        async (times, pagesPerPart) => {
          const rows = times.map((t, i): Tx => ({
            _id: `x${String(i).padStart(5, '0')}`,
            createdAt: new Date(t).toISOString(),
            transactionType: 'wage',
            buyerId: 'u',
            countries: ['c'],
          }));
          const src = modelSource(rows, ['c'], ['u']);
          const read = src.readPages as NonNullable<PlannerSource['readPages']>;
          const range = { start: 1000, end: 4000 };
          const got = await readRangeRows(
            (r, c) => read('transactions', { countryId: 'c' }, r, c),
            range,
            (i) => String(i['_id']),
            {
              pagesPerPart,
            },
          );
          const want = rows.filter((r) => time(r) >= range.start && time(r) < range.end).map((r) => r._id);
          expect([...got.rows].sort()).toEqual(want.sort());
          expect(got.pages).toBe(src.pages);
        },
      ),
      { numRuns: 60, endOnFailure: true },
    );
  });
});

describe('planBackfill: per-user walks told before planning ends (early, issue 32)', () => {
  /** `modelSource` whose listing tells its users in two pages, recording when it was read. */
  function pagedListing(rows: Tx[], users: string[]) {
    const src = modelSource(rows, COUNTRIES, users);
    const seen = { listed: false };
    return {
      seen,
      src: {
        ...src,
        userListing: async (_c?: readonly string[], onUsers?: (ids: readonly string[]) => void) => {
          seen.listed = true;
          onUsers?.(users.slice(0, 2));
          onUsers?.(users.slice(1)); // a user twice (two pages of a listing may overlap at their edge)
          return { ids: users, unlisted: 0 };
        },
      },
    };
  }
  type Told = { listedYet: boolean; runId: string; slices: SliceJobData[] };

  it("tells the head page's users at once (busiest first, cut as planned), then each listing page's new users; every slice told is planned", async () => {
    const users = OBJECT_USERS;
    const rows = busyWorld(4_000, (i) => (i % 10 < 6 ? 3 : i % 10 < 9 ? 1 : 0));
    const { src, seen } = pagedListing(rows, users);
    const told: Told[] = [];
    const planned = await plan(src, { partitionAboveRows: 100_000 }, (run, slices) =>
      told.push({ listedYet: seen.listed, runId: run.runId, slices }),
    );
    const without = await plan(modelSource(rows, COUNTRIES, users), { partitionAboveRows: 100_000 });
    // the plan itself does not depend on being told
    expect(planned.slices).toEqual(without.slices);
    // first: the head page's users (d, b, a named; c not), before the listing is read, d's pieces first
    expect(told[0]?.listedYet).toBe(false);
    expect([...new Set(told[0]?.slices.map((s) => s.filters['userId']))]).toEqual([
      users[3],
      users[1],
      users[0],
    ]);
    expect(told[0]?.slices.filter((s) => s.filters['userId'] === users[3])).toHaveLength(BUSY_USER_PIECES);
    // then the listing's pages: only c is new (named twice by the pages, told once)
    expect(told.slice(1).map((t) => t.slices.map((s) => s.filters['userId']))).toEqual([[users[2]]]);
    expect(told.every((t) => t.runId === 'r')).toBe(true);
    // every slice told once, and exactly the plan's slices
    const ids = told.flatMap((t) => t.slices.map((s) => s.sliceId));
    expect(new Set(ids).size).toBe(ids.length);
    expect(new Set(ids)).toEqual(new Set(planned.slices.map((s) => s.sliceId)));
    expect(told.flatMap((t) => t.slices)).toEqual(expect.arrayContaining(planned.slices));
  });

  it('a user only the head page names (not listed) is told too: walked from the start, as discovery would', async () => {
    const users = OBJECT_USERS;
    const hidden = 'e'.repeat(24);
    const rows = busyWorld(900, (i) => (i % 6 < 3 ? 3 : 0)).map((r, i) =>
      i % 2 === 0 ? { ...r, sellerId: hidden } : r,
    );
    const { src } = pagedListing(rows, users);
    const told: SliceJobData[] = [];
    const planned = await plan(src, { partitionAboveRows: 100_000 }, (_run, slices) => told.push(...slices));
    const plannedIds = new Set(planned.slices.map((s) => s.sliceId));
    const extra = told.filter((s) => !plannedIds.has(s.sliceId));
    expect(extra.length).toBeGreaterThan(0);
    expect(extra.every((s) => s.filters['userId'] === hidden)).toBe(true);
    expect(planned.slices.every((s) => told.some((t) => t.sliceId === s.sliceId))).toBe(true);
  });

  it('the per-user plan (partition off) tells each listing page as it comes; the plan is what was told', async () => {
    const rows = makeWorld(900, (i) => [COUNTRIES[i % 3] as string]);
    const { src } = pagedListing(rows, USERS);
    const told: string[][] = [];
    const planned = await plan(src, { partition: 'off' }, (_run, slices) =>
      told.push(slices.map((s) => String(s.filters['userId']))),
    );
    expect(told).toEqual([USERS.slice(0, 2), USERS.slice(2)]);
    expect(planned.slices.map((s) => s.filters['userId'])).toEqual(USERS);
  });

  it('other plans tell nothing (a partition, a range, other resources)', async () => {
    const rows = makeWorld(900, (i) => [COUNTRIES[i % 3] as string]);
    const { src } = pagedListing(rows, USERS);
    const told: SliceJobData[] = [];
    await plan(src, {}, (_run, slices) => told.push(...slices));
    await planBackfill(
      { resources: ['transactions', 'users'], since: NOW - 10 * HOUR, runId: 'r2' },
      src,
      { now: () => NOW },
      (_run, slices) => told.push(...slices),
    );
    expect(told).toEqual([]);
  });
});
