/**
 * Faults on (5xx, per-call 500s in batches, 429 storms, connection resets, hangs, broken JSON, malformed records):
 * a full backfill still completes with nothing missing, and every malformed record is in the DLQ.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESOURCES } from '../../src/foundation/models/resources.js';
import { createHarness, type Harness } from './pipeline-harness.js';

describe('backfill with the simulator faults on', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness('faults', {
      faults: {
        seed: 11,
        http5xx: 0.05,
        batch5xx: 0.03,
        reset: 0.03,
        hang: 0.01,
        badJson: 0.02,
        malformed: 0.004,
      },
      // A 429 storm: a tiny keyed limit with short windows.
      rateLimit: { enabled: true, keyed: 25, anonymous: 10, windowMs: 3000 },
    });
    await h.startWorkers(32);
  });
  afterAll(async () => {
    await h?.cleanup();
  });

  it('completes with nothing missing and the malformed records dead-lettered', async () => {
    const result = await h.backfill({ resources: [...RESOURCES], fullHistory: true }, 280_000);
    let malformed = 0;
    for (const resource of RESOURCES) {
      const r = await h.verify(resource);
      expect({ resource, missing: r.missing, unexpected: r.unexpected, undecodable: r.undecodable }).toEqual({
        resource,
        missing: 0,
        unexpected: 0,
        undecodable: 0,
      });
      expect({ resource, dlqFound: r.dlq.found }).toEqual({ resource, dlqFound: r.dlq.expected });
      malformed += r.dlq.expected;
    }
    expect(malformed).toBeGreaterThan(0);
    expect(result.counters.deadLettered).toBeGreaterThanOrEqual(malformed);
    const stats = h.sim.stats() as unknown as Record<string, unknown>;
    console.log(
      `faults: ${malformed} malformed dead-lettered; run ${JSON.stringify(result.counters)}; simulator ${JSON.stringify(stats).slice(0, 400)}`,
    );
  });
});
