/* eslint-disable @typescript-eslint/require-await -- in-memory fakes of async interfaces */
import { describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { createPipelineMetrics } from '../../../../src/foundation/metrics/index.js';
import type { PipelineWorkerDeps } from '../../../../src/pipeline/queue/index.js';
import {
  createWorkerTelemetry,
  formatProgressLine,
  formatStatus,
  progressSample,
  recordCountersFromMetrics,
  sumMetrics,
  type StatusReport,
} from '../../../../src/app/status/index.js';

describe('progressSample', () => {
  it('rates records per second and extrapolates the ETA from the slices done', () => {
    const s = progressSample(
      {
        state: 'waiting-children',
        completed: 5,
        pending: 15,
        fetched: 1000,
        published: 900,
        deduplicated: 90,
        deadLettered: 10,
      },
      10_000,
    );
    expect(s.rate).toBe(100);
    expect(s.slicesTotal).toBe(20);
    expect(s.etaSeconds).toBe(30);
    expect(formatProgressLine(s)).toBe(
      'waiting-children: 5/20 slices, 1000 fetched, 900 published, 90 deduplicated, 10 dead-lettered, 100 records/s, ETA 30 s',
    );
    expect(
      progressSample(
        { state: 'x', completed: 0, pending: 3, fetched: 0, published: 0, deduplicated: 0, deadLettered: 0 },
        0,
      ).etaSeconds,
    ).toBeUndefined();
  });
});

describe('metrics scraping', () => {
  it('sums every labelled sample of a metric', async () => {
    const m = createPipelineMetrics({ processMetrics: false });
    m.recordsFetched.inc({ resource: 'users' }, 10);
    m.recordsFetched.inc({ resource: 'parties' }, 5);
    m.recordsDeadLettered.inc({ resource: 'users', reason: 'invalid' }, 2);
    const sums = sumMetrics(await m.render());
    expect(recordCountersFromMetrics(sums)).toEqual({
      fetched: 15,
      published: 0,
      deduplicated: 0,
      deadLettered: 2,
    });
  });
});

describe('worker telemetry', () => {
  it('counts pages into the metrics exactly as the run counters get them, and times produce', async () => {
    const metrics = createPipelineMetrics({ processMetrics: false });
    const t = createWorkerTelemetry({ metrics, metricsPort: false, topicPrefix: 'p' });
    const added: unknown[] = [];
    const deps = {
      source: { operation: () => 'op', readPages: async function* () {} },
      dedup: {} as PipelineWorkerDeps['dedup'],
      publisher: {
        publishPage: async ({ records }: { records: readonly unknown[] }) => ({
          published: records.length,
          deadLettered: 0,
          deadLetters: [],
        }),
      },
      counters: {
        add: async (...args: unknown[]) => {
          added.push(args);
        },
        get: async () => ({ fetched: 0, published: 0, deduplicated: 0, deadLettered: 0, byResource: {} }),
        setState: async () => undefined,
      },
    } as unknown as PipelineWorkerDeps;
    const wrapped = t.instrument(deps);
    await wrapped.counters.add(
      'run1',
      { fetched: 100, published: 97, deduplicated: 1, deadLettered: 2 },
      'users',
    );
    await wrapped.publisher.publishPage({
      resource: 'users',
      records: [{ _id: 'a' }],
      lineage: { runId: 'r', sliceId: 's', sourceOperation: 'o', fetchedAt: 0 },
    });
    t.onRequest({ procedures: 50, status: 200, ms: 10 });
    t.onRequest({ procedures: 1, status: 429, ms: 10 });
    expect(added).toHaveLength(1);
    const text = await metrics.render();
    expect(text).toContain('gamedata_records_fetched_total{resource="users"} 100');
    expect(text).toContain('gamedata_records_published_total{resource="users"} 97');
    expect(text).toContain('gamedata_records_deduplicated_total{resource="users"} 1');
    expect(text).toContain('gamedata_records_dead_lettered_total{resource="users",reason="invalid"} 2');
    expect(text).toContain('gamedata_pages_total{resource="users"} 1');
    expect(text).toContain('gamedata_http_requests_total{status="429"} 1');
    expect(text).toContain('gamedata_produce_latency_seconds_count{topic="p.users"} 1');
    expect(text).toContain('gamedata_batch_size_sum 51');
  });
});

describe('formatStatus', () => {
  it('shows runs, slices, records, tails, headroom and workers', () => {
    const report: StatusReport = {
      at: '2026-11-22T10:00:00.000Z',
      runs: {
        total: 3,
        running: 1,
        completed: 1,
        failed: 1,
        recent: [
          {
            runId: 'r1',
            state: 'running',
            resources: ['transactions'],
            planned: 40,
            slices: { completed: 30, pending: 10 },
            at: Date.parse('2026-11-22T09:30:00.000Z'),
            counters: { fetched: 1, published: 1, deduplicated: 0, deadLettered: 0 },
            keyTime: { requests: 900, feedSeconds: 120, minutesOnOneKey: 1.8 },
          },
        ],
      },
      slices: { waiting: 2, active: 1, delayed: 0, completed: 10, failed: 1 },
      records: { fetched: 1200, published: 1100, deduplicated: 90, deadLettered: 10 },
      byResource: { users: { fetched: 1200, published: 1100, deduplicated: 90, deadLettered: 10 } },
      tails: [
        {
          resource: 'users',
          watermark: '2026-11-01T00:00:00.000Z',
          lagSeconds: 42,
          activeRunId: undefined,
          lastOutcome: 'completed',
          lastError: undefined,
          completedRuns: 4,
          failedRuns: 0,
          skippedTicks: 1,
          schedules: [{ id: 'tail-users', kind: 'tail', resource: 'users', every: 30_000 }],
        },
      ],
      gaps: [
        {
          resource: 'users',
          runId: 'users-tail-1',
          sliceId: 'users-tail-1.s1',
          filters: { countryId: 'c1' },
          start: Date.parse('2026-10-31T00:00:00.000Z'),
          end: Date.parse('2026-10-31T01:00:00.000Z'),
          reason: 'UpstreamError: 400 BAD_REQUEST',
          recordedAt: Date.parse('2026-11-22T09:00:00.000Z'),
        },
      ],
      schedules: [],
      workers: [],
      drift: [
        {
          resource: 'transactions',
          dropped: 0,
          records: [
            {
              kind: 'new_field',
              path: 'sellerMuId',
              count: 1234,
              types: { string: 1234 },
              firstSeenMs: Date.parse('2026-11-22T09:00:00.000Z'),
              lastSeenMs: Date.parse('2026-11-22T09:59:00.000Z'),
            },
            {
              kind: 'new_field',
              path: 'referrerId',
              count: 20,
              types: { string: 20 },
              firstSeenMs: Date.parse('2026-11-22T09:10:00.000Z'),
              lastSeenMs: Date.parse('2026-11-22T09:11:00.000Z'),
            },
          ],
          evolved: { referrerId: { subject: 'gamedata.transactions-value', id: 7 } },
        },
      ],
      upstream: {
        budgets: [
          {
            key: 'abc123',
            waiting: { 'feed-tail': 1, 'resource-tail': 0, backfill: 1234, rescan: 5 },
            leader: 'f00d',
            pauseUntil: 0,
            limit: 500,
            remaining: 312,
            resetAt: undefined,
            requests: 100,
            slots: 4850,
            calls: 4900,
            status429: 0,
            serialMs: 61_500,
            requestsByPriority: { 'feed-tail': 2, 'resource-tail': 0, backfill: 97, rescan: 1 },
            proceduresPerRequest: 48.5,
            headroom: 0.624,
          },
        ],
        rateLimit: { limit: 500, remaining: 400, headroom: 0.8, resetAt: undefined },
      },
    };
    const text = formatStatus(report);
    expect(text).toContain(
      'upstream budget (key abc123): 312 of 500 left; 100 requests carried 4,850 procedures (48.5 per request), 0 answered 429; ' +
        'waiting: feed-tail 1, resource-tail 0, backfill 1,234, rescan 5; fetcher f00d',
    );
    expect(text).toContain('runs: 3 (1 running, 1 completed, 1 failed)');
    // The key's time (issue 32): spent by the budget's counters, and per run its plan's estimate and what is left.
    expect(text).toContain(
      '  key time spent: 100 requests (0.2 min at 500 a minute), 62 s of serial feed (estimated when sent)',
    );
    expect(text).toContain(
      '    key time by the plan: ~900 requests, 120 s of serial feed, ~1.8 min on one key; ~0.5 min left (10 of 40 slices to do)',
    );
    expect(text).toContain('slices: 10 done, 1 active, 2 waiting, 0 delayed (retrying), 1 failed');
    expect(text).toContain('records: 1,200 fetched, 1,100 published, 90 deduplicated, 10 dead-lettered');
    expect(text).toContain('users         lag 42s, watermark 2026-11-01T00:00:00.000Z');
    expect(text).toContain('tail every 30s');
    // A range a tail could not read (issue 48), with what reads it again.
    expect(text).toContain(
      'gaps (1 range a tail could not read; `gamedata backfill <resource> --since <from> --until <to>`',
    );
    expect(text).toContain(
      '  users         from 2026-10-31T00:00:00.000Z to 2026-10-31T01:00:00.000Z (countryId=c1), run users-tail-1: UpstreamError: 400 BAD_REQUEST',
    );
    expect(text).toContain('400 of 500 left (80% headroom)');
    expect(text).toMatch(
      /referrerId .*; absorbed: a field of gamedata\.transactions-value from schema id 7\n/,
    );
    expect(text).not.toMatch(/sellerMuId .*absorbed/);
    expect(text).toContain(
      '  transactions\n    sellerMuId  new_field  1,234 records (string 1,234), first seen 2026-11-22T09:00:00.000Z, last seen 2026-11-22T09:59:00.000Z',
    );
  });
});

describe('worker telemetry drift', () => {
  it("counts a page's drift per resource, path and kind, and labels at most 300 paths per resource", async () => {
    const metrics = createPipelineMetrics({ processMetrics: false });
    const t = createWorkerTelemetry({ metrics, metricsPort: false });
    t.onDrift('transactions', {
      dropped: 0,
      entries: [
        { kind: 'new_field', path: 'sellerMuId', count: 7, types: { string: 7 } },
        { kind: 'type_changed', path: 'money', count: 2, types: { string: 2 } },
      ],
    });
    t.onDrift('transactions', {
      dropped: 0,
      entries: Array.from({ length: 300 }, (_, i) => ({
        kind: 'new_field' as const,
        path: `f${i}`,
        count: 1,
        types: { string: 1 },
      })),
    });
    const text = await metrics.render();
    expect(text).toContain(
      'gamedata_schema_drift_total{resource="transactions",path="sellerMuId",kind="new_field"} 7',
    );
    expect(text).toContain(
      'gamedata_schema_drift_total{resource="transactions",path="money",kind="type_changed"} 2',
    );
    expect(text).toContain(
      'gamedata_schema_drift_total{resource="transactions",path="f297",kind="new_field"} 1',
    );
    // 2 labelled first + 298 more = 300; f298 and f299 fall into (other)
    expect(text).not.toContain('path="f298"');
    expect(text).toContain(
      'gamedata_schema_drift_total{resource="transactions",path="(other)",kind="new_field"} 2',
    );
  });
});

describe('worker telemetry endpoint', () => {
  it('takes a free port when the configured one is in use (several workers on one machine)', async () => {
    const { createServer } = await import('node:net');
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const port = (blocker.address() as { port: number }).port;
    const heartbeats = new Map<string, string>();
    const redis = {
      hset: async (_k: string, f: string, v: string) => void heartbeats.set(f, v),
      hdel: async (_k: string, f: string) => void heartbeats.delete(f),
    } as unknown as Redis;
    const t = createWorkerTelemetry({
      metrics: createPipelineMetrics({ processMetrics: false }),
      metricsPort: port,
    });
    try {
      const url = await t.start({ redis });
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
      expect(url).not.toContain(`:${port}/`);
      expect((await fetch(url!)).status).toBe(200);
      expect(JSON.parse([...heartbeats.values()][0] ?? '{}')).toMatchObject({ metricsUrl: url });
    } finally {
      await t.close();
      blocker.close();
    }
    expect(heartbeats.size).toBe(0);
  });
});
