/**
 * Retention under continuous tails (real Kafka, registry, Redis; the simulator live): thousands of tail ticks of five
 * resources (a tail registered at the shortest interval, 1 s, plus extra tick jobs of the same data fired back to
 * back, so runs follow each other at once: up to RETENTION_TEST_RUNS runs, at most RETENTION_TEST_SECONDS), with a
 * small retention (20 runs), so the history is full after a few dozen runs even on a slow machine. Every few hundred runs it samples the Redis memory of the deployment's keys (MEMORY USAGE of every key under
 * its prefixes, by kind) and the latency of `status` (collectStatus, median of several calls).
 *
 * Asserts, once the kept history is full (60 runs): the run-history memory (everything but the dedup seen-sets, which grow
 * with the records, and BullMQ's event streams, capped by BullMQ at 10 000 entries each) stays flat (growth ratio),
 * `status` latency stays flat (growth ratio, not absolute times), the kept runs stay within retention, and the
 * rollups still count every run and record.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Queue } from 'bullmq';
import { createPipelineRuntime, type PipelineRuntime } from '../../../../src/app/index.js';
import {
  connectRedis,
  createRunCounters,
  startPipelineWorkers,
  type PipelineWorkers,
} from '../../../../src/pipeline/queue/index.js';
import { RESOURCES, type ResourceName } from '../../../../src/foundation/models/resources.js';
import { QUEUE_NAMES } from '../../../../src/pipeline/contract/queue-names.js';
import {
  createScheduleRegistry,
  type ScheduleRegistry,
  type ScheduleTickData,
} from '../../../../src/pipeline/schedules/index.js';
import { SCHEDULE_QUEUE } from '../../../../src/pipeline/schedules/schedule-names.js';
import { tickJobOptions } from '../../../../src/pipeline/schedules/schedule-registry.js';
import {
  collectStatus,
  createWorkerOperations,
  type WorkerOperations,
} from '../../../../src/app/status/index.js';
import { createHarness, type Harness } from '../../../e2e/pipeline-harness.js';

/** Runs to reach (each one a tail tick that planned, ran and settled); the test stops earlier at its time cap. */
const TARGET_RUNS = Number(process.env['RETENTION_TEST_RUNS'] ?? 600);
const MAX_SECONDS = Number(process.env['RETENTION_TEST_SECONDS'] ?? 240);
const RETENTION = { maxAgeMs: 86_400_000, maxRuns: 20 };
/** Samples start once this many runs finished (past the retention, so the kept history is full). */
const WARM_RUNS = 60;
const SAMPLE_EVERY_RUNS = 40;
/** Users are left out: their tail probes every country, which makes a run slower without adding anything here. */
const TAILED = RESOURCES.filter((r) => r !== 'users');

interface Sample {
  runs: number;
  /** Bytes by kind of key. */
  bytes: Record<string, number>;
  /** Fastest of five `status` calls (the least disturbed by the rest of a busy machine). */
  statusMs: number;
  /** Redis commands one `status` sends: its work, free of the machine's noise. */
  statusCommands: number;
}

function kindOf(key: string): string {
  if (key.includes(':seen:')) return 'seen-sets';
  if (key.endsWith(':events')) return 'bull-events';
  if (key.includes(':run:')) return 'run-keys';
  if (key.includes(':runs:')) return 'run-rollups';
  if (key.includes(`:${QUEUE_NAMES.slices}:`)) return 'bull-slices';
  if (key.includes(`:${QUEUE_NAMES.runs}:`)) return 'bull-runs';
  if (key.includes(`:${SCHEDULE_QUEUE}:`)) return 'bull-ticks';
  return 'other';
}

describe('retention under thousands of tail ticks', () => {
  let h: Harness;
  let ops: WorkerOperations;
  let rt: PipelineRuntime;
  let workers: PipelineWorkers;
  let bull: ReturnType<typeof connectRedis>;
  let control: ReturnType<typeof connectRedis>;
  let statusRedis: ReturnType<typeof connectRedis>;
  let commands = 0;
  let registry: ScheduleRegistry;
  const errors: string[] = [];
  let finishedRuns = 0;
  let completedRuns = 0;
  let startedRuns = 0;
  let ticksProcessed = 0;

  beforeAll(async () => {
    h = await createHarness('retention', {
      live: { ratePerSecond: 5, changeRatePerSecond: 1, speed: 1 },
      rateLimit: { keyed: 1_000_000 },
    });
    h.settings.retention = RETENTION;
    control = connectRedis(h.settings.redisUrl);
    statusRedis = connectRedis(h.settings.redisUrl);
    // Counts the commands status sends (its connection is used for nothing else).
    const send = statusRedis.sendCommand.bind(statusRedis);
    statusRedis.sendCommand = (...args: Parameters<typeof send>) => {
      commands += 1;
      return send(...args);
    };
    ops = createWorkerOperations(h.settings, {
      metricsPort: false,
      scheduleWorker: {
        concurrency: 6,
        tick: { pollMs: 50 },
        onTick: (t) => {
          ticksProcessed += 1;
          if (t.action === 'started') startedRuns += 1;
          if ('settled' in t && t.settled !== undefined) {
            finishedRuns += 1;
            if (t.settled.outcome === 'completed') completedRuns += 1;
            else errors.push(`run ${t.settled.runId} failed: ${t.settled.reason ?? '?'}`);
          }
        },
        onError: (e, where) => errors.push(`${where}: ${e.message}`),
      },
    });
    rt = await createPipelineRuntime(h.settings, {
      client: { timeoutMs: 5_000, ...ops.runtimeOptions.client },
      // One process: the key's shared budget (pacing and batching across processes) has nothing to share here.
      budget: false,
    });
    bull = connectRedis(h.settings.redisUrl);
    workers = startPipelineWorkers(
      { connection: bull, prefix: h.settings.queuePrefix, concurrency: 16 },
      ops.instrument(rt),
    );
    await ops.start({ runtime: rt, workers, connection: bull });
    registry = createScheduleRegistry({ connection: control, prefix: h.settings.queuePrefix });
  }, 120_000);

  afterAll(async () => {
    for (const r of TAILED) await registry?.remove('tail', r).catch(() => undefined);
    await registry?.close().catch(() => undefined);
    await ops?.close().catch(() => undefined);
    await workers?.close().catch(() => undefined);
    await bull?.quit().catch(() => undefined);
    await rt?.close().catch(() => undefined);
    await control?.quit().catch(() => undefined);
    await statusRedis?.quit().catch(() => undefined);
    await h?.cleanup();
  });

  async function keyBytes(): Promise<Record<string, number>> {
    const out: Record<string, number> = {};
    for (const prefix of [h.settings.redisPrefix, h.settings.queuePrefix]) {
      let cursor = '0';
      do {
        const [next, keys] = await control.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
        cursor = next;
        const sizes = await Promise.all(keys.map((k) => control.memory('USAGE', k, 'SAMPLES', 0)));
        keys.forEach((k, i) => {
          const kind = kindOf(k);
          out[kind] = (out[kind] ?? 0) + Number(sizes[i] ?? 0);
        });
      } while (cursor !== '0');
    }
    return out;
  }

  async function statusCost(): Promise<{ statusMs: number; statusCommands: number }> {
    const times: number[] = [];
    const before = commands;
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      await collectStatus({
        redis: statusRedis,
        queuePrefix: h.settings.queuePrefix,
        redisPrefix: h.settings.redisPrefix,
        scrape: false,
      });
      times.push(performance.now() - t0);
    }
    return { statusMs: Math.min(...times), statusCommands: (commands - before) / 5 };
  }

  it(
    'keeps Redis memory and status latency flat while the rollups count every run',
    async () => {
      const data = (resource: ResourceName): ScheduleTickData & { kind: 'tail' } => ({
        kind: 'tail',
        resource,
        lookbackMs: 1_000,
        rescanEveryMs: -1,
        replay: false,
        fullHistory: false,
        settleWithinMs: 10_000,
      });
      // The registered tails (as an operator would, at the shortest interval) ...
      for (const r of TAILED) await registry.upsertTail(data(r), 1_000);
      // ... and extra ticks of the same data, one after another per resource, so runs follow each other at once.
      const ticks = new Queue<ScheduleTickData>(SCHEDULE_QUEUE, {
        connection: control,
        prefix: h.settings.queuePrefix,
      });
      const samples: Sample[] = [];
      let nextSample = WARM_RUNS;
      let paused = false;
      let inFlight = 0;
      const t0 = Date.now();
      try {
        const going = (): boolean => finishedRuns < TARGET_RUNS && Date.now() - t0 < MAX_SECONDS * 1000;
        const sampling = (async () => {
          while (going()) {
            if (finishedRuns >= nextSample) {
              // Measured with the test's ticks paused and their runs settled, so every sample sees the same quiet
              // system (the registered 1 s schedulers keep ticking).
              paused = true;
              while (inFlight > 0) await new Promise((r) => setTimeout(r, 20));
              const runs = finishedRuns;
              const bytes = await keyBytes();
              samples.push({ runs, bytes, ...(await statusCost()) });
              nextSample = runs + SAMPLE_EVERY_RUNS;
              paused = false;
            }
            await new Promise((r) => setTimeout(r, 100));
          }
        })();
        let fired = 0;
        await Promise.all(
          TAILED.map(async (r) => {
            while (going()) {
              if (paused) {
                await new Promise((res) => setTimeout(res, 20));
                continue;
              }
              inFlight += 1;
              const job = await ticks.add('tail', data(r), tickJobOptions());
              fired += 1;
              // Wait for the tick to finish (a tick that finds its run settled starts the next one at once).
              for (;;) {
                const state = await job.getState();
                if (state === 'completed' || state === 'failed' || state === 'unknown') break;
                await new Promise((res) => setTimeout(res, 50));
              }
              inFlight -= 1;
            }
          }),
        );
        await sampling;
        const elapsed = (Date.now() - t0) / 1000;
        // The registered 1 s schedulers keep ticking: a tick may settle a run after `status` is read. Its rollup was
        // counted before BullMQ completed the run (and so before any tick could see it), so the ticks' counts taken
        // BEFORE the read are what the rollups must cover. (Taken after, one run settled in between failed a CI run:
        // status 600 completed against 601 counted.)
        const seenBeforeStatus = { started: startedRuns, completed: completedRuns };
        const status = await collectStatus({
          redis: control,
          queuePrefix: h.settings.queuePrefix,
          redisPrefix: h.settings.redisPrefix,
          scrape: false,
        });
        const counters = createRunCounters(control, h.settings.redisPrefix);
        const kept = await counters.keptRuns();
        const eventLens = await Promise.all(
          [QUEUE_NAMES.slices, QUEUE_NAMES.runs, SCHEDULE_QUEUE].map((q) =>
            control.xlen(`${h.settings.queuePrefix}:${q}:events`),
          ),
        );
        const runHistory = (s: Sample): number =>
          Object.entries(s.bytes)
            .filter(([k]) => k !== 'seen-sets' && k !== 'bull-events')
            .reduce((sum, [, v]) => sum + v, 0);
        process.stderr.write(
          `[retention] ${ticksProcessed} ticks processed (${fired} fired by the test, the rest by the 1 s schedulers), ${startedRuns} runs started, ${finishedRuns} settled (${completedRuns} completed) in ${elapsed.toFixed(0)} s; ` +
            `status: ${status.runs.total} runs (${status.runs.completed} completed), ${status.records.published} published; kept runs ${kept}; ` +
            `event stream lengths ${eventLens.join('/')}\n` +
            samples
              .map(
                (s) =>
                  `[retention]   after ${s.runs} runs: run history ${(runHistory(s) / 1024).toFixed(0)} KiB ` +
                  `${JSON.stringify(Object.fromEntries(Object.entries(s.bytes).map(([k, v]) => [k, Math.round(v / 1024)])))} KiB, ` +
                  `status ${s.statusMs.toFixed(1)} ms, ${s.statusCommands} Redis commands`,
              )
              .join('\n') +
            `\n${errors.slice(0, 5).join('\n')}\n`,
        );

        expect(samples.length).toBeGreaterThanOrEqual(3);
        expect(finishedRuns).toBeGreaterThanOrEqual(WARM_RUNS + 2 * SAMPLE_EVERY_RUNS);
        const first = samples[0] as Sample;
        const worst = samples.slice(1);
        // Flat: the run history at the end is within 1.5x of what it was once the history was full
        // (without retention it grows with every run, in proportion to the runs between the samples).
        for (const s of worst) expect(runHistory(s) / runHistory(first)).toBeLessThan(1.5);
        // status reads a fixed number of keys: the commands it sends and its latency do not grow with the runs
        // (latency: the fastest of five calls, against a generous ratio, for a shared machine).
        for (const s of worst) expect(s.statusCommands / first.statusCommands).toBeLessThan(1.5);
        const lastStatus = Math.min(...worst.map((s) => s.statusMs));
        expect(lastStatus / first.statusMs).toBeLessThan(3);
        // Retention holds, and the rollups still count every run and every record.
        expect(kept).toBeLessThanOrEqual(RETENTION.maxRuns + RESOURCES.length);
        expect(status.runs.total).toBeGreaterThanOrEqual(seenBeforeStatus.started);
        expect(status.runs.completed).toBeGreaterThanOrEqual(seenBeforeStatus.completed);
        expect(status.runs.completed).toBeGreaterThan(kept * 4);
        expect(status.records.fetched).toBeGreaterThan(0);
        expect(Math.max(...eventLens)).toBeLessThanOrEqual(10_100);
        expect(errors.filter((e) => !e.includes('failed:'))).toEqual([]);
      } finally {
        await ticks.close();
      }
    },
    (MAX_SECONDS + 120) * 1000,
  );
});
