/**
 * collectAll / iterateAll equal the simulator's ground truth exactly: every listing, every transaction filter, slice
 * sizes from thousands of empty slices to one, same-millisecond ties on slice edges, and a v1 upstream.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AbortedError, GamedataError } from '../../../../src/foundation/errors/index.js';
import { H72, ids, startSim, testClient, timeOf, truth, WORLD_NOW } from './helpers.js';
import type { Rec, Sim } from './helpers.js';

const DAY = 86_400_000;
let sim: Sim;
let client: ReturnType<typeof testClient>;
let txs: Rec[];
let burstMs: number;

beforeAll(async () => {
  sim = await startSim({ rateLimit: { enabled: false } });
  client = testClient(sim);
  txs = await truth(sim, 'transactions');
  // The same-millisecond burst inside the 72 h window (more rows than a page).
  const counts = new Map<number, number>();
  for (const t of txs) counts.set(timeOf(t), (counts.get(timeOf(t)) ?? 0) + 1);
  burstMs = [...counts.entries()].sort((a, b) => b[1] - a[1])[0]![0];
});
afterAll(async () => {
  await sim.close();
});

const since = (records: Rec[], oldest: number, field = 'createdAt'): Rec[] =>
  records.filter((r) => timeOf(r, field) >= oldest);

describe('transaction.collectAll', () => {
  it('the burst really is a same-millisecond tie of more than a page', () => {
    expect(txs.filter((t) => timeOf(t) === burstMs).length).toBeGreaterThan(100);
    expect(burstMs).toBeGreaterThan(WORLD_NOW - H72);
  });

  for (const [name, sliceDays] of [
    ['thousands of tiny slices', 0.0005],
    ['default 0.2-day slices', 0.2],
    ['one slice (dense splitting)', 10],
  ] as const) {
    it(`unfiltered 72 h window equals the truth: ${name}, burst on a slice edge`, async () => {
      const oldest = WORLD_NOW - H72;
      const sliceMs = sliceDays * DAY;
      // Anchor the slice grid so an edge falls exactly on the burst millisecond.
      const anchor = burstMs + Math.ceil((Date.now() - burstMs) / sliceMs) * sliceMs;
      const got = await client.transaction.collectAll({
        oldestDate: oldest,
        timeSliceDays: sliceDays,
        now: () => anchor,
      });
      expect(ids(got)).toEqual(ids(since(txs, oldest)));
    });
  }

  it('the edge on the burst also holds when the burst is the slice start', async () => {
    const got = await client.transaction.collectAll({ oldestDate: burstMs, timeSliceDays: 0.01 });
    expect(ids(got)).toEqual(ids(since(txs, burstMs)));
  });

  it('each filter reaches the full history and equals the truth', async () => {
    const having = (field: string): string => String(txs.find((t) => t[field])![field]);
    const user = having('sellerId');
    const item = having('itemCode');
    const country = having('countryId');
    const mu = having('muId');
    const party = having('partyId');
    const oldest = WORLD_NOW - 400 * DAY;
    const byUser = (t: Rec): boolean => t['buyerId'] === user || t['sellerId'] === user;
    const types = ['trading', 'wage', 'itemMarket'];
    const cases: [Record<string, string | string[]>, (t: Rec) => boolean][] = [
      [{ userId: user }, byUser],
      [{ itemCode: item }, (t) => t['itemCode'] === item],
      [{ countryId: country }, (t) => t['countryId'] === country],
      [{ muId: mu }, (t) => t['muId'] === mu],
      [{ partyId: party }, (t) => t['partyId'] === party],
      [
        { userId: user, transactionType: types },
        (t) => byUser(t) && types.includes(String(t['transactionType'])),
      ],
    ];
    for (const [filters, match] of cases) {
      const got = await client.transaction.collectAll({ oldestDate: oldest, timeSliceDays: 7, ...filters });
      const want = txs.filter((t) => match(t));
      expect(want.length).toBeGreaterThan(0);
      expect(ids(got), JSON.stringify(filters)).toEqual(ids(want));
    }
  });

  it('transactionType alone (window feed) equals the truth', async () => {
    const oldest = WORLD_NOW - H72;
    const got = await client.transaction.collectAll({
      oldestDate: oldest,
      transactionType: 'wage',
      timeSliceDays: 0.05,
    });
    expect(ids(got)).toEqual(ids(since(txs, oldest).filter((t) => t['transactionType'] === 'wage')));
  });

  it('iterateAll streams the same items in the same order', async () => {
    const oldest = WORLD_NOW - H72;
    const out: string[] = [];
    for await (const t of client.transaction.iterateAll({
      oldestDate: oldest,
      timeSliceDays: 0.1,
      highWaterItems: 300,
    }))
      out.push(t._id);
    expect(out).toEqual(ids(since(txs, oldest)));
  });
});

describe('every other listing', () => {
  it('parties, elections, donations, articles equal the truth (open-ended oldest date)', async () => {
    expect(ids(await client.party.collectAll())).toEqual(ids(await truth(sim, 'parties')));
    expect(ids(await client.election.collectAll({ timeSliceDays: 3 }))).toEqual(
      ids(await truth(sim, 'elections')),
    );
    expect(ids(await client.donation.collectAll({ timeSliceDays: 2 }))).toEqual(
      ids(await truth(sim, 'donations')),
    );
    expect(ids(await client.article.collectAll({ timeSliceDays: 1 }))).toEqual(
      ids(await truth(sim, 'articles')),
    );
  });

  it('filtered listings and oldestDate: nothing older leaks in', async () => {
    const donations = await truth(sim, 'donations');
    const c = String(donations.find((d) => d['countryId'])!['countryId']);
    const oldest = timeOf(donations[Math.floor(donations.length / 2)]!);
    const got = await client.donation.collectAll({ countryId: c, oldestDate: oldest, timeSliceDays: 0.5 });
    expect(ids(got)).toEqual(ids(donations.filter((d) => d['countryId'] === c && timeOf(d) >= oldest)));
  });

  it('user.collectByCountry and user.collectAll equal the truth', async () => {
    const users = await truth(sim, 'users');
    const countries = await client.country.getAllCountries();
    const c = countries[0]!._id;
    expect(ids(await client.user.collectByCountry(c))).toEqual(ids(users.filter((u) => u['country'] === c)));
    const all = await client.user.collectAll({ timeSliceDays: 5 });
    expect(ids(all)).toEqual(ids(users));
  });
});

describe('failures and cancellation', () => {
  it('a slice that keeps failing makes the whole call fail (no partial list)', async () => {
    const s = await startSim({ faults: { http5xx: 1 } });
    try {
      const c = testClient(s, { retry: { initialMs: 1, maxMs: 2, retries: 1 } });
      await expect(c.transaction.collectAll({ oldestDate: WORLD_NOW - H72 })).rejects.toBeInstanceOf(
        GamedataError,
      );
    } finally {
      await s.close();
    }
  });

  it('cancellation stops all work of a call', async () => {
    const s = await startSim({ latency: { requestMs: 30 }, rateLimit: { enabled: false } });
    try {
      const c = testClient(s);
      const controller = new AbortController();
      const p = c.transaction.collectAll({
        oldestDate: WORLD_NOW - H72,
        timeSliceDays: 0.001,
        limit: 10,
        signal: controller.signal,
      });
      setTimeout(() => controller.abort(), 100);
      await expect(p).rejects.toBeInstanceOf(AbortedError);
      await new Promise((r) => setTimeout(r, 100));
      const before = s.stats().httpRequests;
      await new Promise((r) => setTimeout(r, 300));
      expect(s.stats().httpRequests).toBe(before);
    } finally {
      await s.close();
    }
  });
});

describe('v1 upstream (second-precision cursors)', () => {
  it('collectAll equals the truth, with edges on whole seconds around the burst', async () => {
    const s = await startSim({ cursor: 'v1', rateLimit: { enabled: false } });
    try {
      const c = testClient(s, { cursorFormat: 'v1' });
      const all = await truth(s, 'transactions');
      const oldest = WORLD_NOW - H72;
      const sec = Math.floor(burstMs / 1000) * 1000;
      for (const sliceDays of [60_000 / DAY, 0.2]) {
        const sliceMs = sliceDays * DAY;
        const anchor = sec + Math.ceil((Date.now() - sec) / sliceMs) * sliceMs;
        const got = await c.transaction.collectAll({
          oldestDate: oldest,
          timeSliceDays: sliceDays,
          now: () => anchor,
        });
        // A v1 upstream orders by (whole second, _id): compare as sets and check the order it defines.
        const want = since(all, oldest);
        expect(new Set(ids(got))).toEqual(new Set(ids(want)));
        expect(got).toHaveLength(want.length);
      }
      expect(ids(await c.party.collectAll())).toHaveLength((await truth(s, 'parties')).length);
    } finally {
      await s.close();
    }
  });
});
