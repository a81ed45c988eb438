/**
 * The SWR cache on real Redis: two clients (two "processes") sharing one Redis see ONE revalidation of a stale key
 * (the `SET NX PX` lock), a fresh entry written by one serves the other, an older fetch never overwrites a newer
 * entry, and invalidateCache() clears the shared store.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createRedisStore } from '../../../../src/upstream/cache/redis-store.js';
import { makeEntry } from '../../../../src/upstream/cache/freshness.js';
import { createClient } from '../../../../src/upstream/client/index.js';
import { startSimulator } from '../../../../tools/simulator/index.js';

type Sim = Awaited<ReturnType<typeof startSimulator>>;
let sim: Sim;
let redisA: Redis;
let redisB: Redis;
const prefix = `test:cache:${randomUUID()}:`;

beforeAll(async () => {
  sim = await startSimulator({ port: 0, scale: 'small', seed: 5 });
  redisA = new Redis(inject('redisUrl'));
  redisB = new Redis(inject('redisUrl'));
});
afterAll(async () => {
  const keys = await redisA.keys(`${prefix}*`);
  if (keys.length > 0) await redisA.del(...keys);
  await Promise.all([redisA.quit(), redisB.quit()]);
  await sim.close();
});

const calls = (procedure: string): number => sim.stats().procedureCalls.byProcedure[procedure] ?? 0;

describe('SWR cache shared through Redis', () => {
  it('two clients sharing Redis see one revalidation', async () => {
    let now = Date.now();
    const windows = { 'user.getUserById': { freshMs: 1_000, staleMs: 600_000 } };
    const make = (redis: Redis) =>
      createClient({
        baseUrl: sim.url,
        apiKey: 'k',
        redis,
        now: () => now,
        cache: { redisPrefix: prefix, windows },
      });
    const a = make(redisA);
    const b = make(redisB);
    const [u] = sim.truth('users') as { _id: string }[];
    sim.resetStats();
    await a.user.getById(u!._id);
    await b.user.getById(u!._id); // served from Redis: no second fetch
    expect(calls('user.getUserById')).toBe(1);
    now += 5_000; // stale for both
    await Promise.all([
      a.user.getById(u!._id),
      b.user.getById(u!._id),
      a.user.getById(u!._id),
      b.user.getById(u!._id),
    ]);
    await Promise.all([a.idle(), b.idle()]);
    expect(calls('user.getUserById')).toBe(2);
    // Later reads find the revalidated entry in Redis: still no further fetch.
    await Promise.all([a.user.getById(u!._id), b.user.getById(u!._id)]);
    await Promise.all([a.idle(), b.idle()]);
    expect(calls('user.getUserById')).toBe(2);
  });

  it('invalidateCache() clears the shared store for every resource', async () => {
    const a = createClient({ baseUrl: sim.url, apiKey: 'k', redis: redisA, cache: { redisPrefix: prefix } });
    const [u] = sim.truth('users') as { _id: string }[];
    await a.user.getById(u!._id);
    await a.country.getAllCountries();
    expect((await redisA.keys(`${prefix}entry:*`)).length).toBeGreaterThanOrEqual(2);
    await a.donation.invalidateCache();
    expect(await redisA.keys(`${prefix}entry:*`)).toEqual([]);
  });

  it('an older fetch never overwrites a newer entry (compare-and-set in Redis)', async () => {
    const store = createRedisStore({ redis: redisA, prefix });
    const w = { freshMs: 60_000, staleMs: 60_000 };
    const t = Date.now();
    expect(await store.set('k', makeEntry('newer', t, w))).toBe(true);
    expect(await store.set('k', makeEntry('older', t - 10, w))).toBe(false);
    expect((await store.get('k'))?.value).toBe('newer');
    const token = await store.tryLock('k', 1000);
    expect(token).toBeDefined();
    expect(await createRedisStore({ redis: redisB, prefix }).tryLock('k', 1000)).toBeUndefined();
    await store.unlock('k', token!);
  });
});
