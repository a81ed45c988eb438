/**
 * Crash test of the at-least-once mode (GAMEDATA_DELIVERY=at-least-once): worker PROCESSES (the real `gamedata worker` CLI) are killed with SIGKILL five times during a run and
 * restarted. The run completes, nothing is missing, and every duplicate lies in a crash window (a page acked by
 * Kafka but not yet marked seen when the process died): at most kills x concurrency x page size.
 * Last, SIGTERM drains the worker and it exits 0.
 * Default: scale small, all six resources, simulator latency on (so five kills land mid-run). For a medium-size run:
 * `CRASH_SCALE=medium CRASH_RESOURCES=donations,parties,elections npx vitest run --project services test/e2e/crash.test.ts`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESOURCES, isResourceName } from '../../src/foundation/models/resources.js';
import { getRunStatus } from '../../src/pipeline/queue/index.js';
import { connectRedis } from '../../src/pipeline/queue/index.js';
import { createHarness, type Harness } from './pipeline-harness.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CONCURRENCY = 16;
const PAGE = 100;
const KILLS = 5;
/**
 * A killed worker's slices stay locked this long before the stalled check hands them on, so the run cannot end within
 * it after a kill that caught slices; a kill comes every ~2.5-6 s (a restart through tsx, then {@link KILL_AFTER_MS}).
 */
const LOCK_MS = 12_000;
/**
 * How long after a (re)started worker is ready it is killed: long enough to take slices, short enough that the next
 * kill lands while the last one's slices are still locked. The run itself takes ~6 s at this latency without kills
 * (its slots grow to the latency); pauses of 2.5-4.5 s and an 8 s lock let a CI run end after two kills, its second
 * kill landing on a run whose slices were all but done.
 */
const KILL_AFTER_MS = { min: 1000, spread: 1500 };
const SCALE = (process.env['CRASH_SCALE'] ?? 'small') as 'small' | 'medium';
const RESOURCES_UNDER_TEST = (process.env['CRASH_RESOURCES'] ?? RESOURCES.join(','))
  .split(',')
  .filter(isResourceName);

function startWorker(
  h: Harness,
  log: string[],
): { child: ChildProcess; ready: Promise<void>; exited: Promise<number | null> } {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      'src/app/cli/main.ts',
      'worker',
      '--concurrency',
      String(CONCURRENCY),
      '--quiet',
      '--lock-duration',
      String(LOCK_MS),
      '--stalled-interval',
      '2000',
    ],
    // The at-least-once mode's own crash test (exactly-once has test/e2e/exactly-once.test.ts).
    { cwd: ROOT, env: { ...h.env, GAMEDATA_DELIVERY: 'at-least-once' }, stdio: ['ignore', 'pipe', 'pipe'] },
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

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('SIGKILL a worker process 5 times during a run', () => {
  let h: Harness;
  beforeAll(async () => {
    // Latency on, so the run lasts long enough to be killed five times mid-flight.
    h = await createHarness('crash', {
      scale: SCALE,
      ...(SCALE === 'small'
        ? { latency: { requestMs: 120, procedureMs: 0, feedHeadMs: 0, feedPerHourMs: 0, filteredMs: 0 } }
        : { rateLimit: { enabled: false } }),
    });
  });
  afterAll(async () => {
    await h?.cleanup();
  });

  it('completes with nothing missing; duplicates only from crash windows; SIGTERM drains cleanly', async () => {
    const log: string[] = [];
    const runId = await h.enqueue({ resources: RESOURCES_UNDER_TEST, fullHistory: true });
    const redis = connectRedis(h.settings.redisUrl);
    let kills = 0;
    try {
      let w = startWorker(h, log);
      for (; kills < KILLS; kills++) {
        await w.ready;
        await sleep(KILL_AFTER_MS.min + Math.floor(Math.random() * KILL_AFTER_MS.spread));
        // Only kills that land mid-run count. A small run can end before the fifth (the first kill's slices come back
        // after LOCK_MS): then it is killed fewer times, never fewer than three.
        const status = await getRunStatus(runId, { connection: redis, prefix: h.settings.queuePrefix });
        if (status?.state === 'completed') break;
        w.child.kill('SIGKILL');
        await w.exited;
        w = startWorker(h, log);
      }
      expect(kills).toBeGreaterThanOrEqual(3);
      const result = await h.wait(runId, SCALE === 'small' ? 280_000 : 800_000);
      // Clean shutdown: SIGTERM -> drain -> exit 0.
      await w.ready;
      w.child.kill('SIGTERM');
      expect(await w.exited).toBe(0);
      expect(log.join('')).toContain('worker: closed');

      let duplicates = 0;
      let truth = 0;
      for (const resource of RESOURCES_UNDER_TEST) {
        const r = await h.verify(resource);
        expect({
          resource,
          missing: r.missing,
          unexpected: r.unexpected,
          undecodable: r.undecodable,
        }).toEqual({ resource, missing: 0, unexpected: 0, undecodable: 0 });
        duplicates += r.duplicates;
        truth += r.expected;
      }
      console.log(
        `crash test (${SCALE}, ${RESOURCES_UNDER_TEST.join(',')}): ${kills} kills, ${truth} records, ${duplicates} duplicates, run counters ${JSON.stringify(result.counters)}`,
      );
      // Each killed process can leave at most one acked-but-unmarked page per running slice.
      expect(duplicates).toBeLessThanOrEqual(kills * CONCURRENCY * PAGE);
    } finally {
      await redis.quit();
    }
  }, 900_000);
});
