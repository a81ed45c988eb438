// Proves Redis is real and fit for BullMQ: a job added and processed, and a waiting job that survives a Redis
// restart (append-only persistence) and is processed afterwards.
import { Queue, Worker } from 'bullmq';
import type { Job } from 'bullmq';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestServices, restartRedis } from '../../helpers/services.js';

const services = createTestServices('smoke-bullmq');
afterAll(() => services.cleanup());

interface SmokeJob {
  n: number;
  label: string;
}

/** Resolves with the first job the worker completes (and its return value). */
function firstCompleted(
  worker: Worker<SmokeJob, string>,
): Promise<{ job: Job<SmokeJob, string>; result: string }> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no job completed within 60 s')), 60_000);
    worker.on('completed', (job, result) => {
      clearTimeout(timer);
      resolve({ job, result });
    });
    worker.on('failed', (_job, error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}

describe('smoke: BullMQ through Redis', () => {
  it('runs with noeviction and append-only persistence', async () => {
    const redis = services.redis();
    expect(await redis.config('GET', 'maxmemory-policy')).toEqual(['maxmemory-policy', 'noeviction']);
    expect(await redis.config('GET', 'appendonly')).toEqual(['appendonly', 'yes']);
  });

  it('adds a job and a worker processes it', async () => {
    const name = services.name('queue');
    const queue = new Queue<SmokeJob, string>(name, { connection: services.redis() });
    services.onCleanup(() => queue.close());
    const worker = new Worker<SmokeJob, string>(
      name,
      (job) => Promise.resolve(`${job.data.label}:${job.data.n * 2}`),
      {
        connection: services.redis(),
        concurrency: 1,
      },
    );
    worker.on('error', () => undefined); // always attached (a worker without one crashes the process)
    services.onCleanup(() => worker.close());
    const done = firstCompleted(worker);

    const added = await queue.add('double', { n: 21, label: 'answer' });
    const { job, result } = await done;

    expect(job.id).toBe(added.id);
    expect(result).toBe('answer:42');
    expect(await queue.getJobCounts('completed', 'waiting', 'failed')).toEqual({
      completed: 1,
      waiting: 0,
      failed: 0,
    });
    // Closed here rather than in cleanup: the next test restarts Redis under every open connection.
    await worker.close();
    await queue.close();
  });

  it('keeps a waiting job across a Redis restart and processes it afterwards', async () => {
    const name = services.name('durable');
    const redisBefore = services.redis();
    const queue = new Queue<SmokeJob, string>(name, { connection: redisBefore });
    services.onCleanup(() => queue.close());
    const added = await queue.add('survive', { n: 7, label: 'durable' });
    expect(await queue.getJobCounts('waiting')).toEqual({ waiting: 1 });
    const pidBefore = /process_id:(\d+)/.exec(await redisBefore.info('server'))?.[1];
    // Like a deployment: producers are gone while Redis restarts; the job only lives in Redis.
    await queue.close();
    redisBefore.disconnect();

    await restartRedis();

    // A new connection talks to a new Redis process that reloaded the job from the append-only file.
    const redisAfter = services.redis();
    const pidAfter = /process_id:(\d+)/.exec(await redisAfter.info('server'))?.[1];
    expect(pidAfter).toBeDefined();
    expect(pidAfter).not.toBe(pidBefore);
    const queueAfter = new Queue<SmokeJob, string>(name, { connection: redisAfter });
    services.onCleanup(() => queueAfter.close());
    expect(await queueAfter.getJobCounts('waiting')).toEqual({ waiting: 1 });

    const worker = new Worker<SmokeJob, string>(
      name,
      (job) => Promise.resolve(`${job.data.label}:${job.data.n}`),
      {
        connection: services.redis(),
        concurrency: 1,
      },
    );
    worker.on('error', () => undefined);
    services.onCleanup(() => worker.close());
    const { job, result } = await firstCompleted(worker);
    expect(job.id).toBe(added.id);
    expect(job.data).toEqual({ n: 7, label: 'durable' });
    expect(result).toBe('durable:7');
  });
});
