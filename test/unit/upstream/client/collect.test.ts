import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { collectSlices, iterateSlices, type CollectStats } from '../../../../src/upstream/client/collect.js';
import { createListing } from '../../../../src/upstream/client/listing.js';
import { readSlice } from '../../../../src/upstream/client/read-slice.js';
import { GamedataError } from '../../../../src/foundation/errors/index.js';
import { createFakeFeed, makeRows, sortRows } from './fake-feed.js';
import type { Row } from './fake-feed.js';

const DAY = 86_400_000;
const T0 = Date.UTC(2026, 10, 1);
const listing = createListing('transactions');

/** Times clustered on few instants (same-millisecond ties, some on whole seconds, i.e. on slice edges). */
const timesArb = fc.array(
  fc.oneof(
    fc.integer({ min: 0, max: 20 }).map((k) => T0 + k * 1000), // whole seconds
    fc.integer({ min: 0, max: 20_000 }).map((k) => T0 + k),
  ),
  { maxLength: 400 },
);

// planSliceEdges' property test moved to test/unit/foundation/slicing/slicing.test.ts with the slicing core.

describe('collectSlices (exact, against an in-memory feed)', () => {
  for (const format of ['v2', 'v1'] as const) {
    it(`equals the truth for every slice width, with ties on edges (${format})`, async () => {
      await fc.assert(
        fc.asyncProperty(
          timesArb,
          fc.integer({ min: 1, max: 25 }),
          fc.constantFrom(0.00001, 0.00005, 0.001, 1),
          fc.integer({ min: 0, max: 15_000 }),
          fc.boolean(),
          async (times, limit, sliceDays, oldestOffset, splitDense) => {
            const splitPages = 1 + (limit % 3);
            const rows = makeRows(times);
            const feed = createFakeFeed(rows, format);
            const oldest = format === 'v1' ? T0 + Math.floor(oldestOffset / 1000) * 1000 : T0 + oldestOffset;
            const got = await collectSlices<Row>(feed, [listing], {
              oldestDate: oldest,
              timeSliceDays: sliceDays,
              limit,
              concurrency: 7,
              splitDense,
              splitPages,
              now: () => T0 + 25_000,
            });
            const truth = sortRows(rows, format).filter((r) => Date.parse(r.createdAt) >= oldest);
            expect(got.map((r) => r._id)).toEqual(truth.map((r) => r._id));
          },
        ),
        { numRuns: 60 },
      );
    });
  }

  for (const format of ['v2', 'v1'] as const) {
    it(`planned for rounds (head probe or injected clock) equals the truth, with ties on edges (${format})`, async () => {
      await fc.assert(
        fc.asyncProperty(
          timesArb,
          fc.integer({ min: 1, max: 25 }),
          fc.integer({ min: 1, max: 60 }),
          fc.integer({ min: 0, max: 15_000 }),
          fc.boolean(),
          async (times, limit, firstRoundSlices, oldestOffset, injectClock) => {
            const rows = makeRows(times);
            const feed = createFakeFeed(rows, format);
            const oldest = format === 'v1' ? T0 + Math.floor(oldestOffset / 1000) * 1000 : T0 + oldestOffset;
            const stats: CollectStats = { slices: 0, splits: 0, pages: 0 };
            const got = await collectSlices<Row>(
              feed,
              [listing],
              {
                oldestDate: oldest,
                plan: 'rounds',
                firstRoundSlices,
                limit,
                ...(injectClock ? { now: () => T0 + 25_000 } : {}),
              },
              stats,
            );
            const truth = sortRows(rows, format).filter((r) => Date.parse(r.createdAt) >= oldest);
            expect(got.map((r) => r._id)).toEqual(truth.map((r) => r._id));
            expect(stats.rounds).toBeGreaterThanOrEqual(1);
          },
        ),
        { numRuns: 60 },
      );
    });
  }

  it('planned for rounds: a window of known density ends in one round, a dense one in about three', async () => {
    const sparse = makeRows(Array.from({ length: 2000 }, (_, i) => T0 + i * 37));
    const s1: CollectStats = { slices: 0, splits: 0, pages: 0 };
    const now = (): number => T0 + 2000 * 37;
    await collectSlices<Row>(createFakeFeed(sparse), [listing], { oldestDate: T0, plan: 'rounds', now }, s1);
    // 50 slices of ~40 rows each: every slice ends with its first page.
    expect(s1.rounds).toBe(1);
    expect(s1.pages).toBe(50);

    const dense = makeRows(Array.from({ length: 20_000 }, (_, i) => T0 + Math.floor(i * 3.7)));
    const denseNow = (): number => T0 + 74_000;
    const s2: CollectStats = { slices: 0, splits: 0, pages: 0 };
    const got = await collectSlices<Row>(
      createFakeFeed(dense),
      [listing],
      { oldestDate: T0, plan: 'rounds', now: denseNow },
      s2,
    );
    expect(got).toHaveLength(20_000);
    expect(s2.rounds).toBeLessThanOrEqual(3);
    // For requests instead: fewer pages (fuller slices), more rounds one after another.
    const s3: CollectStats = { slices: 0, splits: 0, pages: 0 };
    const bound = { ...createFakeFeed(dense), budgetBinds: () => true };
    expect(await collectSlices<Row>(bound, [listing], { oldestDate: T0, now: denseNow }, s3)).toHaveLength(
      20_000,
    );
    expect(s3.pages).toBeLessThan(s2.pages);
    expect(s3.rounds).toBeGreaterThan(s2.rounds ?? Infinity);
  });

  it('probes the head when the clock is not given: the upstream clock may be far behind the client', async () => {
    const rows = makeRows(Array.from({ length: 2000 }, (_, i) => T0 + i * 37));
    const feed = createFakeFeed(rows);
    const stats: CollectStats = { slices: 0, splits: 0, pages: 0 };
    // The client's clock (Date.now) is weeks after T0: without the probe most slices would be empty.
    const got = await collectSlices<Row>(feed, [listing], { oldestDate: T0, plan: 'rounds' }, stats);
    expect(got).toHaveLength(2000);
    expect(feed.calls[0]).toEqual({ cursor: undefined, limit: 1 });
    expect(stats.rounds).toBe(2);
  });

  it('refuses a bad plan with one clear error', async () => {
    await expect(
      collectSlices(createFakeFeed([]), [listing], { oldestDate: T0, plan: 'fast' as never }),
    ).rejects.toThrow(/plan must be/);
  });

  it('splits a dense slice while running and still reads every row once', async () => {
    const times = Array.from({ length: 3000 }, (_, i) => T0 + Math.floor(i / 3) * 7);
    const rows = makeRows(times);
    const feed = createFakeFeed(rows);
    const stats = { slices: 0, splits: 0, pages: 0 };
    const got = await collectSlices<Row>(
      feed,
      [listing],
      { oldestDate: T0, timeSliceDays: 1, limit: 50, splitPages: 2, now: () => T0 + DAY / 2 },
      stats,
    );
    expect(got).toHaveLength(3000);
    expect(new Set(got.map((r) => r._id)).size).toBe(3000);
    expect(stats.splits).toBeGreaterThan(0);
    expect(stats.slices).toBeGreaterThan(5);
    // Pages stay close to the ideal: every row read once, plus one short page per slice.
    expect(stats.pages).toBeLessThan(3000 / 50 + stats.slices * 2);
  });

  it('an open history from 0, planned for rounds: geometric splits read a year of rows in a few rounds, once each', async () => {
    // 1 600 rows over the year before T0 (a country's users at scale medium), oldestDate 0: the past is 56 years wide.
    const times = Array.from({ length: 1600 }, (_, i) => T0 - Math.floor((i * 365 * DAY) / 1600) - 1);
    const rows = makeRows(times);
    const read = async (geometricAbove?: number): Promise<{ got: Row[]; stats: CollectStats }> => {
      const stats: CollectStats = { slices: 0, splits: 0, pages: 0, rounds: 0 };
      const got = await collectSlices<Row>(
        createFakeFeed(rows),
        [listing],
        { plan: 'rounds', oldestDate: 0, firstRoundSlices: 1, geometricAbove, now: () => T0 },
        stats,
      );
      return { got, stats };
    };
    const geometric = await read(16);
    expect(geometric.got).toHaveLength(1600);
    expect(new Set(geometric.got.map((r) => r._id)).size).toBe(1600);
    // A row after another in 17 pages one by one; here a handful of rounds, and about one page per 50 rows.
    expect(geometric.stats.rounds).toBeLessThanOrEqual(6);
    expect(geometric.stats.pages).toBeLessThanOrEqual(1600 / 50 + 30);
    // Without it the even half-page cut of 56 years spends its 200 pieces on the empty past.
    const even = await read();
    expect(even.got).toHaveLength(1600);
    expect(even.stats.pages).toBeGreaterThan(geometric.stats.pages);
  });

  it('reads nothing older than oldestDate and stops each slice at its first older item', async () => {
    const rows = makeRows([T0 - 5, T0 - 1, T0, T0 + 1, T0 + 2]);
    const got = await collectSlices<Row>(createFakeFeed(rows), [listing], {
      oldestDate: T0,
      timeSliceDays: 1,
      now: () => T0 + 10,
    });
    expect(got.map((r) => r.createdAt)).toEqual([T0 + 2, T0 + 1, T0].map((t) => new Date(t).toISOString()));
  });

  it('fails the whole call when one slice keeps failing (never a partial list)', async () => {
    const rows = makeRows(Array.from({ length: 500 }, (_, i) => T0 + i * 100));
    const feed = createFakeFeed(rows, 'v2', { failWhen: (n) => n === 5 });
    await expect(
      collectSlices<Row>(feed, [listing], {
        oldestDate: T0,
        timeSliceDays: 0.0001,
        limit: 10,
        now: () => T0 + 50_000,
      }),
    ).rejects.toThrow(GamedataError);
  });

  it('cancels on abort', async () => {
    const rows = makeRows(Array.from({ length: 2000 }, (_, i) => T0 + i));
    const feed = createFakeFeed(rows);
    const controller = new AbortController();
    const it = iterateSlices<Row>(feed, [listing], {
      oldestDate: T0,
      timeSliceDays: 0.00001,
      limit: 5,
      signal: controller.signal,
      now: () => T0 + 2000,
    });
    let n = 0;
    await expect(
      (async () => {
        for await (const _ of it) if (++n === 10) controller.abort();
      })(),
    ).rejects.toThrow(/abort/);
    const callsAtAbort = feed.calls.length;
    await new Promise((r) => setTimeout(r, 50));
    expect(feed.calls.length - callsAtAbort).toBeLessThanOrEqual(20);
  });

  it('streams with bounded buffering (readers of later slices pause)', async () => {
    const rows = makeRows(Array.from({ length: 3000 }, (_, i) => T0 + i));
    const feed = createFakeFeed(rows);
    const it = iterateSlices<Row>(feed, [listing], {
      oldestDate: T0,
      timeSliceDays: 0.00001,
      limit: 10,
      highWaterItems: 50,
      concurrency: 100,
      now: () => T0 + 3000,
    });
    let n = 0;
    for await (const _ of it) {
      if (++n === 20) break;
    }
    await new Promise((r) => setTimeout(r, 20));
    // 100 slices started, each read at most a page or two before pausing: far fewer than 300 pages.
    expect(feed.calls.length).toBeLessThan(250);
  });
});

describe('readSlice', () => {
  it('adjacent slices partition the feed; a checkpoint resumes exactly the rest', async () => {
    await fc.assert(
      fc.asyncProperty(
        timesArb,
        fc.array(fc.integer({ min: 1, max: 19_999 }), { maxLength: 6 }),
        fc.integer({ min: 1, max: 7 }),
        async (times, cuts, limit) => {
          const rows = makeRows(times);
          const feed = createFakeFeed(rows);
          const edges = [...new Set([T0, ...cuts.map((c) => T0 + c), T0 + 20_001])].sort((a, b) => a - b);
          const seen: string[] = [];
          for (let i = edges.length - 1; i > 0; i--) {
            const range = { start: edges[i - 1] ?? 0, end: edges[i] ?? 0 };
            let resumeAt: string | null = null;
            let pages = 0;
            for await (const page of readSlice<Row>(feed, listing, range, { limit })) {
              seen.push(...page.items.map((r) => r._id));
              if (++pages === 2) {
                resumeAt = page.cursor;
                break;
              }
            }
            if (resumeAt)
              for await (const page of readSlice<Row>(feed, listing, range, { limit, cursor: resumeAt }))
                seen.push(...page.items.map((r) => r._id));
          }
          expect(seen).toEqual(sortRows(rows, 'v2').map((r) => r._id));
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe('readSlice: pages shorter than asked for', () => {
  const range = { start: T0 - 1, end: T0 + 20_001 };
  const read = async (feed: ReturnType<typeof createFakeFeed>, o: Parameters<typeof readSlice>[3]) => {
    const ids: string[] = [];
    for await (const page of readSlice<Row>(feed, listing, range, o))
      ids.push(...page.items.map((r) => r._id));
    return ids;
  };

  it('end (the default) stops at a short page: every row once, one page per full page and one more', async () => {
    await fc.assert(
      fc.asyncProperty(timesArb, fc.integer({ min: 1, max: 7 }), async (times, limit) => {
        const rows = makeRows(times);
        const feed = createFakeFeed(rows, 'v2', { echoCursor: true });
        expect(await read(feed, { limit })).toEqual(sortRows(rows, 'v2').map((r) => r._id));
        expect(feed.calls.length).toBe(Math.floor(rows.length / limit) + 1);
      }),
      { numRuns: 60 },
    );
  });

  it('confirm reads on to an empty page: every row once, a page more after a short one', async () => {
    await fc.assert(
      fc.asyncProperty(timesArb, fc.integer({ min: 1, max: 7 }), async (times, limit) => {
        const rows = makeRows(times);
        const feed = createFakeFeed(rows, 'v2', { echoCursor: true });
        expect(await read(feed, { limit, shortPages: 'confirm' })).toEqual(
          sortRows(rows, 'v2').map((r) => r._id),
        );
        expect(feed.calls.length).toBe(rows.length === 0 ? 1 : Math.ceil(rows.length / limit) + 1);
      }),
      { numRuns: 60 },
    );
  });

  it('an upstream serving short pages with rows below them: confirm reads every row, end stops at the first', async () => {
    await fc.assert(
      fc.asyncProperty(timesArb, fc.integer({ min: 2, max: 7 }), fc.nat(5), async (times, limit, every) => {
        const rows = makeRows(times);
        const truth = sortRows(rows, 'v2').map((r) => r._id);
        const shortWhen = (call: number): boolean => call % (every + 1) === 0;
        const confirmed = createFakeFeed(rows, 'v2', { echoCursor: true, shortWhen });
        expect(await read(confirmed, { limit, shortPages: 'confirm' })).toEqual(truth);
        // What `end` assumes, shown failing: it reads the rows up to the first short page's last, no further.
        const ended = await read(createFakeFeed(rows, 'v2', { echoCursor: true, shortWhen }), { limit });
        expect(ended).toEqual(truth.slice(0, ended.length));
        if (truth.length > limit * (every + 1)) expect(ended.length).toBeLessThan(truth.length);
      }),
      { numRuns: 60 },
    );
  });

  it('a short page that says hasMore: true does not end the read', async () => {
    const rows = makeRows([T0 + 5, T0 + 4, T0 + 3, T0 + 2, T0 + 1]);
    const feed = createFakeFeed(rows, 'v2', { echoCursor: true });
    const fetchPage = feed.fetchPage.bind(feed);
    let first = true;
    feed.fetchPage = async <T>(
      l: Parameters<typeof fetchPage>[0],
      request: Parameters<typeof fetchPage>[1],
    ) => {
      if (!first) return fetchPage<T>(l, request);
      first = false;
      const page = await fetchPage<T>(l, { ...request, limit: 1 });
      return { ...page, hasMore: true };
    };
    expect(await read(feed, { limit: 3 })).toEqual(sortRows(rows, 'v2').map((r) => r._id));
  });
});

describe('collectSlices with unplaceable items', () => {
  it('an item whose sort time is unreadable is kept, once, whatever the slicing', async () => {
    await fc.assert(
      fc.asyncProperty(
        timesArb,
        fc.array(fc.nat(), { maxLength: 20 }),
        fc.integer({ min: 1, max: 7 }),
        fc.integer({ min: 50, max: 20_000 }),
        async (times, corruptPicks, limit, sliceMs) => {
          const rows = makeRows(times);
          const corrupt = new Set(corruptPicks.map((p) => rows[p % Math.max(1, rows.length)]?._id));
          const feed = createFakeFeed(rows);
          // Served corrupted (an invalid date) but ordered by the upstream at the real time, as the simulator does.
          const fetchPage = feed.fetchPage.bind(feed);
          feed.fetchPage = (async (...args: Parameters<typeof fetchPage>) => {
            const page = await fetchPage<Row>(...args);
            return {
              ...page,
              items: page.items.map((r) => (corrupt.has(r._id) ? { ...r, createdAt: 'not a date' } : r)),
            };
          }) as typeof feed.fetchPage;
          const out = await collectSlices<Row>(feed, [listing], {
            oldestDate: T0,
            timeSliceDays: sliceMs / DAY,
            limit,
            concurrency: 7,
            splitPages: 1,
            onInvalidItem: 'pass',
            now: () => T0 + 25_000,
          });
          expect(out.map((r) => r._id).sort()).toEqual(rows.map((r) => r._id).sort());
        },
      ),
      { numRuns: 40 },
    );
  });
});
