/**
 * The Redis seen-set backend against the real Redis: membership, adds to several sets, and the cross-process
 * in-flight locks (one SET NX PX per key, taken in one script call per page).
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisSeenSet } from '../../../src/dedup/index.js';

const redisUrl = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:16379';
const prefix = `it-seen-${randomUUID().slice(0, 8)}`;

describe('createRedisSeenSet on real Redis', () => {
  let redis: Redis;
  beforeAll(() => {
    redis = new Redis(redisUrl, { maxRetriesPerRequest: null });
  });
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  });

  it('has / add / drop', async () => {
    const seen = createRedisSeenSet(redis);
    const [a, b] = [`${prefix}:a`, `${prefix}:b`];
    await seen.add([a, b], ['x', 'y']);
    expect(await seen.has(a, ['x', 'z', 'y'])).toEqual([true, false, true]);
    expect(await seen.has(b, ['y'])).toEqual([true]);
    await seen.drop([a]);
    expect(await seen.has(a, ['x'])).toEqual([false]);
    expect(await seen.has(b, [])).toEqual([]);
  });

  it("locks: each key once per owner until unlocked or expired; unlock frees only the owner's keys", async () => {
    const seen = createRedisSeenSet(redis);
    const keys = [`${prefix}:l1`, `${prefix}:l2`, `${prefix}:l3`];
    expect(await seen.lock!([], 'p1', 1000)).toEqual([]);
    expect(await seen.lock!(keys.slice(0, 2), 'p1', 30_000)).toEqual([true, true]);
    expect(await seen.lock!(keys, 'p2', 30_000)).toEqual([false, false, true]);
    expect(await redis.get(keys[0]!)).toBe('p1');
    const ttl = await redis.pttl(keys[0]!);
    expect(ttl).toBeGreaterThan(20_000);
    expect(ttl).toBeLessThanOrEqual(30_000);
    await seen.unlock!(keys, 'p1');
    expect(await redis.get(keys[0]!)).toBeNull();
    expect(await redis.get(keys[2]!)).toBe('p2');
    expect(await seen.lock!(keys, 'p2', 30_000)).toEqual([true, true, false]);
    // An expired lock can be taken again.
    expect(await seen.lock!([`${prefix}:short`], 'p1', 50)).toEqual([true]);
    await new Promise((r) => setTimeout(r, 120));
    expect(await seen.lock!([`${prefix}:short`], 'p2', 50)).toEqual([true]);
  });
});
