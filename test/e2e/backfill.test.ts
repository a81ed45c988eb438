/**
 * Full backfills against the real Kafka / registry / Redis with the simulator upstream: each resource equals the
 * truth exactly (consume, decode, compare); full-history transactions hold each trade once; a second run publishes
 * nothing; --replay publishes everything again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESOURCES } from '../../src/foundation/models/resources.js';
import { createHarness, type Harness } from './pipeline-harness.js';

describe('backfill end to end (simulator small)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness('backfill');
    await h.startWorkers(32);
  });
  afterAll(async () => {
    await h?.cleanup();
  });

  it('every resource (transactions with --full-history) equals the truth exactly', async () => {
    const started = Date.now();
    const result = await h.backfill({ resources: [...RESOURCES], fullHistory: true });
    const secs = (Date.now() - started) / 1000;
    let truthTotal = 0;
    for (const resource of RESOURCES) {
      const r = await h.verify(resource);
      truthTotal += r.expected;
      expect({
        resource,
        missing: r.missing,
        unexpected: r.unexpected,
        duplicates: r.duplicates,
        undecodable: r.undecodable,
      }).toEqual({
        resource,
        missing: 0,
        unexpected: 0,
        duplicates: 0,
        undecodable: 0,
      });
      expect(r.matched).toBe(h.sim.truth(resource).length);
    }
    expect(result.counters.published).toBe(truthTotal);
    // A trade is read under its buyer and its seller: the repeats were dropped by dedup, not published.
    expect(result.counters.deduplicated).toBeGreaterThan(0);
    console.log(`backfill of ${truthTotal} records in ${secs.toFixed(1)} s`);
  });

  it('the same backfill again publishes nothing; --replay publishes everything once more', async () => {
    const again = await h.backfill({ resources: ['donations', 'parties'] });
    expect(again.counters.published).toBe(0);
    expect(again.counters.deduplicated).toBe(again.counters.fetched);
    const replay = await h.backfill({ resources: ['donations', 'parties'], replay: true });
    const expected = h.sim.truth('donations').length + h.sim.truth('parties').length;
    expect(replay.counters.published).toBe(expected);
    const r = await h.verify('donations');
    expect(r.missing).toBe(0);
    expect(r.duplicates).toBe(h.sim.truth('donations').length); // every record now twice: once per run
  });
});
