/**
 * Worker liveness (src/pipeline/queue/worker-liveness.ts) on real Redis and BullMQ: a killed or stopped worker's job goes to
 * another worker long before its lock would expire (locks and stalled checks here last 60 s, so only the liveness
 * sweep can move it), a live worker's long job is never taken, and a worker that never beat is never swept.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Queue, QueueEvents, Worker } from 'bullmq';
import { afterAll, describe, expect, it } from 'vitest';
import { startWorkerLiveness, type WorkerLiveness } from '../../../../src/pipeline/queue/worker-liveness.js';
import { createTestServices } from '../../../helpers/services.js';

const ROOT = fileURLToPath(new URL('../../../..', import.meta.url));
const LONG = { lockDuration: 60_000, stalledInterval: 60_000 };
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const services = createTestServices('worker-liveness');
afterAll(() => services.cleanup());

/** A queue of its own per test, and what a test starts (closed in the test's finally). */
function setup(name: string) {
  const queue = services.name(name);
  const prefix = 'bull';
  const connection = services.redis();
  const jobs = new Queue(queue, { connection, prefix });
  const events = new QueueEvents(queue, { connection: services.redis(), prefix });
  const closers: Array<() => Promise<unknown>> = [];
  const takeovers: Array<{ ids: readonly string[]; dead: readonly string[] }> = [];
  const live = (worker: Worker, timeoutMs: number): WorkerLiveness => {
    const l = startWorkerLiveness(worker, connection, async (id) => (await jobs.getJob(id)) ?? undefined, {
      prefix,
      queue,
      timeoutMs,
      maxStalledCount: 20,
      forgetAfterMs: 600_000,
      onTakeover: (ids, dead) => takeovers.push({ ids, dead }),
    });
    closers.push(() => l.stop());
    return l;
  };
  const worker = (processor: () => Promise<string>): Worker => {
    const w = new Worker(queue, processor, { connection, prefix, ...LONG });
    closers.push(() => w.close(true));
    return w;
  };
  return {
    queue,
    prefix,
    jobs,
    events,
    takeovers,
    live,
    worker,
    async close() {
      for (const c of closers.reverse()) await c().catch(() => undefined);
      await events.close();
      await jobs.close();
    },
  };
}

/** Starts the fixture worker in its own process; resolves with it once it has taken a job. */
function busyWorkerProcess(queue: string, prefix: string, timeoutMs: number) {
  const child: ChildProcess = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      'test/fixtures/liveness/busy-worker.ts',
      services.urls.redisUrl,
      prefix,
      queue,
      String(timeoutMs),
    ],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  const started = new Promise<{ id: string }>((resolve, reject) => {
    child.stdout?.on('data', (b: Buffer) => {
      out += b.toString();
      const id = /worker (\S+)/.exec(out)?.[1];
      if (id !== undefined && out.includes('started ')) resolve({ id });
    });
    child.once('exit', (code) => reject(new Error(`the busy worker exited (${code ?? 'signal'}): ${out}`)));
  });
  started.catch(() => undefined);
  return { child, started };
}

describe('worker liveness', () => {
  it("moves a SIGKILLed worker's job to a live worker within seconds, not after its 60 s lock", async () => {
    const s = setup('killed');
    const a = busyWorkerProcess(s.queue, s.prefix, 1000);
    try {
      const job = await s.jobs.add('slice', { n: 1 });
      const { id: deadId } = await a.started;
      a.child.kill('SIGKILL');
      const killedAt = Date.now();
      const b = s.worker(() => Promise.resolve('done by B'));
      s.live(b, 1000);
      const result: unknown = await job.waitUntilFinished(s.events, 30_000);
      const took = Date.now() - killedAt;
      expect(result).toBe('done by B');
      expect(s.takeovers).toEqual([{ ids: [job.id], dead: [deadId] }]);
      // The lock had 60 s left: only the sweep (1 s without a heartbeat, swept every 250 ms) can have moved it.
      expect(took).toBeLessThan(30_000);
      expect(await s.jobs.getJob(job.id ?? '').then((j) => j?.stalledCounter)).toBe(1);
    } finally {
      if (a.child.exitCode === null) a.child.kill('SIGKILL');
      await s.close();
    }
  });

  it("moves a SIGSTOPped worker's job too (exactly-once fences it when it wakes)", async () => {
    const s = setup('stopped');
    const a = busyWorkerProcess(s.queue, s.prefix, 1000);
    try {
      const job = await s.jobs.add('slice', { n: 1 });
      const { id: stoppedId } = await a.started;
      a.child.kill('SIGSTOP');
      const b = s.worker(() => Promise.resolve('done by B'));
      s.live(b, 1000);
      expect(await job.waitUntilFinished(s.events, 30_000)).toBe('done by B');
      expect(s.takeovers.flatMap((t) => t.dead)).toEqual([stoppedId]);
    } finally {
      a.child.kill('SIGCONT');
      a.child.kill('SIGKILL');
      await s.close();
    }
  });

  it('never takes the job of a live worker, however long it runs', async () => {
    const s = setup('busy');
    try {
      const a = s.worker(async () => {
        await sleep(4000); // four times the liveness timeout
        return 'done by A';
      });
      s.live(a, 1000);
      const job = await s.jobs.add('slice', { n: 1 });
      await a.waitUntilReady();
      while ((await s.jobs.getJobState(job.id ?? '')) !== 'active') await sleep(50);
      let bRan = 0;
      const b = s.worker(() => {
        bRan += 1;
        return Promise.resolve('done by B');
      });
      const bLiveness = s.live(b, 1000);
      await sleep(2000);
      expect(await bLiveness.sweep()).toEqual([]);
      expect(await job.waitUntilFinished(s.events, 30_000)).toBe('done by A');
      expect(bRan).toBe(0);
      expect(s.takeovers).toEqual([]);
    } finally {
      await s.close();
    }
  });

  it('never sweeps the job of a worker that never beat (another version, a tool)', async () => {
    const s = setup('unknown');
    try {
      let release!: () => void;
      const a = s.worker(() => new Promise<string>((r) => (release = () => r('done by A'))));
      const job = await s.jobs.add('slice', { n: 1 });
      while ((await s.jobs.getJobState(job.id ?? '')) !== 'active') await sleep(50);
      const b = s.worker(() => Promise.resolve('done by B'));
      const bLiveness = s.live(b, 500);
      await sleep(1500);
      expect(await bLiveness.sweep()).toEqual([]);
      expect(await s.jobs.getJobState(job.id ?? '')).toBe('active');
      release();
      expect(await job.waitUntilFinished(s.events, 30_000)).toBe('done by A');
      void a;
    } finally {
      await s.close();
    }
  });

  it('a sweeper whose own beat had run out sweeps nothing that time (Redis restarted, or it was stalled itself)', async () => {
    const s = setup('lapsed');
    const a = busyWorkerProcess(s.queue, s.prefix, 1000);
    try {
      const job = await s.jobs.add('slice', { n: 1 });
      await a.started;
      a.child.kill('SIGKILL');
      const b = s.worker(() => new Promise<string>(() => undefined));
      // A long timeout: B's own ticks (every 5 s, sweeping after 20 s) stay out of the way of the sweeps below.
      const bLiveness = s.live(b, 20_000);
      await b.waitUntilReady();
      await sleep(1500); // A's beat (1 s) has run out
      const redis = services.redis();
      await redis.zadd(`${s.prefix}:${s.queue}:liveness`, Date.now() - 5_000, b.id);
      expect(await bLiveness.sweep()).toEqual([]); // its own entry was old: no sweep
      expect(await s.jobs.getJobState(job.id ?? '')).toBe('active');
      expect(await bLiveness.sweep()).toEqual([job.id]); // beating again: A's job moves
    } finally {
      if (a.child.exitCode === null) a.child.kill('SIGKILL');
      await s.close();
    }
  });
});
