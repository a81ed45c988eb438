/** Every method with its spec defaults, against the simulator's ground truth. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NotFoundError, ValidationError } from '../../../../src/foundation/errors/index.js';
import { parseCursor } from '../../../../src/upstream/client/index.js';
import { ids, startSim, testClient, timeOf, truth, WORLD_NOW } from './helpers.js';
import type { Rec, Sim } from './helpers.js';

let sim: Sim;
let client: ReturnType<typeof testClient>;
beforeAll(async () => {
  sim = await startSim();
  client = testClient(sim);
});
afterAll(async () => {
  await sim.close();
});

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

describe('single reads', () => {
  it('article.get / getLite, party.get, user.getById / getLite, checked against the truth', async () => {
    const [a] = await truth(sim, 'articles');
    const [p] = await truth(sim, 'parties');
    const [u] = await truth(sim, 'users');
    const article = await client.article.get(a!._id);
    expect(article._id).toBe(a!._id);
    expect(typeof article.content).toBe('string');
    expect((await client.article.getLite(a!._id))._id).toBe(a!._id);
    expect(await client.party.get(p!._id)).toEqual(p);
    const user = await client.user.getById(u!._id);
    expect(user).toEqual(u);

    expect((await client.user.getLite(u!._id))._id).toBe(u!._id);
    await expect(client.user.getById('ffffffffffffffffffffffff')).rejects.toBeInstanceOf(NotFoundError);
  });

  it('country.getAllCountries, inventory.fetchCurrentEquipment (flattened, slot set), donation.getTotals', async () => {
    const countries = await client.country.getAllCountries();
    expect(ids(countries)).toEqual(ids(await truth(sim, 'countries')));
    const [u] = await truth(sim, 'users');
    const eq = await client.inventory.fetchCurrentEquipment(u!._id);
    expect(Array.isArray(eq)).toBe(true);
    for (const e of eq) expect(typeof e.slot).toBe('string');
    const donations = await truth(sim, 'donations');
    const target = donations.map((d) => d['countryId']).find((x): x is string => typeof x === 'string') ?? '';
    if (target) {
      const totals = await client.donation.getTotals({ countryId: target });
      expect(totals.donorCount).toBeGreaterThan(0);
    }
  });
});

describe('pagination with spec defaults', () => {
  it('default page sizes: 10 for article/transaction/user, 20 for party/election/donation', async () => {
    const countries = await client.country.getAllCountries();
    expect((await client.transaction.getPaginated()).items).toHaveLength(10);
    expect((await client.article.getPaginated('last')).items).toHaveLength(10);
    const busiest = countries[0]!._id;
    const users = await client.user.getByCountry(busiest);
    expect(users.items.length).toBeLessThanOrEqual(10);
    expect((await client.party.getPaginated()).items).toHaveLength(20);
    expect((await client.election.getPaginated()).items).toHaveLength(20);
    expect((await client.donation.getPaginated()).items).toHaveLength(20);
  });

  it('one page follows nextCursor exactly; autoItems walks the whole listing', async () => {
    const parties = await truth(sim, 'parties');
    const first = await client.party.getPaginated({ limit: 7 });
    expect(ids(first.items)).toEqual(ids(parties.slice(0, 7)));
    const second = await client.party.getPaginated({ limit: 7, cursor: first.nextCursor });
    expect(ids(second.items)).toEqual(ids(parties.slice(7, 14)));
    const all = await collect(client.party.getPaginated({ autoItems: true, limit: 13 }));
    expect(ids(all)).toEqual(ids(parties));
  });

  it('maxPages bounds auto-pagination; cursorEnd stops once the cursor is older', async () => {
    const elections = await truth(sim, 'elections');
    const three = await collect(client.election.getPaginated({ autoItems: true, limit: 5, maxPages: 3 }));
    expect(ids(three)).toEqual(ids(elections.slice(0, 15)));
    const cut = timeOf(elections[30]!);
    const until = await collect(
      client.election.getPaginated({ autoItems: true, limit: 4, cursorEnd: new Date(cut).toISOString() }),
    );
    // Pagination stops on the first page whose cursor is older than cursorEnd: every item down to it, and no page more.
    expect(until.length).toBeGreaterThanOrEqual(30);
    expect(until.length).toBeLessThan(30 + 8);
    expect(ids(until)).toEqual(ids(elections.slice(0, until.length)));
  });

  it('getByCountry / getUsersByCountry return every record of the country', async () => {
    const countries = await client.country.getAllCountries();
    const c = countries[1]!._id;
    const parties = (await truth(sim, 'parties')).filter((p) => p['country'] === c);
    expect(ids(await client.party.getByCountry(c))).toEqual(ids(parties));
    const elections = (await truth(sim, 'elections')).filter((e) => e['country'] === c);
    expect(ids(await client.election.getByCountry(c))).toEqual(ids(elections));
    const users = (await truth(sim, 'users')).filter((u) => u['country'] === c);
    expect(ids(await client.user.getUsersByCountry(c))).toEqual(ids(users));
  });

  it('cursors the upstream emits parse (v2)', async () => {
    const page = await client.transaction.getPaginated({ limit: 3 });
    const parsed = parseCursor(page.nextCursor!);
    expect(parsed.format).toBe('v2');
    expect(parsed.timeMs).toBe(timeOf(page.items[2] as Rec));
    expect(parsed.timeMs).toBeLessThanOrEqual(WORLD_NOW);
  });

  it('a malformed record fails a read with a ValidationError naming its path, or passes through on request', async () => {
    const s = await startSim({ faults: { malformed: 0.2 } });
    try {
      const c = testClient(s);
      const err = await c.donation.collectAll({ timeSliceDays: 400 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ValidationError);
      expect((err as ValidationError).path).toMatch(/^items\[\d+\]/);
      const passed = await c.donation.collectAll({ timeSliceDays: 400, onInvalidItem: 'pass' });
      expect(passed.length).toBe((await truth(s, 'donations')).length);
    } finally {
      await s.close();
    }
  });
});
