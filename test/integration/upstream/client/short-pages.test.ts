/**
 * `GAMEDATA_SHORT_PAGES` against an upstream that breaks what `end` assumes (the simulator's `shortPages` fault: pages
 * cut short while rows remain below them): `confirm` reads every row, `end` stops early, and the truth `gamedata
 * verify` reads (`collectUpstreamTruth` over a `confirm` source, as the command builds it) is whole, so a topic filled
 * under `end` from such an upstream would show rows missing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createListing, readSlice } from '../../../../src/upstream/client/index.js';
import { createClientPlannerSource, createClientSliceSource } from '../../../../src/app/index.js';
import type { ShortPages } from '../../../../src/foundation/models/index.js';
import { collectUpstreamTruth } from '../../../../src/app/verify/index.js';
import { ids, startSim, testClient, truth, type Sim } from './helpers.js';

let sim: Sim;
beforeAll(async () => {
  // Without the rate limit: verify's truth reads its walks one after another, one call per request.
  sim = await startSim({ faults: { shortPages: 0.3 }, rateLimit: { enabled: false } });
});
afterAll(async () => {
  await sim.close();
});

/** The busiest user's trades (buyer or seller), newest first, as the upstream orders them. */
async function busiestUser(): Promise<{ userId: string; rows: string[] }> {
  const rows = await truth(sim, 'transactions');
  const by = new Map<string, typeof rows>();
  for (const r of rows)
    for (const u of new Set([r['buyerId'], r['sellerId']]))
      if (typeof u === 'string') by.set(u, [...(by.get(u) ?? []), r]);
  const [userId, mine] = [...by].sort((a, b) => b[1].length - a[1].length)[0]!;
  const ordered = [...mine].sort(
    (a, b) =>
      Date.parse(String(b['createdAt'])) - Date.parse(String(a['createdAt'])) || (a._id < b._id ? 1 : -1),
  );
  return { userId, rows: ids(ordered) };
}

describe('short pages served with rows below them', () => {
  it('confirm reads every row of a walk; end stops at the first short page', async () => {
    const client = testClient(sim);
    const { userId, rows } = await busiestUser();
    expect(rows.length).toBeGreaterThan(300);
    const read = async (shortPages: ShortPages): Promise<string[]> => {
      const got: string[] = [];
      const listing = createListing('transactions', { userId });
      for await (const page of readSlice(
        client,
        listing,
        { start: 0, end: Infinity },
        { limit: 100, shortPages },
      ))
        got.push(...ids(page.items));
      return got;
    };
    expect(await read('confirm')).toEqual(rows);
    const ended = await read('end');
    expect(ended.length).toBeLessThan(rows.length);
    expect(ended).toEqual(rows.slice(0, ended.length));
  });

  it("verify's truth (a confirm source) is whole; an end source's misses rows", async () => {
    const client = testClient(sim);
    const planner = createClientPlannerSource(client);
    const whole = new Set(ids(await truth(sim, 'transactions')));
    const confirmed = await collectUpstreamTruth(
      createClientSliceSource(client, { shortPages: 'confirm' }),
      planner,
      'transactions',
    );
    expect(new Set(confirmed.map((r) => String(r._id)))).toEqual(whole);
    const ended = await collectUpstreamTruth(
      createClientSliceSource(client, { shortPages: 'end' }),
      planner,
      'transactions',
    );
    expect(ended.length).toBeLessThan(whole.size);
  }, 120_000);
});
