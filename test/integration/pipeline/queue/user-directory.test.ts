/**
 * The run's user set on the real Redis (`createRedisUserDirectory`): what it knows, and the discovered-users figure
 * when the planner starts walks before its listing ends (issue 32): users walked that the listing does not show,
 * whoever found them first.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisUserDirectory } from '../../../../src/pipeline/slice/user-discovery.js';

const redisUrl = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:16379';

describe('the run user directory on real Redis', () => {
  const prefix = `it-users-${randomUUID().slice(0, 8)}`;
  let redis: Redis;
  beforeAll(() => {
    redis = new Redis(redisUrl, { maxRetriesPerRequest: null });
  });
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  });

  it('counts as discovered only the users walked that the listing does not show, whoever found them first', async () => {
    const users = createRedisUserDirectory(redis, prefix);
    // the planner starts the head page's users (one of them, h, unlisted) and a first listing page's (a, b)
    await users.add('r1', ['h', 'a']);
    await users.add('r1', ['b']);
    // a walk's trades reveal c (listed, its page not read yet) and x (unlisted)
    expect(await users.unknown('r1', ['a', 'c', 'x'])).toEqual(['c', 'x']);
    expect(await users.remember('r1', ['c', 'x'])).toBe(2);
    // the listing ends: a, b, c, d listed (c twice), two items without an id
    await users.seed('r1', ['a', 'b', 'c', 'c', 'd'], 2);
    expect(await users.unknown('r1', ['a', 'b', 'c', 'd', 'h', 'x', 'y'])).toEqual(['y']);
    // walked: h, a, b, c, x, d; listed: a, b, c, d -> discovered h and x
    expect(await users.stats('r1')).toEqual({ unlistedUsers: 2, discoveredUsers: 2 });
    // a later trade reveals y
    expect(await users.remember('r1', ['y'])).toBe(1);
    expect(await users.stats('r1')).toEqual({ unlistedUsers: 2, discoveredUsers: 3 });
    // another run is its own
    expect(await users.unknown('r2', ['a'])).toEqual(['a']);
    expect(await users.stats('r2')).toEqual({ unlistedUsers: 0, discoveredUsers: 0 });
  });
});
