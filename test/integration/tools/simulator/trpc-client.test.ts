/** The official @trpc/client (httpBatchLink, POST via methodOverride) reads every procedure of the simulator. */
import { createTRPCClient, httpBatchLink, httpLink, TRPCClientError } from '@trpc/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator, type SimulatorRouter } from '../../../../tools/simulator/index.js';
import type { Rec } from './helpers.js';

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator({ port: 0, seed: 21, countArticleViews: false });
});
afterAll(async () => {
  await sim.close();
});

const batched = () =>
  createTRPCClient<SimulatorRouter>({
    links: [
      httpBatchLink({
        url: sim.url,
        methodOverride: 'POST',
        maxItems: 50,
        headers: { 'x-api-key': 'client-key' },
      }),
    ],
  });

describe('@trpc/client against the simulator', () => {
  it('reads all 14 procedures in one batched POST', async () => {
    const client = batched();
    const user = sim.truth('users')[0] as Rec;
    const party = sim.truth('parties')[0] as Rec;
    const article = sim.truth('articles')[0] as Rec;
    const country = String(user['country']);
    sim.resetStats();
    const [
      full,
      lite,
      feed,
      txs,
      onePary,
      parties,
      profile,
      userLite,
      byCountry,
      elections,
      donations,
      totals,
      countries,
      equipment,
    ] = await Promise.all([
      client.article.getArticleById.query({ articleId: String(article['_id']) }),
      client.article.getArticleLiteById.query({ articleId: String(article['_id']) }),
      client.article.getArticlesPaginated.query({ type: 'last', limit: 5 }),
      client.transaction.getPaginatedTransactions.query({ limit: 5 }),
      client.party.getById.query({ partyId: String(party['_id']) }),
      client.party.getManyPaginated.query({ limit: 5 }),
      client.user.getUserById.query({ userId: String(user['_id']) }),
      client.user.getUserLite.query({ userId: String(user['_id']) }),
      client.user.getUsersByCountry.query({ countryId: country, limit: 5 }),
      client.election.getElections.query({ limit: 5 }),
      client.donation.getManyPaginated.query({ limit: 5 }),
      client.donation.getTotalDonations.query({ countryId: country }),
      client.country.getAllCountries.query(),
      client.inventory.fetchCurrentEquipment.query({ userId: String(user['_id']) }),
    ]);
    const stats = sim.stats();
    expect(stats.httpRequests).toBe(1);
    expect(stats.batchSizes).toEqual({ '14': 1 });
    expect(Object.keys(stats.procedureCalls.byProcedure)).toHaveLength(14);

    expect(full['_id']).toBe(article['_id']);
    expect(full['comments']).toBeTypeOf('number');
    expect(lite['content']).toBeUndefined();
    expect(feed.items).toEqual(sim.truth('articles').slice(0, 5));
    expect(txs.items).toEqual(sim.truth('transactions').slice(0, 5));
    expect(onePary).toEqual(party);
    expect(parties.items).toEqual(sim.truth('parties').slice(0, 5));
    expect(profile).toEqual(user);
    expect(userLite['_id']).toBe(user['_id']);
    expect(byCountry.items.length).toBeGreaterThan(0);
    expect(elections.items).toEqual(sim.truth('elections').slice(0, 5));
    expect(donations.items).toEqual(sim.truth('donations').slice(0, 5));
    expect(totals.donorCount).toBeGreaterThan(0);
    expect(countries).toEqual(sim.truth('countries'));
    expect(Object.keys(equipment)).toContain('weapon');
  });

  it('surfaces per-slot errors as TRPCClientError with the HTTP status, other calls succeed', async () => {
    const client = batched();
    const [ok, missing] = await Promise.allSettled([
      client.country.getAllCountries.query(),
      client.user.getUserById.query({ userId: 'ffffffffffffffffffffffff' }),
    ]);
    expect(ok.status).toBe('fulfilled');
    expect(missing.status).toBe('rejected');
    const error = (missing as PromiseRejectedResult).reason as TRPCClientError<SimulatorRouter>;
    expect(error).toBeInstanceOf(TRPCClientError);
    expect(error.data?.httpStatus).toBe(404);
  });

  it('plain GET links work too (single calls)', async () => {
    const client = createTRPCClient<SimulatorRouter>({
      links: [httpLink({ url: sim.url, headers: { 'x-api-key': 'k' } })],
    });
    const page = await client.transaction.getPaginatedTransactions.query({ limit: 2 });
    expect(page.items).toHaveLength(2);
    expect(page.nextCursor).toMatch(/^v2\./);
  });
});
