/**
 * Issue 35 end to end, against the real Kafka, registry and Redis: upstream donations gain a field (`referrerId`)
 * from a point in time on and, later still, serve `amount` as a string. With the default `freeze` contract every
 * record with the new field is published (its value in `_extra`, so verify is exact), the drift is counted in Redis
 * and in `gamedata_schema_drift_total`, `status` and `schemas drift` report it with the change that would absorb
 * it (and the registry's verdict); each string `amount` is dead-lettered (`wrong-type`) and counted `type_changed`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { createHarness, type Harness } from './pipeline-harness.js';
import { createWorld } from '../../tools/simulator/world.js';
import { createPipelineRuntime, type PipelineRuntime } from '../../src/app/index.js';
import { connectRedis, startPipelineWorkers, type PipelineWorkers } from '../../src/pipeline/queue/index.js';
import { createWorkerTelemetry } from '../../src/app/status/worker-telemetry.js';
import { createPipelineMetrics } from '../../src/foundation/metrics/index.js';
import { collectStatus, formatStatus } from '../../src/app/status/index.js';
import { createRedisDriftStore } from '../../src/pipeline/drift/index.js';
import { buildDriftReport, formatDriftReport } from '../../src/app/cli/drift-report.js';
import {
  canonicalRecord,
  createRecordDecoder,
  createRegistryClient,
  testOptionalField,
} from '../../src/output/encoding/index.js';
import { Donation } from '../../src/foundation/models/catalogue.js';
import { parseSchemaContracts, type PipelineSettings } from '../../src/foundation/config/index.js';
import { readTopic } from '../../src/output/kafka/index.js';
import { dlqTopicName, topicName } from '../../src/foundation/models/topic-names.js';

// The shape changes at the 50th and 80th percentiles of the donations' creation times: mid-history.
const truthBefore = createWorld({ scale: 'small', seed: 1 }).truth('donations');
const times = truthBefore.map((r) => Date.parse(r['createdAt'] as string)).sort((a, b) => a - b);
const fieldFrom = new Date(times[Math.floor(times.length * 0.5)] as number).toISOString();
const retypeFrom = new Date(times[Math.floor(times.length * 0.8)] as number).toISOString();

/** Every record on the donations topic, decoded, by `_id`. */
async function readDonations(settings: PipelineSettings): Promise<Map<string, Record<string, unknown>>> {
  const decoder = createRecordDecoder({
    registry: createRegistryClient({ url: settings.schemaRegistryUrl }),
    topicPrefix: settings.topicPrefix,
  });
  const out = new Map<string, Record<string, unknown>>();
  await readTopic(
    { brokers: settings.kafkaBrokers, topic: topicName(settings.topicPrefix, 'donations') },
    async (m) => {
      if (m.value === null) return;
      const { record } = await decoder.decode('donations', m.value);
      out.set(record['_id'] as string, record);
    },
  );
  return out;
}

describe('schema drift end to end (freeze)', () => {
  let h: Harness;
  let rt: PipelineRuntime;
  let workers: PipelineWorkers;
  let bull: Redis;
  const metrics = createPipelineMetrics({ processMetrics: false });
  const telemetry = createWorkerTelemetry({ metrics, metricsPort: false });

  beforeAll(async () => {
    h = await createHarness('drift', {
      shapeChanges: {
        donations: [
          { from: fieldFrom, addField: 'referrerId' },
          { from: retypeFrom, retypeField: 'amount' },
        ],
      },
    });
    rt = await createPipelineRuntime(h.settings, {
      client: { timeoutMs: 5_000 },
      onDrift: (resource, drift) => telemetry.onDrift(resource, drift),
    });
    bull = connectRedis(h.settings.redisUrl);
    workers = startPipelineWorkers({ connection: bull, prefix: h.settings.queuePrefix, concurrency: 16 }, rt);
  });
  afterAll(async () => {
    await workers?.close();
    await rt?.close().catch(() => undefined);
    await bull?.quit().catch(() => undefined);
    await h?.cleanup();
  });

  it('counts the new field and the type change, loses nothing, dead-letters the retyped records', async () => {
    const started = Date.now();
    const truth = h.sim.truth('donations');
    const withField = truth.filter((r) => 'referrerId' in r);
    const retyped = truth.filter((r) => typeof r['amount'] === 'string');
    // The switch really is mid-history: some records before it, some after, some retyped.
    expect(withField.length).toBeGreaterThan(0);
    expect(withField.length).toBeLessThan(truth.length);
    expect(retyped.length).toBeGreaterThan(0);
    const published = truth.length - retyped.length;

    const run = await h.backfill({ resources: ['donations'] }, 50_000);
    expect(run.counters.published).toBe(published);
    expect(run.counters.deadLettered).toBe(retyped.length);

    // Nothing lost: every record that is not dead-lettered is on the topic, unknown field included (exact).
    const v = await h.verify('donations');
    expect({
      matched: v.matched,
      missing: v.missing,
      unexpected: v.unexpected,
      duplicates: v.duplicates,
    }).toEqual({
      matched: published,
      missing: retyped.length,
      unexpected: 0,
      duplicates: 0,
    });

    // Exact: each published record decodes to what upstream sent, the new field included (from `_extra`).
    const onTopic = await readDonations(h.settings);
    let compared = 0;
    for (const r of truth) {
      if (typeof r['amount'] === 'string') continue;
      expect(onTopic.get(r['_id'] as string)).toEqual(canonicalRecord(Donation, r));
      compared++;
    }
    expect(compared).toBe(published);
    expect([...onTopic.values()].filter((r) => 'referrerId' in r)).toHaveLength(
      withField.filter((r) => typeof r['amount'] !== 'string').length,
    );

    // Each retyped record is on the DLQ with its reason and path.
    const reasons = new Map<string, number>();
    await readTopic(
      {
        brokers: h.settings.kafkaBrokers,
        topic: dlqTopicName(topicName(h.settings.topicPrefix, 'donations')),
      },
      (m) => {
        const key = `${m.headers['gamedata.error.reason']}@${m.headers['gamedata.error.path']}`;
        reasons.set(key, (reasons.get(key) ?? 0) + 1);
      },
    );
    expect(Object.fromEntries(reasons)).toEqual({ 'wrong-type@amount': retyped.length });

    // The drift, as Redis keeps it: the new field counted on the published records that carry it.
    const newFieldCount = withField.filter((r) => typeof r['amount'] !== 'string').length;
    const [stored] = await createRedisDriftStore(rt.redis, { prefix: h.settings.redisPrefix }).read(
      'donations',
    );
    const byKind = Object.fromEntries((stored?.records ?? []).map((r) => [`${r.kind} ${r.path}`, r]));
    expect(byKind['new_field referrerId']).toMatchObject({
      count: newFieldCount,
      types: { string: newFieldCount },
    });
    expect(byKind['type_changed amount']).toMatchObject({
      count: retyped.length,
      types: { string: retyped.length },
    });
    expect(stored?.records).toHaveLength(2);

    // The metric.
    const text = await metrics.render();
    expect(text).toContain(
      `gamedata_schema_drift_total{resource="donations",path="referrerId",kind="new_field"} ${newFieldCount}`,
    );
    expect(text).toContain(
      `gamedata_schema_drift_total{resource="donations",path="amount",kind="type_changed"} ${retyped.length}`,
    );

    // status (and --json: the same report object).
    const report = await collectStatus({
      redis: rt.redis,
      queuePrefix: h.settings.queuePrefix,
      redisPrefix: h.settings.redisPrefix,
      scrape: false,
    });
    expect(report.drift.map((d) => d.resource)).toEqual(['donations']);
    expect(formatStatus(report)).toMatch(
      /referrerId {2}new_field {2}[\d,]+ records \(string [\d,]+\), first seen /,
    );

    // schemas drift: the absorbing change, which the registry (BACKWARD_TRANSITIVE) accepts.
    const registry = createRegistryClient({ url: h.settings.schemaRegistryUrl });
    const drift = await buildDriftReport(
      createRedisDriftStore(rt.redis, { prefix: h.settings.redisPrefix }),
      (o) => testOptionalField({ registry, topicPrefix: h.settings.topicPrefix, ...o }),
      'donations',
    );
    const field = drift.find((e) => e.path === 'referrerId');
    expect(field).toMatchObject({ absorb: 'referrerId: t.string optional at donations', compatible: true });
    const text2 = formatDriftReport(drift);
    expect(text2).toContain('absorb: referrerId: t.string optional at donations; the registry');
    expect(text2).toContain('would accept it');
    expect(text2).toContain('amount  type_changed');
    console.log(`drift e2e: ${truth.length} donations in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  });
});

describe('schema drift end to end (discard)', () => {
  let h: Harness;
  let rt: PipelineRuntime;
  let workers: PipelineWorkers;
  let bull: Redis;

  beforeAll(async () => {
    h = await createHarness('drift-discard', {
      shapeChanges: { donations: [{ from: fieldFrom, addField: 'referrerId' }] },
    });
    rt = await createPipelineRuntime(
      { ...h.settings, schemaContracts: parseSchemaContracts('donations=discard') },
      { client: { timeoutMs: 5_000 } },
    );
    bull = connectRedis(h.settings.redisUrl);
    workers = startPipelineWorkers({ connection: bull, prefix: h.settings.queuePrefix, concurrency: 16 }, rt);
  });
  afterAll(async () => {
    await workers?.close();
    await rt?.close().catch(() => undefined);
    await bull?.quit().catch(() => undefined);
    await h?.cleanup();
  });

  it('counts the new field, then drops it: every record published without it', async () => {
    const started = Date.now();
    const truth = h.sim.truth('donations');
    const withField = truth.filter((r) => 'referrerId' in r);
    expect(withField.length).toBeGreaterThan(0);
    const run = await h.backfill({ resources: ['donations'] }, 50_000);
    expect(run.counters.published).toBe(truth.length);
    const onTopic = await readDonations(h.settings);
    expect(onTopic.size).toBe(truth.length);
    for (const r of truth) {
      const { referrerId: _dropped, ...rest } = r;
      expect(onTopic.get(r['_id'] as string)).toEqual(canonicalRecord(Donation, rest));
    }
    const [stored] = await createRedisDriftStore(rt.redis, { prefix: h.settings.redisPrefix }).read(
      'donations',
    );
    expect(stored?.records.map((x) => [x.kind, x.path, x.count])).toEqual([
      ['new_field', 'referrerId', withField.length],
    ]);
    console.log(
      `drift discard e2e: ${truth.length} donations in ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
  });
});
