/**
 * Users whom the per-country listing serves without `_id` (the simulator's malformed fault `missing-id`): a
 * full-history transactions backfill still equals the truth exactly, with nothing excluded. The per-user walk finds
 * those users through their trades with walked users (user discovery) and walks their whole history, including the
 * single-party rows (wages, cases ...) that no other user's walk shows and that lie outside the feed's 72 h.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UNFILTERED_TRANSACTION_WINDOW_MS } from '../../src/pipeline/planner/index.js';
import { createHarness, type Harness } from './pipeline-harness.js';

describe('full-history transactions with users missing from the listings (real Kafka, registry, Redis)', () => {
  let h: Harness;
  beforeAll(async () => {
    // 5 % malformed: 6 of the small world's 400 users are listed without `_id`.
    h = await createHarness('unlisted', { faults: { seed: 11, malformed: 0.05 } });
    await h.startWorkers(32);
  });
  afterAll(async () => {
    await h?.cleanup();
  });

  it('equals the truth exactly: the hidden users are discovered through their trades and walked in full', async () => {
    const hidden = new Set(
      h.sim
        .malformed('users')
        .filter((m) => m.kind === 'missing-id')
        .map((m) => m._id),
    );
    const truth = h.sim.truth('transactions');
    const cutoff = h.sim.now() - UNFILTERED_TRANSACTION_WINDOW_MS;
    // The rows no listed user's walk can show: every party is a hidden user.
    const atStake = truth.filter((t) => {
      const parties = [t['buyerId'], t['sellerId']].filter((u) => typeof u === 'string');
      return parties.length > 0 && parties.every((u) => hidden.has(u));
    });
    const oldAtStake = atStake.filter((t) => Date.parse(String(t['createdAt'])) < cutoff);
    expect(hidden.size).toBeGreaterThan(0);
    expect(oldAtStake.length).toBeGreaterThan(0);

    const started = Date.now();
    const result = await h.backfill({ resources: ['transactions'], fullHistory: true }, 280_000);
    const secs = (Date.now() - started) / 1000;
    const r = await h.verify('transactions');
    expect({
      missing: r.missing,
      unexpected: r.unexpected,
      duplicates: r.duplicates,
      undecodable: r.undecodable,
    }).toEqual({
      missing: 0,
      unexpected: 0,
      duplicates: 0,
      undecodable: 0,
    });
    expect(r.dlq.found).toBe(r.dlq.expected);
    const malformedTx = new Set(h.sim.malformed('transactions').map((m) => m._id));
    expect(r.matched).toBe(truth.filter((t) => !malformedTx.has(String(t['_id']))).length);
    // Loud: the run says how many listing items had no `_id` and how many users it walked by discovery.
    expect(result.users).toEqual({ unlistedUsers: hidden.size, discoveredUsers: hidden.size });
    console.log(
      `unlisted users: ${hidden.size} hidden, ${atStake.length} transactions only they are party to ` +
        `(${oldAtStake.length} older than 72 h), all on the topic; run ${JSON.stringify(result.counters)} ` +
        `${JSON.stringify(result.users)} in ${secs.toFixed(1)} s`,
    );
  });
});
