/**
 * Exactly-once delivery (GAMEDATA_DELIVERY=exactly-once, issue 17) through real `gamedata worker` processes:
 * 1. During a backfill of every resource (faults on, so there are dead letters) worker processes are killed with
 *    SIGKILL ten times and the broker (a private one: the shared stack's broker serves everyone else) is killed and
 *    restarted once; afterwards a read_committed consumer reads every record and every dead letter exactly once
 *    (0 missing, 0 duplicates) against the simulator's truth.
 * 2. A worker is SIGSTOPped past its slice lock, another worker takes its slices, then the first gets SIGCONT: it
 *    is fenced, and nothing is duplicated.
 * Both on a private Kafka and Redis (test/helpers/private-kafka.ts; the shared registry is reused): the file shares no
 * broker and no Redis with the `services` files, so it runs in the `stacks` lane beside them (vitest.config.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { takeHeavyTestLock } from '../helpers/heavy-test-lock.js';
import { RESOURCES, type ResourceName } from '../../src/foundation/models/resources.js';
import { connectRedis, getRunStatus } from '../../src/pipeline/queue/index.js';
import { QUEUE_NAMES } from '../../src/pipeline/contract/queue-names.js';
import type { SliceJobData } from '../../src/pipeline/planner/index.js';
import { createHarness, type Harness } from './pipeline-harness.js';
import { startPrivateKafka, type PrivateKafka } from '../helpers/private-kafka.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface WorkerProcess {
  child: ChildProcess;
  ready: Promise<void>;
  exited: Promise<number | null>;
}

function startWorker(h: Harness, log: string[], lock: { duration: number; stalled: number }): WorkerProcess {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      'src/app/cli/main.ts',
      'worker',
      '--concurrency',
      '16',
      '--quiet',
      '--lock-duration',
      String(lock.duration),
      '--stalled-interval',
      String(lock.stalled),
      '--metrics-port',
      '0',
    ],
    { cwd: ROOT, env: { ...h.env, GAMEDATA_DELIVERY: 'exactly-once' }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let resolveReady!: () => void;
  const ready = new Promise<void>((r) => (resolveReady = r));
  const onData = (b: Buffer): void => {
    const text = b.toString();
    log.push(text);
    if (text.includes('worker: pid')) resolveReady();
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return { child, ready, exited };
}

/** The workers' log lines saying they fenced a live producer of their own (worker-operations.ts `onSelfFence`). */
function selfFences(log: readonly string[]): string[] {
  return log
    .join('')
    .split('\n')
    .filter((l) => l.includes('fenced its own live producer'));
}

/** On a failure, the workers' last log lines (errors and why a slice failed) on stderr: a CI log keeps them. */
function printLogOnFailure(name: string, log: readonly string[]): void {
  onTestFailed(() => {
    const lines = log
      .join('')
      .split('\n')
      .filter((l) => l.trim() !== '');
    console.error(
      `${name}: the workers' last ${String(Math.min(60, lines.length))} log lines:\n${lines.slice(-60).join('\n')}`,
    );
  });
}

/** Every record and every dead letter exactly once, per resource. */
async function expectExactlyOnce(h: Harness, resources: readonly ResourceName[]): Promise<string> {
  const lines: string[] = [];
  for (const resource of resources) {
    const r = await h.verify(resource);
    expect({
      resource,
      missing: r.missing,
      duplicates: r.duplicates,
      unexpected: r.unexpected,
      undecodable: r.undecodable,
      dlqFound: r.dlq.found,
      dlqMessages: r.dlq.messages,
    }).toEqual({
      resource,
      missing: 0,
      duplicates: 0,
      unexpected: 0,
      undecodable: 0,
      dlqFound: r.dlq.expected,
      dlqMessages: r.dlq.expected,
    });
    lines.push(`${resource} ${r.matched}+${r.dlq.messages} dlq`);
  }
  return lines.join(', ');
}

/** Slices that a worker other than their first one finished (BullMQ moved them back from a stalled worker). */
async function takenOver(h: Harness): Promise<number> {
  const connection = connectRedis(h.settings.redisUrl);
  const queue = new Queue<SliceJobData>(QUEUE_NAMES.slices, { connection, prefix: h.settings.queuePrefix });
  try {
    const jobs = await queue.getJobs(['completed'], 0, -1);
    return jobs.filter((j) => (j.stalledCounter ?? 0) > 0).length;
  } finally {
    await queue.close();
    await connection.quit().catch(() => undefined);
  }
}

/**
 * Samples the run every 5 s from `since` until stopped: `<s>s <completed>/<pending> a<active>` per sample, where
 * active is the slices a worker holds (a long stretch with slices held and none completed is slices waiting on
 * takeovers or recovery reads). `stop` ends the sampling and gives the samples.
 */
function tailTimeline(
  runId: string,
  h: Harness,
  redis: ReturnType<typeof connectRedis>,
  since: number,
): { stop: () => Promise<string[]> } {
  const samples: string[] = [];
  const queue = new Queue<SliceJobData>(QUEUE_NAMES.slices, {
    connection: redis,
    prefix: h.settings.queuePrefix,
  });
  let stopped = false;
  const sampling = (async () => {
    while (!stopped) {
      const status = await getRunStatus(runId, { connection: redis, prefix: h.settings.queuePrefix });
      const active = await queue.getActiveCount();
      const at = ((Date.now() - since) / 1000).toFixed(0);
      samples.push(`${at}s ${String(status?.slices.completed)}/${String(status?.slices.pending)} a${active}`);
      for (let waited = 0; waited < 5000 && !stopped; waited += 250) await sleep(250);
    }
  })().catch((e: unknown) => samples.push(`(sampling stopped: ${String(e)})`));
  let stopping: Promise<string[]> | undefined;
  return {
    stop: () =>
      (stopping ??= (async () => {
        stopped = true;
        await sampling;
        await queue.close();
        return samples;
      })()),
  };
}

/** A harness on the private Kafka and Redis: the harness takes them from the environment, set for it alone. */
async function privateHarness(kafka: PrivateKafka, name: string): Promise<Harness> {
  const shared = { brokers: process.env['KAFKA_BROKERS'], redis: process.env['REDIS_URL'] };
  process.env['KAFKA_BROKERS'] = kafka.brokers;
  process.env['REDIS_URL'] = kafka.redisUrl;
  try {
    return await createHarness(name, {
      latency: { requestMs: 120, procedureMs: 0, feedHeadMs: 0, feedPerHourMs: 0, filteredMs: 0 },
      faults: { seed: 11, malformed: 0.01 },
    });
  } finally {
    process.env['KAFKA_BROKERS'] = shared.brokers;
    process.env['REDIS_URL'] = shared.redis;
  }
}

describe('exactly-once delivery through worker processes', () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  // Not beside the chaos e2e: in CI both run in the `stacks` lane, one file at a time; the lock keeps two vitest
  // processes started by hand apart too (see the helper).
  let release: () => Promise<void> = () => Promise.resolve();
  let kafka: PrivateKafka;
  beforeAll(async () => {
    release = await takeHeavyTestLock('exactly-once e2e');
    kafka = await startPrivateKafka({ redis: true });
    cleanups.push(() => kafka.destroy());
  }, 900_000);
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    await release();
  });

  it('10 x SIGKILL of a worker and a broker kill + restart: every record and dead letter exactly once', async () => {
    const h = await privateHarness(kafka, 'eos-crash');
    cleanups.push(() => h.cleanup());
    const log: string[] = [];
    printLogOnFailure('exactly-once crash test', log);
    const lock = { duration: 8000, stalled: 2000 };
    const redis = connectRedis(h.settings.redisUrl);
    cleanups.push(() => redis.quit());
    // A slower upstream while the kills land (each request 400 ms, 120 ms after): the workers' slots grow to spend
    // the key whatever the latency, and at 120 ms a CI run ended after 5 kills (2026-11-28). The test is about the
    // kills, so the run must outlast them.
    h.sim.configure({ latency: { requestMs: 400 } });
    const runId = await h.enqueue({ resources: [...RESOURCES], fullHistory: true });
    const startedAt = Date.now();
    let kills = 0;
    let w = startWorker(h, log, lock);
    const workers = [w];
    cleanups.push(() => {
      for (const x of workers) if (x.child.exitCode === null) x.child.kill('SIGKILL');
      return Promise.resolve();
    });
    for (; kills < 10; kills++) {
      await w.ready;
      await sleep(2000 + Math.floor(Math.random() * 1500));
      // Only kills that land mid-run count: with the shared transactions' linger the run can end before the tenth
      // (a CI run did, 2026-11-26); it is never killed fewer than six times, the broker kill (the fifth) among them.
      const status = await getRunStatus(runId, { connection: redis, prefix: h.settings.queuePrefix });
      if (status?.state === 'completed') break;
      w.child.kill('SIGKILL');
      await w.exited;
      if (kills === 4) {
        // The broker dies too (no controlled shutdown) and comes back while a worker is running.
        w = startWorker(h, log, lock);
        workers.push(w);
        await w.ready;
        await sleep(1500);
        kafka.kill();
        await sleep(3000);
        await kafka.start();
        continue;
      }
      w = startWorker(h, log, lock);
      workers.push(w);
    }
    h.sim.configure({ latency: { requestMs: 120 } });
    expect(kills, 'SIGKILLs that landed mid-run').toBeGreaterThanOrEqual(6);
    const killsEndedAt = Date.now();
    const tail = tailTimeline(runId, h, redis, killsEndedAt);
    // The rest of the run has taken up to 344 s: the one live worker fences its own producer while resolving the
    // dedup locks of pages its dead predecessors left (docs/benchmarks/diary.md, CI, 2026-11-29 afternoon). Slow, not
    // wrong, so the wait leaves room within the test's 900 s.
    const result = await h.wait(runId, 780_000).finally(() => tail.stop());
    const drainedAt = Date.now();
    await w.ready;
    w.child.kill('SIGTERM');
    expect(await w.exited).toBe(0);
    const summary = await expectExactlyOnce(h, RESOURCES);
    // Issue 47: no worker fenced its own live producer (each would be logged and counted, gamedata_self_fences_total).
    expect(selfFences(log)).toEqual([]);
    // What the slices' failed attempts said (each spends an attempt and backs off from 1 s, so a slice that failed
    // several times in a row shows as a long "rest of the run"): printed for the CI log, pass or fail.
    const attempts = log
      .join('')
      .split('\n')
      .filter((l) => /^worker: slice \S+: /.test(l))
      .map((l) => l.replace(/^worker: slice \S+: /, ''));
    const byReason = new Map<string, number>();
    for (const reason of attempts)
      byReason.set(reason.slice(0, 160), (byReason.get(reason.slice(0, 160)) ?? 0) + 1);
    console.log(
      `exactly-once crash test: ${attempts.length} failed slice attempt(s)${[...byReason].map(([r, n]) => `\n  ${n} x ${r}`).join('')}`,
    );
    console.log(
      `exactly-once crash test: ${kills} x SIGKILL + broker kill/restart; ${summary}; counters ${JSON.stringify(result.counters)}; ` +
        `kills ${((killsEndedAt - startedAt) / 1000).toFixed(1)} s, rest of the run ${((drainedAt - killsEndedAt) / 1000).toFixed(1)} s, ` +
        `verify ${((Date.now() - drainedAt) / 1000).toFixed(1)} s\n  the rest of the run, every 5 s: ${(await tail.stop()).join(' ')}`,
    );
    // The rest of the run usually takes 16-40 s; it once took 249 s with no slice attempt failing (CI, 2026-11-29).
    // When it runs long, the workers' last lines (takeovers, outages, the slots' changes) go to the CI log too.
    if (drainedAt - killsEndedAt > 90_000) {
      const lines = log
        .join('')
        .split('\n')
        .filter((l) => l.startsWith('worker: '));
      console.log(
        `exactly-once crash test: a long rest of the run; the workers' last lines:\n${lines.slice(-40).join('\n')}`,
      );
    }
  }, 900_000);

  it('a worker SIGSTOPped past its slice lock is fenced after SIGCONT: 0 duplicates', async () => {
    const h = await privateHarness(kafka, 'eos-zombie');
    cleanups.push(() => h.cleanup());
    const log: string[] = [];
    printLogOnFailure('exactly-once zombie test', log);
    const lock = { duration: 3000, stalled: 1000 };
    const redis = connectRedis(h.settings.redisUrl);
    cleanups.push(() => redis.quit());
    const resources: ResourceName[] = ['transactions', 'donations', 'users'];
    const runId = await h.enqueue({ resources, fullHistory: true });
    const a = startWorker(h, log, lock);
    const workers = [a];
    cleanups.push(() => {
      for (const x of workers) {
        if (x.child.exitCode === null) {
          x.child.kill('SIGCONT');
          x.child.kill('SIGKILL');
        }
      }
      return Promise.resolve();
    });
    await a.ready;
    await sleep(4000);
    const status = await getRunStatus(runId, { connection: redis, prefix: h.settings.queuePrefix });
    expect(status?.state).not.toBe('completed');
    a.child.kill('SIGSTOP');
    const b = startWorker(h, log, lock);
    workers.push(b);
    await b.ready;
    // Past A's lock (3 s) and two stalled checks: B owns A's slices and has published some of their pages.
    await sleep(10_000);
    a.child.kill('SIGCONT');
    const wokenAt = Date.now();
    await h.wait(runId, 600_000);
    const drainedAt = Date.now();
    for (const x of [a, b]) x.child.kill('SIGTERM');
    expect(await b.exited).toBe(0);
    expect(await a.exited).toBe(0);
    // Both exit by themselves once drained: nothing left open (a drained worker that something kept alive says what
    // after 5 s and exits; the woken zombie's Kafka probe did, for minutes, before 2026-11-26).
    expect(
      log
        .join('')
        .split('\n')
        .filter((l) => l.includes('still running after')),
    ).toEqual([]);
    expect(await takenOver(h)).toBeGreaterThan(0); // B really took slices A had started
    const summary = await expectExactlyOnce(h, resources);
    expect(selfFences(log)).toEqual([]);
    console.log(
      `exactly-once zombie test: ${summary}; rest of the run after SIGCONT ${((drainedAt - wokenAt) / 1000).toFixed(1)} s, ` +
        `exits and verify ${((Date.now() - drainedAt) / 1000).toFixed(1)} s`,
    );
  }, 900_000);
});
