/** The work the fetcher weighs: the slice queue's waiting, prioritized and delayed jobs, on the real Redis. */
import { randomUUID } from 'node:crypto';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { createQueuedSlices } from '../../../../src/pipeline/planner/queued-slices.js';
import { QUEUE_NAMES } from '../../../../src/pipeline/contract/queue-names.js';

const redisUrl = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:16379';
const prefix = `it-queued-slices-${randomUUID().slice(0, 8)}`;
const redis = new Redis(redisUrl, { maxRetriesPerRequest: null });
const queue = new Queue(QUEUE_NAMES.slices, { connection: redis, prefix });

afterAll(async () => {
  await queue.obliterate({ force: true });
  await queue.close();
  await redis.quit();
});

describe('createQueuedSlices', () => {
  it('counts the slices waiting, prioritized and delayed as pending, none running (not other queues)', async () => {
    const work = createQueuedSlices({ connection: redis, prefix });
    try {
      expect(await work.countSlices()).toEqual({ pending: 0, running: 0 });
      await queue.add('slice', { n: 1 });
      await queue.add('slice', { n: 2 });
      await queue.add('slice', { n: 3 }, { priority: 2 });
      await queue.add('slice', { n: 4 }, { delay: 60_000 });
      const runs = new Queue(QUEUE_NAMES.runs, { connection: redis, prefix });
      await runs.add('run', {});
      expect(await work.countSlices()).toMatchObject({ pending: 4, running: 0 });
      await runs.obliterate({ force: true });
      await runs.close();
    } finally {
      await work.close();
    }
    // The shared connection stays open.
    expect(await redis.ping()).toBe('PONG');
  });

  it("samples the pending slices' plans: pages, and a profile per row for users", async () => {
    const p = `${prefix}-plans`;
    const q = new Queue(QUEUE_NAMES.slices, { connection: redis, prefix: p });
    const work = createQueuedSlices({ connection: redis, prefix: p, sample: 3 });
    try {
      await q.add('slice', { resource: 'donations', expectedPages: 5 });
      await q.add('slice', { resource: 'users', expectedPages: 2 });
      await q.add('slice', { resource: 'transactions' });
      await q.add('slice', { resource: 'transactions', expectedPages: 9 });
      // The three oldest are sampled: 5 + 2 x 101 calls from two plans, one slice without a plan.
      expect(await work.countSlices()).toEqual({
        pending: 4,
        running: 0,
        sample: { slices: 3, known: 2, calls: 207 },
      });
    } finally {
      await work.close();
      await q.obliterate({ force: true });
      await q.close();
    }
  });

  it('counts a slice a worker is running as pending and running', async () => {
    const p = `${prefix}-run`;
    const q = new Queue(QUEUE_NAMES.slices, { connection: redis, prefix: p });
    const conn = new Redis(redisUrl, { maxRetriesPerRequest: null });
    let release: () => void = () => undefined;
    let started: () => void = () => undefined;
    const running = new Promise<void>((resolve) => (started = resolve));
    const worker = new Worker(
      QUEUE_NAMES.slices,
      () => {
        started();
        return new Promise<void>((resolve) => (release = resolve));
      },
      { connection: conn, prefix: p },
    );
    const work = createQueuedSlices({ connection: redis, prefix: p });
    try {
      await q.add('slice', { n: 1 });
      await q.add('slice', { n: 2 }, { delay: 60_000 });
      await running;
      expect(await work.countSlices()).toMatchObject({ pending: 2, running: 1 });
    } finally {
      release();
      await worker.close();
      await work.close();
      await q.obliterate({ force: true });
      await q.close();
      await conn.quit();
    }
  });
});
