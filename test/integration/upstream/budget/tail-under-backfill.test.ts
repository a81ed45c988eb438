/**
 * Issue 11: a transaction tail stays within two intervals while a full backfill of every resource runs on the same
 * API key. Two worker sets (two runtimes, each its own handle on the key's shared budget, as two processes) share
 * one key whose limit binds (20 requests / 10 s, realistic latency), so the backfill takes several windows; the tail
 * (every 30 s, the default interval) must keep its lag, measured from the tail state as `status` does, under
 * 2 x 30 s the whole time. (A tail run itself takes 10-25 s here: head probe, planning probes, pages, publish, each
 * at realistic latency, on a shared 2-core machine; so a shorter interval measures the run, not the budget.)
 * Tails win twice: their slices overtake queued backfill slices in BullMQ (job priority), and their calls go first
 * into the key's next request, with a share of every window kept for them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { createHarness, type Harness } from '../../../e2e/pipeline-harness.js';
import { REALISTIC_LATENCY } from '../../../../tools/simulator/index.js';
import { createPipelineRuntime, type PipelineRuntime } from '../../../../src/app/index.js';
import {
  connectRedis,
  startPipelineWorkers,
  type PipelineWorkers,
} from '../../../../src/pipeline/queue/index.js';
import {
  createScheduleRegistry,
  createTailStateStore,
  startScheduleWorker,
  type ScheduleWorker,
} from '../../../../src/pipeline/schedules/index.js';
import { RESOURCES } from '../../../../src/foundation/models/resources.js';

const EVERY_MS = 30_000;
const WINDOW_MS = 10_000;
const LIMIT = 20;

describe('a transaction tail beside a full backfill on one key', () => {
  let h: Harness;
  const runtimes: PipelineRuntime[] = [];
  const workers: PipelineWorkers[] = [];
  const conns: Redis[] = [];
  let schedules: ScheduleWorker | undefined;

  beforeAll(async () => {
    h = await createHarness('tail-budget', {
      latency: REALISTIC_LATENCY,
      live: { ratePerSecond: 2, changeRatePerSecond: 0.5 },
      rateLimit: { enabled: true, keyed: LIMIT, windowMs: WINDOW_MS },
    });
    for (let i = 0; i < 2; i++) {
      // A quarter of each window is the tails' (the default 5 % of 20 requests is one: too few for a tail run's
      // head probe, plan and pages within one window at this small limit; at 500 / 60 s 5 % is 25).
      const rt = await createPipelineRuntime(h.settings, {
        client: { timeoutMs: 10_000 },
        budget: { tailShare: 0.25 },
      });
      runtimes.push(rt);
      const bull = connectRedis(h.settings.redisUrl);
      conns.push(bull);
      workers.push(
        startPipelineWorkers({ connection: bull, prefix: h.settings.queuePrefix, concurrency: 32 }, rt),
      );
    }
    const rt = runtimes[0] as PipelineRuntime;
    const bull = connectRedis(h.settings.redisUrl);
    conns.push(bull);
    schedules = startScheduleWorker(
      { connection: bull, prefix: h.settings.queuePrefix, redisPrefix: h.settings.redisPrefix },
      { redis: rt.redis, planner: rt.planner, counters: rt.counters, users: rt.users },
    );
  });

  afterAll(async () => {
    await schedules?.close();
    for (const w of workers) await w.close();
    for (const rt of runtimes) await rt.close();
    for (const c of conns) await c.quit();
    await h?.cleanup();
  });

  it('keeps the tail lag under two intervals while the backfill is held to the key', async () => {
    const rt = runtimes[0] as PipelineRuntime;
    const registry = createScheduleRegistry({ connection: rt.redis, prefix: h.settings.queuePrefix });
    const state = createTailStateStore(rt.redis, h.settings.redisPrefix);
    try {
      await registry.upsertTail(
        {
          kind: 'tail',
          resource: 'transactions',
          lookbackMs: 60_000,
          rescanEveryMs: -1,
          replay: false,
          fullHistory: false,
          // The tail starts at the feed's current head: its first run is small, as in steady state.
          since: h.sim.now() - 60_000,
        },
        EVERY_MS,
      );
      // The tail's first run sets the watermark.
      const deadline = Date.now() + 60_000;
      while ((await state.get('transactions')).watermarkAt === undefined) {
        if (Date.now() > deadline) throw new Error('the tail never completed a run');
        await new Promise((r) => setTimeout(r, 200));
      }

      h.sim.resetStats();
      const started = Date.now();
      // Every resource from its earliest record (transactions: the unfiltered feed's 72 h; the per-user walk of
      // --full-history is ~3 k procedures more and makes the test minutes longer without changing what it shows).
      // As the CLI plans it: the transactions of the feed's window per country (the proof holds for every type here),
      // not through the feed's deep pages, which the service serialises per key, the tail's head pages behind them.
      const runId = await h.enqueue({ resources: [...RESOURCES] }, { partition: 'countryId' });
      let done = false;
      const finished = h.wait(runId, 240_000).finally(() => (done = true));
      let maxLagMs = 0;
      const watermarks = new Set<number>();
      const timeline: string[] = [];
      let backfillWaited = 0;
      while (!done) {
        const s = await state.get('transactions');
        if (s.watermarkAt !== undefined) {
          maxLagMs = Math.max(maxLagMs, Date.now() - s.watermarkAt);
          if (!watermarks.has(s.watermarkAt))
            timeline.push(
              `${((Date.now() - started) / 1000).toFixed(1)}s:${((s.watermarkAt - started) / 1000).toFixed(1)}`,
            );
          watermarks.add(s.watermarkAt);
        }
        const snap = await rt.budget!.snapshot();
        backfillWaited = Math.max(backfillWaited, snap.waiting.backfill);
        await new Promise((r) => setTimeout(r, 250));
      }
      const result = await finished;
      const backfillMs = Date.now() - started;
      const stats = h.sim.stats();
      const snap = await rt.budget!.snapshot();
      console.log(
        `backfill ${(backfillMs / 1000).toFixed(1)} s, ${stats.httpRequests} requests, ${stats.procedureCalls.total} procedures, ` +
          `${stats.rateLimited} x 429; tail: ${watermarks.size} watermarks, max lag ${(maxLagMs / 1000).toFixed(1)} s; ` +
          `backfill calls waiting at most ${backfillWaited}; watermark changes (seen at: planned at) ${timeline.join(' ')}; budget ${JSON.stringify(snap)}`,
      );

      expect(result.counters.published).toBeGreaterThan(1000);
      // The key bound the backfill: it took several windows, and backfill calls queued in Redis behind it.
      expect(backfillMs).toBeGreaterThan(2 * WINDOW_MS);
      expect(backfillWaited).toBeGreaterThan(0);
      expect(stats.rateLimited).toBe(0);
      // The tail kept moving during the backfill (a new watermark about every interval) and never fell behind.
      expect(watermarks.size).toBeGreaterThanOrEqual(Math.floor(backfillMs / EVERY_MS / 2));
      expect(maxLagMs).toBeLessThanOrEqual(2 * EVERY_MS);
    } finally {
      await registry.close();
    }
  });
});
