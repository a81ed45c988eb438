/** Live mode: the clock runs, records keep arriving, entities change (updatedAt/__v bumps); truth follows. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeCursorV2 } from '../../../../tools/simulator/cursor.js';
import { startSimulator, type Simulator } from '../../../../tools/simulator/index.js';
import { NOW, data, ids, walk, type Rec } from './helpers.js';

let sim: Simulator;
beforeAll(async () => {
  // 600 simulated seconds per wall second: a 0.5 s wait is 5 simulated minutes.
  sim = await startSimulator({
    port: 0,
    seed: 13,
    rateLimit: { enabled: false },
    live: { ratePerSecond: 5, changeRatePerSecond: 2, speed: 600 },
  });
});
afterAll(async () => {
  await sim.close();
});

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('live mode', () => {
  it('advances the clock and appends new transactions that an incremental tail picks up', async () => {
    const head = await data(sim, 'transaction.getPaginatedTransactions', { limit: 1 });
    const newest = head.items[0] as Rec;
    const t0 = sim.now();
    await sleep(600);
    const t1 = sim.now();
    expect(t1 - t0).toBeGreaterThan(100_000);
    // Tail: everything newer than what we had, read newest first down to the old head.
    const { items } = await walk(
      sim,
      'transaction.getPaginatedTransactions',
      {},
      {
        limit: 100,
        stopBelowMs: Date.parse(String(newest['createdAt'])),
      },
    );
    const fresh = items.filter((t) => t['_id'] !== newest['_id']);
    expect(fresh.length).toBeGreaterThan(100);
    for (const t of fresh) expect(Date.parse(String(t['createdAt']))).toBeGreaterThan(NOW);
    const truth = sim.truth('transactions');
    const truthIds = new Set(ids(truth));
    for (const id of ids(fresh)) expect(truthIds.has(id)).toBe(true);
  });

  it('changes entities: updatedAt and __v move, truth holds the current version', async () => {
    const before = new Map(sim.truth('users').map((u) => [u['_id'], u]));
    await sleep(500);
    const after = sim.truth('users');
    const changed = after.filter(
      (u) => before.has(u['_id']) && before.get(u['_id'])?.['updatedAt'] !== u['updatedAt'],
    );
    expect(changed.length).toBeGreaterThan(0);
    for (const u of changed) {
      expect(Date.parse(String(u['updatedAt']))).toBeGreaterThan(
        Date.parse(String(before.get(u['_id'])?.['updatedAt'])),
      );
      expect(u['__v'] as number).toBeGreaterThan(before.get(u['_id'])?.['__v'] as number);
    }
    // The API serves the same current version.
    const one = changed[0] as Rec;
    const served = await data<Rec>(sim, 'user.getUserById', { userId: one['_id'] });
    expect(served['__v']).toBeGreaterThanOrEqual(one['__v'] as number);
  });

  it('the 72 h window follows the clock', async () => {
    const floor = sim.now() - 72 * 3_600_000;
    const page = await data(sim, 'transaction.getPaginatedTransactions', {
      limit: 100,
      cursor: encodeCursorV2(floor + 60_000, '0'.repeat(24)),
    });
    for (const t of page.items) expect(Date.parse(String(t['createdAt']))).toBeGreaterThanOrEqual(floor);
  });
});
