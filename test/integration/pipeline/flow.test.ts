/* eslint-disable @typescript-eslint/require-await -- recording fakes implement async interfaces */
/**
 * The BullMQ flow against the real Redis: a run with slices, workers with a recording publisher over an in-memory
 * upstream, dense slices splitting into children, counters, a failing slice failing its run, and a slice refused for
 * the worker's credentials handed back instead.
 */
import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createDedupStore, createRedisSeenSet, type DedupRecord } from '../../../src/pipeline/dedup/index.js';
import { type SliceSource } from '../../../src/pipeline/slice/index.js';
import {
  createRunCounters,
  enqueueOpenRun,
  enqueueRun,
  getRunStatus,
  planningHoldId,
  PLANNING_HOLD_MS,
  startPipelineWorkers,
  waitForRun,
} from '../../../src/pipeline/queue/index.js';
import {
  QUEUE_NAMES,
  sliceJobId,
  type RunJobData,
  type SliceJobData,
} from '../../../src/pipeline/planner/index.js';
import { ServiceError, SliceFencedError, UpstreamError } from '../../../src/foundation/errors/index.js';
import type { PagePublisher } from '../../../src/pipeline/publish/index.js';

const redisUrl = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:16379';

function rows(n: number): DedupRecord[] {
  return Array.from({ length: n }, (_, i) => ({
    _id: `x${String(i).padStart(6, '0')}`,
    createdAt: new Date(1_000_000 + i * 7).toISOString(),
  })).reverse();
}

function source(all: DedupRecord[], failIn?: { start: number; end: number }): SliceSource {
  return {
    operation: () => 'donation.getManyPaginated',
    async *readPages(slice, o) {
      if (failIn && slice.start < failIn.end && slice.end > failIn.start) {
        throw new UpstreamError('bad request', 400, 'donation.getManyPaginated', 'BAD_REQUEST');
      }
      let bound = o.cursor === undefined ? slice.end : Number(o.cursor);
      for (;;) {
        const page = all.filter((r) => Date.parse(String(r.createdAt)) < bound).slice(0, 10);
        const inside = page.filter((r) => Date.parse(String(r.createdAt)) >= slice.start);
        if (inside.length === 0) return;
        bound = Date.parse(String(inside[inside.length - 1]!.createdAt));
        await new Promise((r) => setTimeout(r, 1));
        yield { items: inside, cursor: String(bound) };
        if (inside.length < page.length) return;
      }
    },
  };
}

describe('pipeline flow on real Redis', () => {
  const base = `it-${randomUUID().slice(0, 8)}`;
  // Each test its own queues: a slice an earlier test left waiting (its run failed before its workers read it)
  // must not reach the next test's workers and fail there.
  let prefix = base;
  let tests = 0;
  let redis: Redis;
  beforeAll(() => {
    redis = new Redis(redisUrl, { maxRetriesPerRequest: null });
  });
  beforeEach(() => {
    tests += 1;
    prefix = `${base}-${String(tests)}`;
  });
  afterAll(async () => {
    const keys = await redis.keys(`${base}*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  });

  /** Worker deps over `src` whose publisher accepts every page; `dedupTag` keeps the test's seen set its own. */
  function acceptingDeps(src: SliceSource, dedupTag: string) {
    return {
      source: src,
      dedup: createDedupStore(createRedisSeenSet(redis), { prefix: `${prefix}${dedupTag}` }),
      publisher: {
        publishPage: async ({ records: recs }) => ({
          published: recs.length,
          deadLettered: 0,
          deadLetters: [],
        }),
      } as PagePublisher,
      counters: createRunCounters(redis, prefix),
    };
  }

  function run(runId: string, slices: SliceJobData[]): RunJobData {
    return {
      runId,
      resources: ['donations'],
      since: 0,
      until: 2_000_000,
      filters: {},
      fullHistory: false,
      replay: false,
      createdAt: Date.now(),
      slices: slices.length,
    };
  }
  function slice(runId: string, start: number, end: number): SliceJobData {
    return {
      runId,
      sliceId: sliceJobId(runId, {}, start, end),
      resource: 'donations',
      filters: {},
      start,
      end,
      replay: false,
      depth: 0,
    };
  }

  it('runs every slice (splitting dense ones) and publishes each row once', async () => {
    const all = rows(600);
    const sent: string[] = [];
    const publisher: PagePublisher = {
      async publishPage({ records: recs }) {
        sent.push(...recs.map((r) => String((r as DedupRecord)._id)));
        return { published: recs.length, deadLettered: 0, deadLetters: [] };
      },
    };
    const counters = createRunCounters(redis, prefix);
    const workers = startPipelineWorkers(
      { connection: redis, prefix, concurrency: 4, slice: { targetRows: 40, minPagesBeforeSplit: 2 } },
      {
        source: source(all),
        dedup: createDedupStore(createRedisSeenSet(redis), { prefix }),
        publisher,
        counters,
      },
    );
    try {
      const runId = `r1-${Date.now()}`;
      const slices = [slice(runId, 0, 1_002_000), slice(runId, 1_002_000, 2_000_000)];
      await enqueueRun(run(runId, slices), slices, { connection: redis, prefix });
      const result = await waitForRun(runId, { connection: redis, prefix, timeoutMs: 60_000, pollMs: 100 });
      expect(sent).toHaveLength(600);
      expect(new Set(sent).size).toBe(600);
      expect(result.counters.published).toBe(600);
      expect(result.counters.fetched).toBe(600);
      const c = await counters.get(runId);
      expect(c.byResource.donations?.published).toBe(600);
      await counters.setState(runId, 'completed');
      expect((await counters.listRuns()).find((r) => r.runId === runId)?.state['state']).toBe('completed');
      // Splitting happened through BullMQ: more slice jobs than planned.
      const ids = await redis.keys(`${prefix}:gamedata-slices:${runId}*`);
      expect(ids.length).toBeGreaterThan(2);
      for (const k of ids) expect(k.slice(`${prefix}:gamedata-slices:`.length)).not.toContain(':');

      // The same backfill again: nothing published.
      sent.length = 0;
      const runId2 = `r2-${Date.now()}`;
      const slices2 = [slice(runId2, 0, 2_000_000)];
      await enqueueRun(run(runId2, slices2), slices2, { connection: redis, prefix });
      const r2 = await waitForRun(runId2, { connection: redis, prefix, timeoutMs: 60_000, pollMs: 100 });
      expect(sent).toHaveLength(0);
      expect(r2.counters.deduplicated).toBe(600);
    } finally {
      await workers.close();
    }
  });

  it('close() drains mid-run: slices checkpoint and hand back; new workers finish with each row once', async () => {
    const all = rows(400);
    const sent: string[] = [];
    const slow: SliceSource = {
      ...source(all),
      async *readPages(slice, o) {
        for await (const page of source(all).readPages(slice, o)) {
          await new Promise((r) => setTimeout(r, 40));
          yield page;
        }
      },
    };
    const deps = () => ({
      source: slow,
      dedup: createDedupStore(createRedisSeenSet(redis), { prefix: `${prefix}c` }),
      publisher: {
        async publishPage({ records: recs }) {
          sent.push(...recs.map((r) => String((r as DedupRecord)._id)));
          return { published: recs.length, deadLettered: 0, deadLetters: [] };
        },
      } as PagePublisher,
      counters: createRunCounters(redis, `${prefix}c`),
    });
    const runId = `r4-${Date.now()}`;
    const slices = [slice(runId, 0, 1_001_000), slice(runId, 1_001_000, 2_000_000)];
    await enqueueRun(run(runId, slices), slices, { connection: redis, prefix });
    const first = startPipelineWorkers(
      { connection: redis, prefix, concurrency: 2, slice: { targetRows: 1_000_000 } },
      deps(),
    );
    while (sent.length < 50) await new Promise((r) => setTimeout(r, 20));
    await first.close();
    const before = sent.length;
    expect(before).toBeLessThan(400);
    const second = startPipelineWorkers(
      { connection: redis, prefix, concurrency: 2, slice: { targetRows: 1_000_000 } },
      deps(),
    );
    try {
      await waitForRun(runId, { connection: redis, prefix, timeoutMs: 60_000, pollMs: 100 });
      expect(sent).toHaveLength(400);
      expect(new Set(sent).size).toBe(400);
    } finally {
      await second.close();
    }
  });

  it("a slice refused for the worker's credentials (a registry password changed) is handed back, not failed; a worker whose credentials work finishes the run, each row once", async () => {
    const all = rows(200);
    const sent: string[] = [];
    const contexts: string[] = [];
    const deps = (refused: boolean) => ({
      source: source(all),
      dedup: createDedupStore(createRedisSeenSet(redis), { prefix: `${prefix}d` }),
      publisher: {
        async publishPage({ records: recs }) {
          if (refused)
            throw new ServiceError(
              'schema registry at 127.0.0.1:1: authentication failed (HTTP 401) (check GAMEDATA_SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO) (while fetching the latest schema of x-value)',
              'schema-registry',
              // as toRegistryError makes it: flagged where it is made (issue 48, item 7)
              { retriable: false, security: 'authentication' },
            );
          sent.push(...recs.map((r) => String((r as DedupRecord)._id)));
          return { published: recs.length, deadLettered: 0, deadLetters: [] };
        },
      } as PagePublisher,
      counters: createRunCounters(redis, `${prefix}d`),
    });
    const runId = `r5-${Date.now()}`;
    const slices = [slice(runId, 0, 1_000_700), slice(runId, 1_000_700, 2_000_000)];
    await enqueueRun(run(runId, slices), slices, { connection: redis, prefix });
    const refusedWorker = startPipelineWorkers(
      { connection: redis, prefix, concurrency: 2, onError: (_e, where) => contexts.push(where) },
      deps(true),
    );
    try {
      while (contexts.filter((c) => c === 'credentials').length < 2)
        await new Promise((r) => setTimeout(r, 20));
    } finally {
      await refusedWorker.close();
    }
    // reported as the worker's credentials (the CLI rechecks its services), never as a failed slice
    expect(
      contexts.every((c) => c === 'credentials'),
      contexts.join(),
    ).toBe(true);
    const queue = new Queue(QUEUE_NAMES.slices, { connection: redis, prefix });
    try {
      expect(await queue.getJobCounts('failed')).toEqual({ failed: 0 });
    } finally {
      await queue.close();
    }
    const working = startPipelineWorkers({ connection: redis, prefix, concurrency: 2 }, deps(false));
    try {
      await waitForRun(runId, { connection: redis, prefix, timeoutMs: 60_000, pollMs: 100 });
      expect(sent).toHaveLength(200);
      expect(new Set(sent).size).toBe(200);
    } finally {
      await working.close();
    }
  });

  it('a run opened with its planning hold completes only once the hold goes: slices added later run in it, each row once', async () => {
    const all = rows(300);
    const sent: string[] = [];
    const publisher: PagePublisher = {
      async publishPage({ records: recs }) {
        sent.push(...recs.map((r) => String((r as DedupRecord)._id)));
        return { published: recs.length, deadLettered: 0, deadLetters: [] };
      },
    };
    const workers = startPipelineWorkers(
      { connection: redis, prefix, concurrency: 4 },
      { ...acceptingDeps(source(all), 'h'), publisher },
    );
    const slices = new Queue<SliceJobData>(QUEUE_NAMES.slices, { connection: redis, prefix });
    const runs = new Queue<RunJobData>(QUEUE_NAMES.runs, { connection: redis, prefix });
    /** Waits until the slice job completed. */
    const completed = async (id: string): Promise<void> => {
      for (let i = 0; i < 200 && (await slices.getJobState(id)) !== 'completed'; i++)
        await new Promise((r) => setTimeout(r, 50));
      expect(await slices.getJobState(id)).toBe('completed');
    };
    try {
      const runId = `rh-${Date.now()}`;
      const first = slice(runId, 0, 1_001_000);
      const later = slice(runId, 1_001_000, 2_000_000);
      const open = await enqueueOpenRun(run(runId, [first]), [first], { connection: redis, prefix });
      await completed(first.sliceId);
      // every slice so far is done, and the run still waits: its hold is a child not yet done
      expect(await runs.getJobState(runId)).toBe('waiting-children');
      expect(await slices.getJobState(planningHoldId(runId))).toBe('delayed');
      await open.add([later]);
      await completed(later.sliceId);
      expect(await runs.getJobState(runId)).toBe('waiting-children');
      await open.updateRun({ ...run(runId, [first, later]), unlistedUsers: 3 });
      await open.release();
      await open.close();
      const result = await waitForRun(runId, { connection: redis, prefix, timeoutMs: 60_000, pollMs: 100 });
      expect(result.counters.published).toBe(300);
      expect(sent.sort()).toEqual(all.map((r) => String(r._id)).sort());
      expect((await runs.getJob(runId))?.data.unlistedUsers).toBe(3);
      expect(await slices.getJob(planningHoldId(runId))).toBeUndefined();
    } finally {
      await slices.close();
      await runs.close();
      await workers.close();
    }
  });

  it('a planner that fails fails its run with its reason; a hold that comes due (a planner gone silent) fails it too, saying so', async () => {
    const errors: string[] = [];
    const workers = startPipelineWorkers(
      { connection: redis, prefix, concurrency: 2, onError: (e) => errors.push(e.message) },
      acceptingDeps(source(rows(20)), 'f'),
    );
    const slices = new Queue<SliceJobData>(QUEUE_NAMES.slices, { connection: redis, prefix });
    const failureOf = (runId: string): Promise<string> =>
      waitForRun(runId, { connection: redis, prefix, timeoutMs: 60_000, pollMs: 100 }).then(
        () => 'completed',
        (e: unknown) => (e instanceof Error ? e.message : String(e)),
      );
    try {
      const failed = `rf-${Date.now()}`;
      const one = slice(failed, 0, 2_000_000);
      const open = await enqueueOpenRun(run(failed, [one]), [one], { connection: redis, prefix });
      await open.fail('its planner failed: the listing timed out');
      await open.close();
      const reason = await failureOf(failed);
      expect(reason).toContain(
        `run ${failed} failed: slice ${planningHoldId(failed)} failed after 1 attempt: `,
      );
      expect(reason).toContain(
        `planning of run ${failed} did not finish: its planner failed: the listing timed out`,
      );

      const silent = `rs-${Date.now()}`;
      const two = slice(silent, 0, 2_000_000);
      const open2 = await enqueueOpenRun(run(silent, [two]), [two], { connection: redis, prefix });
      await open2.close(); // the planner goes away without a word
      // the hold's delay runs out (PLANNING_HOLD_MS; here at once)
      await (await slices.getJob(planningHoldId(silent)))?.promote();
      const reason2 = await failureOf(silent);
      expect(reason2).toContain(
        `planning of run ${silent} did not finish: no word from its planner for ${PLANNING_HOLD_MS / 60_000} min`,
      );
      expect(errors.some((m) => m.includes(`planning of run ${silent} did not finish`))).toBe(true);
    } finally {
      await slices.close();
      await workers.close();
    }
  });

  it('a slice that cannot be read fails its run loudly', async () => {
    const all = rows(50);
    const errors: string[] = [];
    const failedForGood: { id: string; attempts: number }[] = [];
    const workers = startPipelineWorkers(
      {
        connection: redis,
        prefix,
        concurrency: 2,
        onError: (e) => errors.push(e.message),
        onSliceFailed: (id, _e, attempts) => failedForGood.push({ id, attempts }),
        // every service up: the failure is the slice's own
        servicesDown: () => Promise.resolve(false),
      },
      acceptingDeps(source(all, { start: 1_000_000, end: 1_000_100 }), 'b'),
    );
    try {
      const runId = `r3-${Date.now()}`;
      const slices = [slice(runId, 0, 1_000_200), slice(runId, 1_000_200, 2_000_000)];
      await enqueueRun(run(runId, slices), slices, { connection: redis, prefix });
      // the run's failure names the slice and says why, not only BullMQ's "child <key> failed"
      const failure = await waitForRun(runId, {
        connection: redis,
        prefix,
        timeoutMs: 60_000,
        pollMs: 100,
      }).then(
        () => 'completed',
        (e: unknown) => (e instanceof Error ? e.message : String(e)),
      );
      expect(failure).toContain(
        `run ${runId} failed: slice ${String(slices[0]?.sliceId)} failed after 1 attempt: `,
      );
      expect(failure).toContain('cannot be read');
      expect(errors.some((m) => m.includes('cannot be read'))).toBe(true);
      // the slice that cannot be read is said once, as failed for good after its one attempt (not retried)
      expect(failedForGood).toEqual([{ id: slices[0]?.sliceId, attempts: 1 }]);
    } finally {
      await workers.close();
    }
  });
  it('a slice fenced on every try fails once past maxFencedHandBacks, with the reason; each hand-back is told (issue 48)', async () => {
    const fenced: SliceSource = {
      operation: () => 'donation.getManyPaginated',
      // eslint-disable-next-line require-yield -- fenced before its first page, every time
      async *readPages(slice) {
        throw new SliceFencedError(`slice ${slice.resource} taken by another owner`, 'k');
      },
    };
    const handBacks: number[] = [];
    const failedForGood: string[] = [];
    const workers = startPipelineWorkers(
      {
        connection: redis,
        prefix,
        concurrency: 1,
        maxFencedHandBacks: 3,
        onFencedHandBack: (_id, count) => handBacks.push(count),
        onSliceFailed: (_id, e) => failedForGood.push(e.message),
        servicesDown: () => Promise.resolve(false),
      },
      acceptingDeps(fenced, 'f'),
    );
    try {
      const runId = `rf-${Date.now()}`;
      const slices = [slice(runId, 0, 2_000_000)];
      await enqueueRun(run(runId, slices), slices, { connection: redis, prefix });
      const failure = await waitForRun(runId, {
        connection: redis,
        prefix,
        timeoutMs: 30_000,
        pollMs: 100,
      }).then(
        () => 'completed',
        (e: unknown) => (e instanceof Error ? e.message : String(e)),
      );
      expect(failure).toContain(`run ${runId} failed: slice ${String(slices[0]?.sliceId)} failed`);
      expect(failure).toContain(
        'was fenced 4 times (more than maxFencedHandBacks 3): another owner took it each time',
      );
      expect(failure).toContain('slice donations taken by another owner');
      expect(handBacks).toEqual([1, 2, 3, 4]);
      expect(failedForGood).toHaveLength(1);
    } finally {
      await workers.close();
    }
  }, 60_000);

  it("a failed run's status always carries its reason, however close to the failure it is read", async () => {
    // Read without pause while runs fail: a status read between the run's failing and its reason was once said
    // to have failed for an "unknown reason".
    const workers = startPipelineWorkers(
      { connection: redis, prefix, concurrency: 4, servicesDown: () => Promise.resolve(false) },
      acceptingDeps(source(rows(20), { start: 0, end: 2_000_000 }), 'u'),
    );
    try {
      const reads = await Promise.all(
        Array.from({ length: 8 }, async (_, i) => {
          const runId = `ru-${String(i)}-${Date.now()}`;
          const one = [slice(runId, 0, 2_000_000)];
          await enqueueRun(run(runId, one), one, { connection: redis, prefix });
          const seen: (string | undefined)[] = [];
          for (let n = 0; n < 20_000; n++) {
            const s = await getRunStatus(runId, { connection: redis, prefix });
            if (s?.state !== 'failed') continue;
            seen.push(s.failedReason);
            if (seen.length >= 3) break;
          }
          return seen;
        }),
      );
      for (const seen of reads) {
        expect(seen).toHaveLength(3);
        for (const reason of seen) expect(reason ?? 'no reason').toContain('cannot be read');
      }
    } finally {
      await workers.close();
    }
  });
  it('a slice that fails while a service is down is handed back without spending an attempt, and completes', async () => {
    const all = rows(50);
    const failedForGood: string[] = [];
    // The first read fails as a slice that cannot be read would; the worker's check then finds a service down.
    let reads = 0;
    let checks = 0;
    const flaky: SliceSource = {
      ...source(all),
      async *readPages(slice, o) {
        reads += 1;
        if (reads === 1)
          throw new UpstreamError('bad request', 400, 'donation.getManyPaginated', 'BAD_REQUEST');
        yield* source(all).readPages(slice, o);
      },
    };
    const workers = startPipelineWorkers(
      {
        connection: redis,
        prefix,
        concurrency: 1,
        onSliceFailed: (id) => failedForGood.push(id),
        servicesDown: () => Promise.resolve(++checks === 1),
      },
      acceptingDeps(flaky, 'e'),
    );
    try {
      const runId = `r6-${Date.now()}`;
      const slices = [slice(runId, 0, 2_000_000)];
      await enqueueRun(run(runId, slices), slices, { connection: redis, prefix });
      await waitForRun(runId, { connection: redis, prefix, timeoutMs: 60_000, pollMs: 100 });
      expect(failedForGood).toEqual([]);
      // read again after the hand-back (the slice and the pieces it split into), the services asked once
      expect(reads).toBeGreaterThan(1);
      expect(checks).toBe(1);
      // handed back, not failed: BullMQ counted one attempt, the one that completed (not the one that threw)
      const queue = new Queue(QUEUE_NAMES.slices, { connection: redis, prefix });
      const job = await queue.getJob(slices[0]?.sliceId ?? '');
      await queue.close();
      expect(job?.attemptsMade).toBe(1);
    } finally {
      await workers.close();
    }
  });
});
