/**
 * collectStatus on real Redis and BullMQ, fast: run counters summed over many runs (in total and per resource),
 * run states, the tail state with its lag, the registered schedules, and a live worker's heartbeat whose /metrics
 * is scraped over HTTP.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createRunCounters } from '../../../../src/pipeline/queue/index.js';
import { createPipelineMetrics } from '../../../../src/foundation/metrics/index.js';
import { createScheduleRegistry, createTailStateStore } from '../../../../src/pipeline/schedules/index.js';
import { collectStatus, createWorkerTelemetry } from '../../../../src/app/status/index.js';
import { createTestServices } from '../../../helpers/services.js';

describe('collectStatus on real Redis', () => {
  const services = createTestServices('status');
  afterAll(() => services.cleanup());

  it('sums every run, reports tails, schedules and the live workers with their scraped /metrics', async () => {
    const redis = services.redis();
    const redisPrefix = services.name('r');
    const queuePrefix = `${services.prefix}-q`;
    const counters = createRunCounters(redis, redisPrefix);
    for (let i = 0; i < 1200; i++) {
      const runId = `run-${i}`;
      await counters.setState(runId, i === 0 ? 'failed' : i === 1 ? 'running' : 'completed', {
        resources: 'donations',
        slices: 1,
      });
      await counters.add(runId, { fetched: 3, published: 2, deduplicated: 1 }, 'donations');
    }
    await counters.add('run-5', { fetched: 1, deadLettered: 1 }, 'users');
    const state = createTailStateStore(redis, redisPrefix);
    const startedAt = Date.now() - 42_000;
    await state.setActive('donations', {
      runId: 'run-7',
      kind: 'tail',
      from: undefined,
      to: Date.parse('2026-11-01T00:00:00Z'),
      startedAt,
    });
    await state.finishActive(
      'donations',
      { runId: 'run-7', kind: 'tail', from: undefined, to: Date.parse('2026-11-01T00:00:00Z'), startedAt },
      'completed',
      Date.now(),
    );
    const registry = createScheduleRegistry({ connection: redis, prefix: queuePrefix });
    await registry.upsertTail(
      {
        kind: 'tail',
        resource: 'donations',
        lookbackMs: 60_000,
        rescanEveryMs: 0,
        replay: false,
        fullHistory: false,
      },
      30_000,
    );
    await registry.close();

    const metrics = createPipelineMetrics({ processMetrics: false });
    metrics.recordsPublished.inc({ resource: 'donations' }, 7);
    const telemetry = createWorkerTelemetry({ metrics, metricsPort: 0, redisPrefix });
    const url = await telemetry.start({ redis });
    try {
      const s = await collectStatus({ redis, queuePrefix, redisPrefix, recentRuns: 3 });
      expect(s.runs).toMatchObject({ total: 1200, failed: 1, running: 1, completed: 1198 });
      expect(s.runs.recent).toHaveLength(3);
      expect(s.records).toEqual({ fetched: 3601, published: 2400, deduplicated: 1200, deadLettered: 1 });
      expect(s.byResource.donations).toEqual({
        fetched: 3600,
        published: 2400,
        deduplicated: 1200,
        deadLettered: 0,
      });
      expect(s.byResource.users).toEqual({ fetched: 1, published: 0, deduplicated: 0, deadLettered: 1 });
      const tail = s.tails.find((t) => t.resource === 'donations');
      expect(tail?.watermark).toBe('2026-11-01T00:00:00.000Z');
      expect(tail?.lagSeconds).toBeGreaterThanOrEqual(42);
      expect(tail?.completedRuns).toBe(1);
      expect(tail?.schedules.map((x) => [x.id, x.every])).toEqual([['tail-donations', 30_000]]);
      expect(s.workers.map((w) => w.metricsUrl)).toEqual([url]);
      expect(s.metrics?.records.published).toBe(7);
    } finally {
      await telemetry.close();
      const cleanup = createScheduleRegistry({ connection: redis, prefix: queuePrefix });
      await cleanup.remove('tail', 'donations');
      await cleanup.close();
    }
    // A closed worker is gone from the next status.
    expect((await collectStatus({ redis, queuePrefix, redisPrefix, scrape: false })).workers).toHaveLength(0);
  });
});
