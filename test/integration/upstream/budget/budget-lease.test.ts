/**
 * The fetcher lease on real Redis: a holder whose tick comes late (a busy event loop) stops leading by itself once
 * `leaseMs` have passed since it last asked, before any tick, so two processes never both believe they fetch for the
 * key (seen in CI: under load the lease moved to another process while the first still said it led). And a holder
 * whose lapsed lease is still its own in Redis leads again at its next tick, with its fetch loop restarted (`onWon`).
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { budgetKeys } from '../../../../src/upstream/budget/index.js';
import { createBudgetLease } from '../../../../src/upstream/budget/budget-lease.js';

const redis = new Redis(process.env['REDIS_URL'] ?? 'redis://127.0.0.1:16379', {
  maxRetriesPerRequest: null,
});
const prefix = `it-lease-${randomUUID().slice(0, 8)}:`;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

afterAll(async () => {
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
});

describe('the fetcher lease', () => {
  it('stops leading when its lease time has passed unrenewed, and leads again when the lease is still its own', async () => {
    const keys = budgetKeys(prefix, 'k', 'http://127.0.0.1:4000');
    let clock = 1_000_000;
    let won = 0;
    const lease = (id: string, onWon: () => void, tickMs: number) =>
      createBudgetLease({
        redis,
        keys,
        id,
        leaseMs: 10_000,
        tickMs,
        canFetch: () => true,
        isClosed: () => false,
        onWon: () => {
          onWon();
          return Promise.resolve();
        },
        report: (error) => {
          throw error;
        },
        now: () => clock,
      });
    const first = lease('first', () => (won += 1), 50);
    first.start();
    for (let i = 0; i < 100 && !first.isLeader(); i++) await sleep(10);
    expect({ leader: first.isLeader(), won }).toEqual({ leader: true, won: 1 });

    // Its clock passes the lease before a tick renews it: it no longer leads, at once.
    clock += 10_000;
    expect(first.isLeader()).toBe(false);
    // The key is still its own in Redis (10 s of real time): the next tick renews it and restarts the fetch loop.
    for (let i = 0; i < 100 && !first.isLeader(); i++) await sleep(10);
    expect({ leader: first.isLeader(), won }).toEqual({ leader: true, won: 2 });

    // Meanwhile nobody else takes it.
    let otherWon = 0;
    const other = lease('other', () => (otherWon += 1), 10_000);
    other.start();
    await sleep(100);
    expect({ other: other.isLeader(), otherWon }).toEqual({ other: false, otherWon: 0 });
    expect(await redis.get(keys.leader)).toBe('first');
    await other.resign();
    await first.resign();
    await first.release();
    expect(await redis.get(keys.leader)).toBeNull();
  });
});
