/**
 * The fetcher's hold is decided by the work (issue 23): against a fast upstream full speed could always spend the
 * key's window, but a partial batch is held only while the calls waiting and the work coming need more requests
 * than the key grants. One process on the real Redis and the simulator (keyed limit 20 / 10 s, no latency).
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BatchInfo } from '../../../../src/upstream/budget/index.js';
import { createSharedBudget, createWorkEstimator } from '../../../../src/upstream/budget/index.js';
import { createClient } from '../../../../src/upstream/client/index.js';
import { startSimulator } from '../../../../tools/simulator/index.js';

const redisUrl = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:16379';
const prefix = `it-work-hold-${randomUUID().slice(0, 8)}:`;
const HOLD_MS = 1000;

let sim: Awaited<ReturnType<typeof startSimulator>>;
let redis: Redis;
let userIds: string[];

beforeAll(async () => {
  sim = await startSimulator({
    port: 0,
    scale: 'small',
    seed: 5,
    rateLimit: { enabled: true, keyed: 20, windowMs: 10_000 },
  });
  redis = new Redis(redisUrl, { maxRetriesPerRequest: null });
  userIds = (sim.truth('users') as unknown as { _id: string }[]).map((u) => u._id);
});

afterAll(async () => {
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
  await sim.close();
});

/** Sequential calls (each waits for the previous one's answer, as a slice's pages do) with `pending` slices queued. */
async function sequential(pending: number, calls: number): Promise<{ ms: number; batches: BatchInfo[] }> {
  const conn = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const batches: BatchInfo[] = [];
  const apiKey = `key-${randomUUID()}`;
  const budget = createSharedBudget({
    redis: conn,
    apiKey,
    prefix,
    maxHoldMs: HOLD_MS,
    leaseMs: 1500,
    work: createWorkEstimator({
      // `running` above the calls ever waiting: never saturated, so holds are decided by the fill alone.
      source: { countSlices: () => Promise.resolve({ pending, running: 1000 }) },
      refreshMs: 0,
    }),
    onBatch: (b) => batches.push(b),
  });
  const client = createClient({ baseUrl: sim.url, apiKey, budget, cache: false });
  try {
    // The first answer tells the budget (until then one request goes at a time, never held).
    await client.call('user.getUserById', { userId: userIds[0] });
    const started = performance.now();
    for (const userId of userIds.slice(1, 1 + calls)) await client.call('user.getUserById', { userId });
    return { ms: performance.now() - started, batches: batches.slice(1) };
  } finally {
    await budget.close();
    await conn.quit();
  }
}

describe('the hold decided by the work', () => {
  it('nothing else coming: every call goes at once, though full speed could spend the window', async () => {
    const r = await sequential(0, 6);
    expect(r.batches.map((b) => b.binds)).toEqual(Array<boolean>(6).fill(false));
    // Six holds would take 6 s; at the upstream's latency it is a few round trips.
    expect(r.ms).toBeLessThan(3 * HOLD_MS);
    expect(sim.stats().rateLimited).toBe(0);
  });

  it('work coming beyond the key: a partial batch is held for the fill', async () => {
    const r = await sequential(10_000, 3);
    expect(r.batches.map((b) => b.binds)).toEqual([true, true, true]);
    expect(r.ms).toBeGreaterThanOrEqual(3 * HOLD_MS - 150);
    expect(sim.stats().rateLimited).toBe(0);
  });
});
