/* eslint-disable @typescript-eslint/require-await -- recording fakes implement async interfaces */
/**
 * Issue 48: a tail never fails forever on one range. On the real Redis and BullMQ: a tail over a range whose slice
 * always fails (a 400 the upstream keeps answering) completes its run with the range recorded as a gap (the slice
 * failed for good, the run did not), its watermark moves past it, and the next tick goes on reading newer records.
 * `status` shows the gap; a later backfill of the gap's range, once the upstream answers, closes it. A backfill's
 * failed slice still fails its run.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UpstreamError } from '../../../src/foundation/errors/index.js';
import { createDedupStore, createRedisSeenSet, type DedupRecord } from '../../../src/pipeline/dedup/index.js';
import type { SliceSource } from '../../../src/pipeline/slice/index.js';
import {
  createRangeGaps,
  createRunCounters,
  enqueueRun,
  getRunStatus,
  startPipelineWorkers,
  waitForRun,
} from '../../../src/pipeline/queue/index.js';
import { sliceJobId, type RunJobData, type SliceJobData } from '../../../src/pipeline/planner/index.js';
import type { PagePublisher } from '../../../src/pipeline/publish/index.js';
import {
  processTick,
  type ScheduleTickData,
  type TickDeps,
} from '../../../src/pipeline/schedules/process-tick.js';
import { createTailStateStore } from '../../../src/pipeline/schedules/tail-state.js';
import { collectStatus } from '../../../src/app/status/collect-status.js';

const redisUrl = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:16379';
const T0 = 1_000_000;
/** The range the upstream cannot answer (while `broken`). */
const BAD = { start: T0 + 2_000, end: T0 + 3_000 };

describe('a tail over a range that always fails (issue 48)', () => {
  const prefix = `it-gaps-${randomUUID().slice(0, 8)}`;
  let redis: Redis;
  let broken = true;
  let head = T0 + 3_999;
  const published: string[] = [];
  const rows = (): DedupRecord[] =>
    Array.from({ length: Math.floor((head - T0) / 50) + 1 }, (_, i) => ({
      _id: `d${String(i).padStart(6, '0')}`,
      createdAt: new Date(T0 + i * 50).toISOString(),
    })).reverse();

  const source: SliceSource = {
    operation: () => 'donation.getManyPaginated',
    async *readPages(slice) {
      if (broken && slice.start < BAD.end && slice.end > BAD.start)
        throw new UpstreamError('bad request', 400, 'donation.getManyPaginated', 'BAD_REQUEST');
      const items = rows().filter((r) => {
        const t = Date.parse(String(r.createdAt));
        return t >= slice.start && t < slice.end;
      });
      yield { items, cursor: null };
    },
  };
  const publisher: PagePublisher = {
    async publishPage({ records }) {
      published.push(...records.map((r) => String((r as DedupRecord)._id)));
      return { published: records.length, deadLettered: 0, deadLetters: [] };
    },
  };

  beforeAll(() => {
    redis = new Redis(redisUrl, { maxRetriesPerRequest: null });
  });
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  });

  /** Slices of 1 000 ms over `[from, to)`, as a planner would cut them. */
  function plan(runId: string, from: number, to: number, gapOnFailure: boolean): SliceJobData[] {
    const out: SliceJobData[] = [];
    for (let start = from; start < to; start = Math.floor(start / 1_000) * 1_000 + 1_000) {
      const end = Math.min(to, Math.floor(start / 1_000) * 1_000 + 1_000);
      out.push({
        runId,
        sliceId: sliceJobId(runId, {}, start, end),
        resource: 'donations',
        filters: {},
        start,
        end,
        replay: false,
        depth: 0,
        ...(gapOnFailure ? { gapOnFailure: true } : {}),
      });
    }
    return out;
  }
  const runData = (
    runId: string,
    since: number,
    until: number,
    slices: number,
    gapOnFailure: boolean,
  ): RunJobData => ({
    runId,
    resources: ['donations'],
    since,
    until,
    filters: {},
    fullHistory: false,
    replay: false,
    createdAt: Date.now(),
    slices,
    ...(gapOnFailure ? { gapOnFailure: true } : {}),
  });

  it('records the gap, moves the watermark past it and keeps going; a backfill of the gap closes it', async () => {
    const failedForGood: string[] = [];
    const gaps = createRangeGaps(redis, prefix);
    const workers = startPipelineWorkers(
      {
        connection: redis,
        prefix,
        concurrency: 4,
        servicesDown: () => Promise.resolve(false),
        onSliceFailed: (id) => failedForGood.push(id),
      },
      {
        source,
        dedup: createDedupStore(createRedisSeenSet(redis), { prefix }),
        publisher,
        counters: createRunCounters(redis, prefix),
        gaps,
      },
    );
    const state = createTailStateStore(redis, prefix);
    const deps: TickDeps = {
      state,
      runStatus: (runId) => getRunStatus(runId, { connection: redis, prefix }),
      head: async () => head,
      async startRun(request) {
        const since = request.since ?? T0;
        const until = request.until ?? head + 1;
        const gapOnFailure = request.gapOnFailure === true;
        const slices = plan(request.runId, since, until, gapOnFailure);
        await enqueueRun(runData(request.runId, since, until, slices.length, gapOnFailure), slices, {
          connection: redis,
          prefix,
        });
        return { slices: slices.length };
      },
    };
    const tick: ScheduleTickData = {
      kind: 'tail',
      resource: 'donations',
      lookbackMs: 0,
      rescanEveryMs: -1,
      replay: false,
      fullHistory: false,
      since: T0,
      settleWithinMs: 30_000,
    };
    try {
      // Tick 1: [T0, head] in four slices; the third always fails. The run completes, the gap is recorded.
      const first = await processTick(tick, deps);
      expect(first).toMatchObject({ action: 'started', settled: { outcome: 'completed' } });
      const firstRun = first.action === 'started' ? first.runId : '';
      expect(failedForGood).toEqual([sliceJobId(firstRun, {}, BAD.start, BAD.end)]);
      expect((await state.get('donations')).watermark).toBe(T0 + 4_000);
      const recorded = await gaps.list('donations');
      expect(recorded).toMatchObject([
        { resource: 'donations', runId: firstRun, start: BAD.start, end: BAD.end, filters: {} },
      ]);
      expect(recorded[0]?.reason).toContain('bad request');
      expect(await gaps.counts()).toEqual({ donations: 1 });
      const status = await collectStatus({ redis, queuePrefix: prefix, redisPrefix: prefix, scrape: false });
      expect(status.gaps.map((g) => [g.start, g.end])).toEqual([[BAD.start, BAD.end]]);

      // Tick 2: newer records arrived; the tail reads on from its watermark (no failure: the bad range lies behind).
      head = T0 + 5_999;
      const second = await processTick(tick, deps);
      expect(second).toMatchObject({
        action: 'started',
        from: T0 + 4_000,
        settled: { outcome: 'completed' },
      });
      expect((await state.get('donations')).watermark).toBe(T0 + 6_000);
      expect((await state.get('donations')).failedRuns).toBe(0);
      expect(published.filter((id) => id >= 'd000080')).toHaveLength(40); // T0+4 000 .. T0+5 950
      expect(await gaps.counts()).toEqual({ donations: 1 });

      // The upstream answers again: a backfill of the gap's range reads it whole and closes the gap.
      broken = false;
      const fixId = `fix-${Date.now()}`;
      const fix = plan(fixId, BAD.start, BAD.end, false);
      await enqueueRun(runData(fixId, BAD.start, BAD.end, fix.length, false), fix, {
        connection: redis,
        prefix,
      });
      await waitForRun(fixId, { connection: redis, prefix, timeoutMs: 30_000, pollMs: 100 });
      expect(await gaps.list()).toEqual([]);
      expect(new Set(published).size).toBe(rows().length); // every record, the gap's included, published once
    } finally {
      await workers.close();
    }
  }, 120_000);

  it("a backfill's slice that fails for good still fails its run (and records no gap)", async () => {
    broken = true;
    const gaps = createRangeGaps(redis, `${prefix}-b`);
    const workers = startPipelineWorkers(
      {
        connection: redis,
        prefix: `${prefix}-b`,
        concurrency: 2,
        servicesDown: () => Promise.resolve(false),
      },
      {
        source,
        dedup: createDedupStore(createRedisSeenSet(redis), { prefix: `${prefix}-b` }),
        publisher,
        counters: createRunCounters(redis, `${prefix}-b`),
        gaps,
      },
    );
    try {
      const runId = `b-${Date.now()}`;
      const slices = plan(runId, T0, T0 + 4_000, false);
      await enqueueRun(runData(runId, T0, T0 + 4_000, slices.length, false), slices, {
        connection: redis,
        prefix: `${prefix}-b`,
      });
      await expect(
        waitForRun(runId, { connection: redis, prefix: `${prefix}-b`, timeoutMs: 30_000, pollMs: 100 }),
      ).rejects.toThrow(/bad request/);
      expect(await gaps.list()).toEqual([]);
    } finally {
      await workers.close();
    }
  }, 60_000);
});
