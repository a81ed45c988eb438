/**
 * A worker's slots follow the key's fetcher (issue 23): while the budget and the work bind and POSTs leave short of a
 * full batch, a BullMQ slice worker runs more slices at once; when the key no longer binds, back to its configured
 * concurrency. The fetcher publishes what it saw through the real Redis; the simulator answers (keyed limit 20 / 10 s,
 * no latency).
 */
import { randomUUID } from 'node:crypto';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSharedBudget, createWorkEstimator } from '../../../../src/upstream/budget/index.js';
import { createClient } from '../../../../src/upstream/client/index.js';
import { startSlotSizing, type ConcurrencyChange } from '../../../../src/pipeline/queue/slot-sizing.js';
import { startSimulator } from '../../../../tools/simulator/index.js';

const redisUrl = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:16379';
const prefix = `it-slot-sizing-${randomUUID().slice(0, 8)}`;
const HOLD_MS = 400;

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

async function until(check: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
}

describe('slot sizing by the fetcher’s demand', () => {
  it('a rise takes more slices at once without waiting for a running one to complete', async () => {
    const bull = new Redis(redisUrl, { maxRetriesPerRequest: null });
    const p = `${prefix}-wake`;
    const queue = new Queue('slices', { connection: bull, prefix: p });
    let release: () => void = () => undefined;
    const released = new Promise<void>((r) => (release = r));
    let started = 0;
    // Slices that do not complete until released: as first pages held at the fetcher.
    const worker = new Worker(
      'slices',
      async () => {
        started++;
        await released;
      },
      { connection: bull, prefix: p, concurrency: 2 },
    );
    worker.on('error', () => undefined);
    const short = { at: Date.now(), binds: true, calls: 10, maxBatch: 50, tail: false };
    const sizing = startSlotSizing(
      worker,
      { demand: () => Promise.resolve({ ...short, at: Date.now() }) },
      { base: 2, max: 4, intervalMs: 50, settleMs: 0, onChange: () => undefined, onError: () => undefined },
    );
    try {
      await queue.addBulk(Array.from({ length: 6 }, (_, i) => ({ name: 'slice', data: { i } })));
      await until(() => started >= 4, 3000);
      expect(worker.concurrency).toBe(4);
      expect(started).toBe(4);
    } finally {
      await sizing.stop();
      release();
      await worker.close();
      await queue.obliterate({ force: true });
      await queue.close();
      await bull.quit();
    }
  });

  it('grows while the key binds and POSTs leave short, up to the cap; back to the base, halving, when it no longer binds', async () => {
    const conn = new Redis(redisUrl, { maxRetriesPerRequest: null });
    const apiKey = `key-${randomUUID()}`;
    // As many slices as run (no slice waits for a slot): the growth is the binding key's alone ('short'), not the
    // spare key's (issue 32: slices waiting grow the slots at once, see the unit tests).
    let pending = 1_000;
    const budget = createSharedBudget({
      redis: conn,
      apiKey,
      prefix: `${prefix}:budget:`,
      maxHoldMs: HOLD_MS,
      leaseMs: 1500,
      work: createWorkEstimator({
        // `running` above the calls ever waiting: never saturated, so each lone call is held, then sent short.
        source: { countSlices: () => Promise.resolve({ pending, running: 1000 }) },
        refreshMs: 0,
      }),
    });
    const client = createClient({ baseUrl: sim.url, apiKey, budget, cache: false });
    const bull = new Redis(redisUrl, { maxRetriesPerRequest: null });
    const queue = new Queue('slices', { connection: bull, prefix });
    const worker = new Worker('slices', () => Promise.resolve(), {
      connection: bull,
      prefix,
      concurrency: 4,
    });
    worker.on('error', () => undefined);
    const changes: ConcurrencyChange[] = [];
    const errors: Error[] = [];
    const sizing = startSlotSizing(worker, budget, {
      base: 4,
      max: 16,
      intervalMs: 50,
      settleMs: 0,
      onChange: (c) => changes.push(c),
      onError: (e) => errors.push(e),
    });
    try {
      // The first answer tells the budget (until then one request goes at a time, never held).
      await client.call('user.getUserById', { userId: userIds[0] });
      // One call at a time against work far beyond the key: each POST leaves with 1 of 50 calls after the hold.
      for (const userId of userIds.slice(1, 5)) {
        await client.call('user.getUserById', { userId });
        await until(() => changes.length > 0 && worker.concurrency === 16, 300);
      }
      expect(worker.concurrency).toBe(16);
      // Grown twice by the key's binding short POSTs, at most doubling each time; the key's chains (its 20 requests
      // in 10 s x the measured latency x 50) were known from the first answer on.
      const grown = changes.filter((c) => c.to > c.from);
      expect(grown.map((c) => c.to)).toEqual([8, 16]);
      for (const c of grown) {
        expect(c.reason).toBe('short');
        expect(c.demand).toMatchObject({ binds: true, calls: 1, maxBatch: 50, tail: false });
        expect(c.demand?.chains).toBeGreaterThan(0);
      }

      // The work is done: the next call goes at once, the key no longer binds, the slots come back, halfway at each
      // batch sent after the last change.
      pending = 0;
      await client.call('user.getUserById', { userId: userIds[5] });
      await until(() => worker.concurrency === 8, 2000);
      expect(worker.concurrency).toBe(8);
      await client.call('user.getUserById', { userId: userIds[6] });
      await until(() => worker.concurrency === 4, 2000);
      expect(worker.concurrency).toBe(4);
      expect(changes.slice(-2).map((c) => [c.from, c.to, c.reason])).toEqual([
        [16, 8, 'free'],
        [8, 4, 'free'],
      ]);
      expect(changes.at(-1)?.demand?.binds).toBe(false);
      expect(sim.stats().rateLimited).toBe(0);
      expect(errors).toEqual([]);
    } finally {
      await sizing.stop();
      await worker.close();
      await queue.obliterate({ force: true });
      await queue.close();
      await bull.quit();
      await budget.close();
      await conn.quit();
    }
  });
});
