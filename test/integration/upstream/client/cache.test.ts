/** SWR cache on single reads and reference data, and invalidateCache() across resources. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSim, testClient, truth } from './helpers.js';
import type { Sim } from './helpers.js';

let sim: Sim;
beforeAll(async () => {
  sim = await startSim();
});
afterAll(async () => {
  await sim.close();
});

const calls = (procedure: string): number => sim.stats().procedureCalls.byProcedure[procedure] ?? 0;

describe('SWR cache', () => {
  it('serves repeats from the cache; invalidateCache() on one resource clears every resource', async () => {
    const client = testClient(sim);
    const [u] = await truth(sim, 'users');
    const [p] = await truth(sim, 'parties');
    sim.resetStats();
    await client.user.getById(u!._id);
    await client.party.get(p!._id);
    await client.country.getAllCountries();
    await client.user.getById(u!._id);
    await client.party.get(p!._id);
    await client.country.getAllCountries();
    expect([calls('user.getUserById'), calls('party.getById'), calls('country.getAllCountries')]).toEqual([
      1, 1, 1,
    ]);
    await client.article.invalidateCache();
    await client.user.getById(u!._id);
    await client.party.get(p!._id);
    await client.country.getAllCountries();
    expect([calls('user.getUserById'), calls('party.getById'), calls('country.getAllCountries')]).toEqual([
      2, 2, 2,
    ]);
  });

  it('listings are never cached', async () => {
    const client = testClient(sim);
    sim.resetStats();
    await client.party.getPaginated({ limit: 3 });
    await client.party.getPaginated({ limit: 3 });
    expect(calls('party.getManyPaginated')).toBe(2);
  });

  it('a stale entry is served at once and revalidated by one fetch', async () => {
    let now = Date.now();
    const client = testClient(sim, {
      now: () => now,
      cache: { windows: { 'user.getUserById': { freshMs: 1000, staleMs: 60_000 } } },
    });
    const [u] = await truth(sim, 'users');
    sim.resetStats();
    await client.user.getById(u!._id);
    now += 5000;
    const again = await Promise.all([
      client.user.getById(u!._id),
      client.user.getById(u!._id),
      client.user.getById(u!._id),
    ]);
    expect(again.every((x) => x._id === u!._id)).toBe(true);
    await client.idle();
    expect(calls('user.getUserById')).toBe(2);
  });
});
