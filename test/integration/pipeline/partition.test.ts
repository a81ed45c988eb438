/**
 * Full-history transactions planned from a partition proof (issue 23), through the whole pipeline on the real
 * Kafka, registry and Redis: the proof on the window finds the rows the simulator left without `countryId`
 * (`transactionsWithoutCountry`), their type is walked per user, the proven ones per country, and the topic equals the
 * truth record by record. With no row outside the key every type is proven, nothing is walked per user, and the run
 * reads at most 2x ceil(rows/100) transaction pages (proof included). `status` and the workers' partition gauges read
 * what the proof found from Redis.
 */
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { connectRedis, startBackfill } from '../../../src/pipeline/queue/index.js';
import type { PlannedRun } from '../../../src/pipeline/planner/index.js';
import {
  collectStatus,
  formatStatus,
  parsePartition,
  readLatestPartition,
} from '../../../src/app/status/index.js';
import { createHarness, type Harness } from '../../e2e/pipeline-harness.js';

const TX = 'transaction.getPaginatedTransactions';
const WINDOW_MS = 71 * 3_600_000;

describe('full-history transactions by a proven partition (real Kafka, registry, Redis)', () => {
  let h: Harness | undefined;
  let control: Redis | undefined;
  beforeAll(() => {
    control = connectRedis(process.env['REDIS_URL'] ?? '');
  });
  afterEach(async () => {
    await h?.cleanup();
    h = undefined;
  });
  afterAll(async () => {
    await control?.quit();
  });

  /** Plans with the partition proof and runs the backfill on the harness's workers. */
  async function backfill(harness: Harness): Promise<PlannedRun> {
    const rt = await harness.runtime();
    const planned = await startBackfill(
      { resources: ['transactions'], fullHistory: true, until: harness.sim.now() },
      {
        connection: control as Redis,
        prefix: harness.settings.queuePrefix,
        planner: rt.planner,
        counters: rt.counters,
        users: rt.users,
        plan: { partition: 'countryId' },
      },
    );
    await harness.wait(planned.run.runId, 280_000);
    // `status` and the workers' gauges read the proof back from the run's state.
    expect(parsePartition(await rt.counters.getState(planned.run.runId))).toEqual(planned.run.partition);
    const latest = await readLatestPartition(control as Redis, harness.settings.redisPrefix);
    expect(latest).toEqual({ runId: planned.run.runId, partition: planned.run.partition });
    const status = await collectStatus({
      redis: control as Redis,
      queuePrefix: harness.settings.queuePrefix,
      redisPrefix: harness.settings.redisPrefix,
      scrape: false,
    });
    const run = status.runs.recent.find((r) => r.runId === planned.run.runId);
    expect(run?.partition).toEqual(planned.run.partition);
    expect(formatStatus(status)).toContain(
      `partition by countryId (${planned.run.partition?.walks ?? '?'} walks)`,
    );
    return planned;
  }

  async function expectExact(harness: Harness): Promise<void> {
    const r = await harness.verify('transactions');
    expect({
      missing: r.missing,
      unexpected: r.unexpected,
      duplicates: r.duplicates,
      undecodable: r.undecodable,
    }).toEqual({ missing: 0, unexpected: 0, duplicates: 0, undecodable: 0 });
    expect(r.matched).toBe(harness.sim.truth('transactions').length);
  }

  it('rows without the key: the proof finds them, their type is walked per user, the topic equals the truth', async () => {
    h = await createHarness('partition-gaps', { transactionsWithoutCountry: { wage: 0.2 } });
    await h.startWorkers(32);
    const truth = h.sim.truth('transactions');
    const until = h.sim.now();
    const keyless = truth.filter((t) => t['transactionType'] === 'wage' && !('countryId' in t));
    expect(
      keyless.filter((t) => Date.parse(String(t['createdAt'])) >= until - WINDOW_MS).length,
    ).toBeGreaterThan(0);

    const planned = await backfill(h);
    const p = planned.run.partition;
    // The proof read the newest hours its feed budget (15 s of the key's serial feed time) reached, not the 71 h.
    expect(p?.window.end).toBe(until);
    expect(p?.window.start).toBeGreaterThan(until - WINDOW_MS);
    // Planned from the head page's rate: within a page or two of the budget.
    expect(p?.feedSeconds).toBeLessThanOrEqual(15 * 1.15);
    const start = p?.window.start ?? until;
    const keylessInWindow = keyless.filter((t) => Date.parse(String(t['createdAt'])) >= start);
    expect(keylessInWindow.length).toBeGreaterThan(0);
    // Most of them lie beyond the window, where no other walk than their users' returns them.
    expect(keyless.length).toBeGreaterThan(keylessInWindow.length);
    expect(p?.unprovenTypes).toEqual(['wage']);
    expect(p?.provenTypes).not.toContain('wage');
    expect(p?.provenTypes.length).toBe(9);
    expect(p?.byType['wage']?.uncovered).toBe(keylessInWindow.length);
    expect({ uncovered: p?.rows.uncovered, repeated: p?.rows.repeated, foreign: p?.rows.foreign }).toEqual({
      uncovered: keylessInWindow.length,
      repeated: 0,
      foreign: 0,
    });
    const perUser = planned.slices.filter((s) => s.filters['userId'] !== undefined);
    expect(perUser.length).toBeGreaterThan(0);
    for (const s of perUser) expect(s.filters['transactionType']).toBe('wage');
    for (const s of planned.slices.filter((x) => x.filters['countryId'] !== undefined))
      expect(s.filters['transactionType']).toEqual(p?.provenTypes);
    await expectExact(h);
  });

  it('malformed records and users hidden from the listings: every type still proven, the topic and the DLQ equal the truth', async () => {
    // 5 % malformed: some users listed without `_id`, some transactions without `_id`, with a bad date or a bad field.
    h = await createHarness('partition-faults', { faults: { seed: 11, malformed: 0.05 } });
    await h.startWorkers(32);
    const planned = await backfill(h);
    const p = planned.run.partition;
    expect(p?.unprovenTypes).toEqual([]);
    expect(p?.unidentified).toBeGreaterThan(0); // rows without `_id` in the window, left out of the proof
    expect(planned.slices.every((s) => s.filters['userId'] === undefined)).toBe(true);
    const r = await h.verify('transactions');
    expect({
      missing: r.missing,
      unexpected: r.unexpected,
      duplicates: r.duplicates,
      undecodable: r.undecodable,
    }).toEqual({ missing: 0, unexpected: 0, duplicates: 0, undecodable: 0 });
    expect(r.dlq.expected).toBeGreaterThan(0);
    expect(r.dlq.found).toBe(r.dlq.expected);
    const malformed = new Set(h.sim.malformed('transactions').map((m) => m._id));
    expect(r.matched).toBe(
      h.sim.truth('transactions').filter((t) => !malformed.has(String(t['_id']))).length,
    );
  });

  it('every row under the key: every type proven, no per-user walk, at most 2x ceil(rows/100) pages, exact', async () => {
    h = await createHarness('partition-whole');
    await h.startWorkers(32);
    h.sim.resetStats();
    const planned = await backfill(h);
    const p = planned.run.partition;
    expect(p?.unprovenTypes).toEqual([]);
    expect(p?.rows.uncovered).toBe(0);
    expect(planned.slices.every((s) => s.filters['userId'] === undefined)).toBe(true);
    await expectExact(h);
    const rows = h.sim.truth('transactions').length;
    const pages = h.sim.stats().procedureCalls.byProcedure[TX] ?? 0;
    console.log(
      `partition run: ${pages} transaction page reads for ${rows} rows (${(pages / Math.ceil(rows / 100)).toFixed(2)}x)`,
    );
    expect(pages).toBeLessThanOrEqual(2 * Math.ceil(rows / 100));
  });
});
