/**
 * The tail gauges the alert rules compare (ops/prometheus: GamedataTailLagging): a worker's schedule worker sets
 * `gamedata_tail_interval_seconds{resource}` from the registered tail and `gamedata_tail_lag_seconds{resource}` from
 * its watermark, both refreshed on a timer (not only at ticks).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { createHarness, type Harness } from '../../../e2e/pipeline-harness.js';
import { type PipelineRuntime } from '../../../../src/app/index.js';
import {
  connectRedis,
  startPipelineWorkers,
  type PipelineWorkers,
} from '../../../../src/pipeline/queue/index.js';
import {
  createScheduleRegistry,
  startScheduleWorker,
  type ScheduleWorker,
} from '../../../../src/pipeline/schedules/index.js';

/** A gauge that keeps what it was set to, per resource. */
function recorder(): { values: Map<string, number>; set(l: { resource: string }, v: number): void } {
  const values = new Map<string, number>();
  return { values, set: (l, v) => void values.set(l.resource, v) };
}

describe('tail gauges', () => {
  let h: Harness;
  let rt: PipelineRuntime;
  let workers: PipelineWorkers | undefined;
  let schedules: ScheduleWorker | undefined;
  const conns: Redis[] = [];
  beforeAll(async () => {
    h = await createHarness('tail-metrics');
    rt = await h.runtime();
  });
  afterAll(async () => {
    await schedules?.close();
    await workers?.close();
    for (const c of conns) await c.quit();
    await h?.cleanup();
  });

  it('sets the interval from the registered tail and the lag from its watermark', async () => {
    const bull = connectRedis(h.settings.redisUrl);
    conns.push(bull);
    workers = startPipelineWorkers({ connection: bull, prefix: h.settings.queuePrefix, concurrency: 8 }, rt);
    const lag = recorder();
    const interval = recorder();
    schedules = startScheduleWorker(
      {
        connection: bull,
        prefix: h.settings.queuePrefix,
        redisPrefix: h.settings.redisPrefix,
        lagRefreshMs: 200,
      },
      { redis: rt.redis, planner: rt.planner, counters: rt.counters, tailLag: lag, tailInterval: interval },
    );
    const registry = createScheduleRegistry({ connection: rt.redis, prefix: h.settings.queuePrefix });
    try {
      await registry.upsertTail(
        {
          kind: 'tail',
          resource: 'donations',
          lookbackMs: 60_000,
          rescanEveryMs: -1,
          replay: false,
          fullHistory: false,
          since: h.sim.now() - 3_600_000,
        },
        90_000,
      );
      const deadline = Date.now() + 90_000;
      while (lag.values.get('donations') === undefined || interval.values.get('donations') === undefined) {
        if (Date.now() > deadline)
          throw new Error(
            `no gauges: lag ${String(lag.values.get('donations'))}, interval ${String(interval.values.get('donations'))}`,
          );
        await new Promise((r) => setTimeout(r, 200));
      }
      expect(interval.values.get('donations')).toBe(90);
      // The first run just set the watermark: far below the two intervals the alert allows.
      expect(lag.values.get('donations')).toBeGreaterThanOrEqual(0);
      expect(lag.values.get('donations')).toBeLessThan(180);
      expect([...interval.values.keys()]).toEqual(['donations']);
    } finally {
      await registry.remove('tail', 'donations');
      await registry.close();
    }
  }, 180_000);
});
