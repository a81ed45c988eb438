/** Header-driven pacing and the shared 429 pause, against the simulator's fixed-window limiter. */
import { afterEach, describe, expect, it } from 'vitest';
import { H72, ids, startSim, testClient, truth, WORLD_NOW } from './helpers.js';
import type { Sim } from './helpers.js';

let sim: Sim | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

describe('rate limiting', () => {
  it('with the rate limit on, a full transaction.collectAll provokes no 429', async () => {
    sim = await startSim({ rateLimit: { enabled: true, keyed: 15, windowMs: 1500 } });
    // Small batches and pages so the call needs several windows' worth of requests.
    const client = testClient(sim, { maxBatchSize: 5 });
    const oldest = WORLD_NOW - H72;
    const got = await client.transaction.collectAll({
      oldestDate: oldest,
      limit: 10,
      timeSliceDays: 0.25,
      now: () => WORLD_NOW,
    });
    const want = (await truth(sim, 'transactions')).filter(
      (t) => Date.parse(String(t['createdAt'])) >= oldest,
    );
    expect(ids(got)).toEqual(ids(want));
    const stats = sim.stats();
    expect(stats.httpRequests).toBeGreaterThan(15 * 2); // it did span several windows
    expect(stats.rateLimited).toBe(0);
  });

  it('a forced 429 storm is ridden out: every call waits one shared pause, then succeeds', async () => {
    sim = await startSim({ rateLimit: { enabled: true, keyed: 4, windowMs: 1000 } });
    const client = testClient(sim, { maxBatchSize: 5, rateLimit: { reserve: 0, resetMarginMs: 0 } });
    const users = (await truth(sim, 'users')).slice(0, 60);
    // Another tool on the same key burns the window's budget first, so the client's requests meet 429s.
    const hog = testClient(sim, {
      rateLimit: false,
      maxBatchSize: 1,
      maxInFlight: 12,
      retry: { retries: 0 },
    });
    await Promise.allSettled(Array.from({ length: 12 }, (_, i) => hog.party.getPaginated({ limit: 1 + i })));
    const got = await Promise.all(users.map((u) => client.user.getById(u._id)));
    expect(ids(got)).toEqual(ids(users));
    expect(sim.stats().rateLimited).toBeGreaterThan(0);
    // The client met the storm, and its calls waited one shared pause instead of each hammering the service.
    const own = client.stats().status429;
    expect(own).toBeGreaterThan(0);
    expect(own).toBeLessThanOrEqual(3);
  });
});
