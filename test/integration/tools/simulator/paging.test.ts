/**
 * Walking every listing (each filter) through nextCursor yields exactly the ground truth, in order, without
 * duplicates, across same-millisecond ties; synthetic v2 cursors partition the data; v1 mode walks completely.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeCursorV1, encodeCursorV2 } from '../../../../tools/simulator/cursor.js';
import { startSimulator, type Simulator } from '../../../../tools/simulator/index.js';
import { H72, NOW, data, ids, walk, type Rec } from './helpers.js';

let sim: Simulator;
let v1: Simulator;
const truth: Record<string, Rec[]> = {};
const ms = (r: Rec, field = 'createdAt'): number => Date.parse(String(r[field]));
const ZERO = '000000000000000000000000';

beforeAll(async () => {
  // The rate limit is not under test here: walks make hundreds of requests.
  sim = await startSimulator({ port: 0, seed: 5, rateLimit: { enabled: false } });
  v1 = await startSimulator({ port: 0, seed: 5, cursor: 'v1', rateLimit: { enabled: false } });
  for (const r of [
    'transactions',
    'users',
    'parties',
    'elections',
    'donations',
    'articles',
    'countries',
  ] as const)
    truth[r] = sim.truth(r);
});
afterAll(async () => {
  await Promise.all([sim.close(), v1.close()]);
});

const tx = (): Rec[] => truth['transactions'] as Rec[];
const TX = 'transaction.getPaginatedTransactions';

function expectSameOrder(got: Rec[], want: Rec[]): void {
  expect(new Set(ids(got)).size).toBe(got.length); // no duplicates
  expect(ids(got)).toEqual(ids(want));
}

describe('transaction feed', () => {
  it('unfiltered: exactly the last 72 h, newest first, and nothing older', async () => {
    const want = tx().filter((t) => ms(t) >= NOW - H72);
    const { items } = await walk(sim, TX, {}, { limit: 100 });
    expectSameOrder(items, want);
    expect(items.length).toBeLessThan(tx().length);
  });

  it('pages through the >100-row same-millisecond burst with limit 100 and smaller', async () => {
    const counts = new Map<number, number>();
    for (const t of tx()) counts.set(ms(t), (counts.get(ms(t)) ?? 0) + 1);
    const [burstMs] = [...counts.entries()]
      .filter(([t]) => t >= NOW - H72)
      .sort((a, b) => b[1] - a[1])[0] as [number, number];
    const want = tx().filter((t) => ms(t) === burstMs);
    expect(want.length).toBeGreaterThan(100);
    for (const limit of [100, 37, 1]) {
      const start = encodeCursorV2(burstMs, 'ffffffffffffffffffffffff');
      const { items } = await walk(
        sim,
        TX,
        {},
        { limit, cursor: start, stopBelowMs: burstMs, maxPages: 400 },
      );
      expectSameOrder(items, want);
    }
  });

  it('an empty page (below the window) still carries a cursor', async () => {
    const cursor = encodeCursorV2(NOW - H72 - 1000, ZERO);
    const page = await data(sim, TX, { limit: 10, cursor });
    expect(page.items).toEqual([]);
    expect(page.nextCursor).toBe(cursor);
  });

  it('userId: buyer or seller, full history; the walk reaches the oldest record', async () => {
    const oldest = tx()[tx().length - 1] as Rec;
    const users = new Set([String(oldest['buyerId'])]);
    const seller = tx().find((t) => t['sellerId'] !== undefined && ms(t) < NOW - H72);
    users.add(String(seller?.['sellerId']));
    for (const u of users) {
      const want = tx().filter((t) => t['buyerId'] === u || t['sellerId'] === u);
      const { items } = await walk(sim, TX, { userId: u }, { limit: 100 });
      expectSameOrder(items, want);
      if (u === oldest['buyerId']) expect(items[items.length - 1]?.['_id']).toBe(oldest['_id']);
    }
  });

  it('countryId, muId, partyId reach the full history', async () => {
    const sample = (field: string): string =>
      String(tx().filter((t) => t[field] !== undefined && ms(t) < NOW - H72)[0]?.[field]);
    for (const field of ['countryId', 'muId', 'partyId']) {
      const value = sample(field);
      const want = tx().filter((t) => t[field] === value);
      const { items } = await walk(sim, TX, { [field]: value }, { limit: 100 });
      expectSameOrder(items, want);
      expect(items.some((t) => ms(t) < NOW - H72)).toBe(true);
    }
  });

  it('itemCode matches the outer item only and ANDs with transactionType (one or an array)', async () => {
    const caseTx = tx().find((t) => t['transactionType'] === 'openCase') as Rec;
    const inner = String((caseTx['item'] as Rec)['itemCode']);
    const byInner = await walk(sim, TX, { itemCode: inner }, { limit: 100 });
    expectSameOrder(
      byInner.items,
      tx().filter((t) => t['itemCode'] === inner),
    );
    expect(byInner.items.some((t) => t['transactionType'] === 'openCase')).toBe(false);
    const both = await walk(sim, TX, { itemCode: inner, transactionType: 'itemMarket' }, { limit: 100 });
    expectSameOrder(
      both.items,
      tx().filter((t) => t['itemCode'] === inner && t['transactionType'] === 'itemMarket'),
    );
    const many = await walk(
      sim,
      TX,
      { itemCode: inner, transactionType: ['craftItem', 'dismantleItem'] },
      { limit: 100 },
    );
    expectSameOrder(
      many.items,
      tx().filter(
        (t) =>
          t['itemCode'] === inner && ['craftItem', 'dismantleItem'].includes(String(t['transactionType'])),
      ),
    );
  });

  it('transactionType alone stays inside the 72 h window', async () => {
    const { items } = await walk(sim, TX, { transactionType: ['wage', 'donation'] }, { limit: 100 });
    expectSameOrder(
      items,
      tx().filter((t) => ms(t) >= NOW - H72 && ['wage', 'donation'].includes(String(t['transactionType']))),
    );
  });

  it('unknown entities give empty pages, not errors', async () => {
    expect((await data(sim, TX, { userId: 'ffffffffffffffffffffffff' })).items).toEqual([]);
    expect((await data(sim, TX, { itemCode: 'unobtainium' })).items).toEqual([]);
  });

  it('synthetic v2 cursors at arbitrary instants partition the window and a user history exactly', async () => {
    const u = String(tx()[0]?.['buyerId']);
    const userWant = tx().filter((t) => t['buyerId'] === u || t['sellerId'] === u);
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: NOW - H72 - 3_600_000, max: NOW }), { maxLength: 6 }),
        fc.boolean(),
        fc.integer({ min: 5, max: 100 }),
        async (cuts, byUser, limit) => {
          const input: Rec = byUser ? { userId: u } : {};
          const want = byUser
            ? userWant.filter((t) => ms(t) >= NOW - H72 - 3_600_000)
            : tx().filter((t) => ms(t) >= NOW - H72);
          const edges = [NOW - H72 - 3_600_000, ...new Set(cuts), NOW + 1].sort((a, b) => a - b);
          const got: Rec[] = [];
          // Newest slice first: [edges[i], edges[i+1]) read from v2(end, 000…0) until an item older than start.
          for (let i = edges.length - 2; i >= 0; i--) {
            const start = edges[i] as number;
            const end = edges[i + 1] as number;
            if (start === end) continue;
            const { items } = await walk(sim, TX, input, {
              limit,
              cursor: encodeCursorV2(end, ZERO),
              stopBelowMs: start,
            });
            got.push(...items);
          }
          expectSameOrder(got, want);
        },
      ),
      { numRuns: 8 },
    );
  });
});

describe('other listings', () => {
  it('users by country: thin items, every user in exactly one country', async () => {
    const all: Rec[] = [];
    for (const c of truth['countries'] as Rec[]) {
      const want = (truth['users'] as Rec[]).filter((u) => u['country'] === c['_id']);
      const { items } = await walk(
        sim,
        'user.getUsersByCountry',
        { countryId: String(c['_id']) },
        { limit: 17 },
      );
      expectSameOrder(items, want);
      for (const item of items) expect(Object.keys(item).sort()).toEqual(['_id', 'createdAt']);
      all.push(...items);
    }
    expect(new Set(ids(all))).toEqual(new Set(ids(truth['users'] as Rec[])));
  });

  it('parties and elections: all and by country, whatever the direction', async () => {
    for (const [procedure, resource, field] of [
      ['party.getManyPaginated', 'parties', 'country'],
      ['election.getElections', 'elections', 'country'],
    ] as const) {
      const everything = truth[resource] as Rec[];
      expectSameOrder((await walk(sim, procedure, {}, { limit: 20 })).items, everything);
      expectSameOrder(
        (await walk(sim, procedure, { direction: 'backward' }, { limit: 9 })).items,
        everything,
      );
      const country = String(everything[0]?.[field]);
      expectSameOrder(
        (await walk(sim, procedure, { countryId: country }, { limit: 3 })).items,
        everything.filter((r) => r[field] === country),
      );
    }
  });

  it('donations: all, by each target, and totals that agree', async () => {
    const all = truth['donations'] as Rec[];
    expectSameOrder((await walk(sim, 'donation.getManyPaginated', {}, { limit: 100 })).items, all);
    for (const field of ['muId', 'countryId', 'partyId']) {
      const value = String(all.find((d) => d[field] !== undefined)?.[field]);
      const want = all.filter((d) => d[field] === value);
      expectSameOrder(
        (await walk(sim, 'donation.getManyPaginated', { [field]: value }, { limit: 20 })).items,
        want,
      );
      const totals = await data<Rec>(sim, 'donation.getTotalDonations', { [field]: value });
      const sum = Math.round(want.reduce((a, d) => a + (d['amount'] as number), 0) * 100) / 100;
      expect(totals).toEqual({ totalAmount: sum, donorCount: new Set(want.map((d) => d['userId'])).size });
    }
  });

  it('article feed: every type and filter, sorted on publishedAt', async () => {
    const all = truth['articles'] as Rec[];
    const pub = (a: Rec): number => ms(a, 'publishedAt');
    const author = String(all[0]?.['authorId']);
    const users = truth['users'] as Rec[];
    const authorCountry = users.find((u) => u['_id'] === author)?.['country'];
    const cases: Array<[Rec, Rec[]]> = [
      [{ type: 'last' }, all],
      [{ type: 'daily' }, all.filter((a) => pub(a) >= NOW - 24 * 3_600_000)],
      [{ type: 'weekly' }, all.filter((a) => pub(a) >= NOW - 7 * 24 * 3_600_000)],
      [{ type: 'top' }, all.filter((a) => (a['score'] as number) >= 10)],
      [{ type: 'last', userId: author }, all.filter((a) => a['authorId'] === author)],
      [{ type: 'my', userId: author }, all.filter((a) => a['authorId'] === author)],
      [{ type: 'my' }, []],
      [{ type: 'subscriptions', userId: author }, all.filter((a) => a['countryId'] === authorCountry)],
      [
        { type: 'last', categories: ['economy', 'fun'] },
        all.filter((a) => ['economy', 'fun'].includes(String(a['category']))),
      ],
      [{ type: 'last', languages: ['fr'] }, all.filter((a) => a['language'] === 'fr')],
      [{ type: 'last', positiveScoreOnly: true }, all.filter((a) => (a['score'] as number) > 0)],
    ];
    for (const [input, want] of cases) {
      const { items } = await walk(sim, 'article.getArticlesPaginated', input, { limit: 23 });
      expect(want.length > 0 || input['type'] === 'my').toBe(true);
      expectSameOrder(items, want);
    }
    expect('content' in (all[0] as Rec)).toBe(true); // the feed carries content
  });
});

describe('v1 cursors', () => {
  const v1Key = (r: Rec): [number, string] => [Math.floor(ms(r) / 1000), String(r['_id'])];
  const v1Order = (records: Rec[]): Rec[] =>
    [...records].sort((a, b) => {
      const [sa, ia] = v1Key(a);
      const [sb, ib] = v1Key(b);
      return sb - sa || (ib > ia ? 1 : ib < ia ? -1 : 0);
    });

  it('emits JS-date cursors and walks the window and a user history completely (order: second, then _id)', async () => {
    const page = await data(v1, TX, { limit: 5 });
    expect(page.nextCursor).toMatch(
      /^\w{3} \w{3} \d{2} \d{4} \d{2}:\d{2}:\d{2} GMT\+0000 \(Coordinated Universal Time\)\|[0-9a-f]{24}$/,
    );
    const window = await walk(v1, TX, {}, { limit: 100 });
    expectSameOrder(window.items, v1Order(tx().filter((t) => ms(t) >= NOW - H72)));
    const u = String(tx()[tx().length - 1]?.['buyerId']);
    const history = await walk(v1, TX, { userId: u }, { limit: 7 });
    expectSameOrder(history.items, v1Order(tx().filter((t) => t['buyerId'] === u || t['sellerId'] === u)));
  });

  it('accepts the forms older clients forge: <ISO>|<oid> and <JS date>|<oid>', async () => {
    const at = NOW - 10 * 3_600_000;
    const want = v1Order(tx().filter((t) => ms(t) < at && ms(t) >= NOW - H72)).slice(0, 50);
    for (const cursor of [`${new Date(at).toISOString()}|${ZERO}`, encodeCursorV1(at, ZERO)]) {
      const page = await data(v1, TX, { limit: 50, cursor });
      expectSameOrder(page.items, want);
    }
    // A v2 cursor means nothing to the v1 service.
    expect(
      await data(v1, TX, { limit: 1, cursor: encodeCursorV2(at, ZERO) }).catch((e: Error) => e.message),
    ).toMatch(/500/);
  });
});
