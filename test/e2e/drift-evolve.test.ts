/**
 * Issue 35's `evolve` contract end to end, against the real Kafka, registry, Redis, Kafka Connect and PostgreSQL.
 * Upstream donations gain `referrerId` from a point in time on, and later serve `amount` as a string.
 * - A first run reads the history before the field (schema v1); a second run meets the field mid-run: the subject
 *   gets a new version with `referrerId` as `["null","string"]`, every record carrying it is written with that
 *   version as a real field (not in `_extra`), the PostgreSQL table gains the column, and the records before still
 *   read, with the new schema and with the old one (a consumer that never upgraded).
 * - The string amounts are dead-lettered (`wrong-type`), and `schemas drift` prints the replay that repairs them;
 *   once upstream serves numbers again, that exact command (the CLI) restores the range, each record once.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import avro from 'avsc';
import pg from 'pg';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './pipeline-harness.js';
import { createWorld } from '../../tools/simulator/world.js';
import { startSimulator, type Simulator } from '../../tools/simulator/start-simulator.js';
import { createPipelineRuntime, type PipelineRuntime } from '../../src/app/index.js';
import { connectRedis, startPipelineWorkers, type PipelineWorkers } from '../../src/pipeline/queue/index.js';
import { createRedisDriftStore } from '../../src/pipeline/drift/index.js';
import { buildDriftReport, formatDriftReport } from '../../src/app/cli/drift-report.js';
import {
  AVRO_TYPE_OPTIONS,
  canonicalRecord,
  createRecordDecoder,
  createRegistryClient,
  parseConfluentFrame,
  testOptionalField,
} from '../../src/output/encoding/index.js';
import { readEvolvedFields } from '../../src/pipeline/publish/index.js';
import { collectStatus, formatStatus } from '../../src/app/status/index.js';
import { Donation } from '../../src/foundation/models/catalogue.js';
import { parseSchemaContracts, type PipelineSettings } from '../../src/foundation/config/index.js';
import { readTopic } from '../../src/output/kafka/index.js';
import { dlqTopicName, topicName } from '../../src/foundation/models/topic-names.js';
import {
  createConnectClient,
  createSinkConnectors,
  sinkConnectorName,
  waitForSink,
  warehouseSchemaName,
  type ConnectClient,
} from '../../src/output/warehouse/index.js';
import { warehouseUrls } from '../helpers/services.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
type Obj = Record<string, unknown>;

const truthBefore = createWorld({ scale: 'small', seed: 1 }).truth('donations');
const times = truthBefore.map((r) => Date.parse(r['createdAt'] as string)).sort((a, b) => a - b);
const fieldFromMs = times[Math.floor(times.length * 0.5)] as number;
const retypeFromMs = times[Math.floor(times.length * 0.8)] as number;
const fieldFrom = new Date(fieldFromMs).toISOString();
const retypeFrom = new Date(retypeFromMs).toISOString();

interface RawMessage {
  at: string;
  id: string;
  schemaId: number;
  payload: Buffer;
}

async function readRaw(settings: PipelineSettings): Promise<RawMessage[]> {
  const out: RawMessage[] = [];
  await readTopic(
    { brokers: settings.kafkaBrokers, topic: topicName(settings.topicPrefix, 'donations') },
    (m) => {
      if (m.value === null) return;
      const frame = parseConfluentFrame(m.value);
      out.push({
        at: `${m.partition}:${m.offset}`,
        id: String(m.key),
        schemaId: frame.schemaId,
        payload: frame.payload,
      });
    },
  );
  return out;
}

async function schemaById(settings: PipelineSettings, id: number): Promise<avro.Type> {
  const res = await fetch(`${settings.schemaRegistryUrl}/schemas/ids/${id}`);
  expect(res.status).toBe(200);
  const body = (await res.json()) as { schema: string };
  return avro.Type.forSchema(JSON.parse(body.schema) as avro.Schema, { ...AVRO_TYPE_OPTIONS, registry: {} });
}

function runCli(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/app/cli/main.ts', ...args], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => (out += b.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`gamedata ${args.join(' ')} still running after 90 s:\n${out}`));
    }, 90_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

describe('schema drift end to end (evolve)', () => {
  let h: Harness;
  let rt: PipelineRuntime;
  let workers: PipelineWorkers;
  let bull: Redis;
  let fixed: Simulator | undefined;
  let db: pg.Client;
  let connect: ConnectClient;
  const connectors: string[] = [];
  const settingsOf = (): PipelineSettings => ({
    ...h.settings,
    schemaContracts: parseSchemaContracts('donations=evolve'),
  });
  const evolved: string[] = [];

  async function startWorkers(apiUrl: string): Promise<void> {
    rt = await createPipelineRuntime(
      { ...settingsOf(), apiUrl },
      { client: { timeoutMs: 5_000 }, onSchemaEvolved: (f) => evolved.push(`${f.path}:${f.kind}`) },
    );
    workers = startPipelineWorkers({ connection: bull, prefix: h.settings.queuePrefix, concurrency: 16 }, rt);
  }

  beforeAll(async () => {
    const urls = warehouseUrls();
    h = await createHarness('drift-evolve', {
      shapeChanges: {
        donations: [
          { from: fieldFrom, addField: 'referrerId' },
          { from: retypeFrom, retypeField: 'amount' },
        ],
      },
    });
    connect = createConnectClient({ url: urls.connectUrl });
    db = new pg.Client({ connectionString: urls.warehouseUrl });
    await db.connect();
    const created = await createSinkConnectors({
      connect,
      resources: ['donations'],
      topicPrefix: h.settings.topicPrefix,
      warehouseUrl: urls.warehouseUrl,
    });
    connectors.push(...created.map((c) => c.name));
    bull = connectRedis(h.settings.redisUrl);
    await startWorkers(h.settings.apiUrl);
  });
  afterAll(async () => {
    await workers?.close();
    await rt?.close().catch(() => undefined);
    await bull?.quit().catch(() => undefined);
    for (const name of connectors) await connect?.deleteConnector(name).catch(() => undefined);
    if (db !== undefined) {
      await db
        .query(`DROP SCHEMA IF EXISTS "${warehouseSchemaName(h.settings.topicPrefix)}" CASCADE`)
        .catch(() => undefined);
      await db.end();
    }
    await fixed?.close();
    await h?.cleanup();
  });

  it('registers the new field mid-run, writes it as a real field, the table gains the column, old records still read; the printed replay repairs the type change once', async () => {
    const started = Date.now();
    const truth = h.sim.truth('donations');
    const byId = new Map(truth.map((r) => [r['_id'] as string, r]));
    const retyped = truth.filter((r) => typeof r['amount'] === 'string');
    const withField = truth.filter((r) => 'referrerId' in r && typeof r['amount'] !== 'string');
    const before = truth.filter((r) => Date.parse(r['createdAt'] as string) < fieldFromMs);
    expect(before.length).toBeGreaterThan(0);
    expect(withField.length).toBeGreaterThan(0);
    expect(retyped.length).toBeGreaterThan(0);
    const subject = `${topicName(h.settings.topicPrefix, 'donations')}-value`;
    const registry = createRegistryClient({ url: h.settings.schemaRegistryUrl });
    const v1 = await registry.getLatestSchemaMetadata(subject);

    // Run 1: the history before the field; run 2: the rest, where the field arrives mid-run.
    const run1 = await h.backfill({ resources: ['donations'], until: fieldFromMs }, 50_000);
    expect(run1.counters.published).toBe(before.length);
    expect(await registry.getAllVersions(subject)).toHaveLength(1);
    const run2 = await h.backfill({ resources: ['donations'], since: fieldFromMs }, 50_000);
    expect(run2.counters.published).toBe(truth.length - before.length - retyped.length);
    expect(run2.counters.deadLettered).toBe(retyped.length);

    // The subject has one new version: v1 + `referrerId` as an optional string (default null), still BACKWARD_TRANSITIVE.
    expect(evolved).toEqual(['referrerId:string']);
    expect(await registry.getAllVersions(subject)).toHaveLength(2);
    registry.clearLatestCaches();
    const v2 = await registry.getLatestSchemaMetadata(subject);
    const v2Fields = (
      JSON.parse(v2.schema) as { fields: { name: string; type: unknown; default?: unknown }[] }
    ).fields;
    expect(v2Fields.find((f) => f.name === 'referrerId')).toEqual({
      name: 'referrerId',
      type: ['null', 'string'],
      default: null,
    });
    expect(v2Fields.at(-1)?.name).toBe('_extra');
    expect(await registry.getCompatibility(subject)).toBe('BACKWARD_TRANSITIVE');

    // On the topic: the records of run 1 with v1; every record carrying the field with v2, as a real field.
    const raw = await readRaw(h.settings);
    expect(raw).toHaveLength(truth.length - retyped.length);
    const oldType = await schemaById(h.settings, v1.id as number);
    const newType = await schemaById(h.settings, v2.id as number);
    const oldReadsNew = oldType.createResolver(newType);
    let carried = 0;
    for (const m of raw) {
      const upstream = byId.get(m.id) as Obj;
      if (Date.parse(upstream['createdAt'] as string) < fieldFromMs) expect(m.schemaId).toBe(v1.id);
      if ('referrerId' in upstream) {
        expect(m.schemaId).toBe(v2.id);
        const value = newType.fromBuffer(m.payload) as Obj;
        expect(value['referrerId']).toBe(upstream['referrerId']);
        expect(value['_extra']).toBeNull();
        carried++;
      }
      // A consumer that kept the old schema reads every record, old and new (the field is skipped).
      const asOld = oldType.fromBuffer(m.payload, m.schemaId === v2.id ? oldReadsNew : undefined) as Obj;
      expect(asOld['_id']).toBe(m.id);
      expect('referrerId' in asOld).toBe(false);
    }
    expect(carried).toBe(withField.length);

    // Our decoder reads every record back exactly as upstream sent it (the field as a field, none where absent).
    const decoder = createRecordDecoder({ registry, topicPrefix: h.settings.topicPrefix });
    for (const m of raw) {
      const frame = Buffer.concat([Buffer.from([0]), Buffer.alloc(4), m.payload]);
      frame.writeInt32BE(m.schemaId, 1);
      const { record } = await decoder.decode('donations', frame);
      expect(record).toEqual(canonicalRecord(Donation, byId.get(m.id) as Obj));
    }

    // The warehouse: the table gains the column, with the values; the rows before it hold null.
    await waitForSink({
      connect,
      brokers: h.settings.kafkaBrokers,
      connectorName: sinkConnectorName(h.settings.topicPrefix, 'donations'),
      topic: topicName(h.settings.topicPrefix, 'donations'),
      timeoutMs: 60_000,
    });
    const table = `"${warehouseSchemaName(h.settings.topicPrefix)}"."donations"`;
    const rows = await db.query<{ _id: string; referrerId: string | null }>(
      `SELECT "_id", "referrerId" FROM ${table}`,
    );
    expect(rows.rows).toHaveLength(truth.length - retyped.length);
    for (const row of rows.rows)
      expect(row.referrerId).toBe((byId.get(row._id) as Obj)['referrerId'] ?? null);

    // What `schemas drift` prints: the field absorbed, the type change with the replay that repairs it.
    const store = createRedisDriftStore(rt.redis, { prefix: h.settings.redisPrefix });
    const report = await buildDriftReport(
      store,
      (o) => testOptionalField({ registry, topicPrefix: h.settings.topicPrefix, ...o }),
      'donations',
    );
    const text = formatDriftReport(report);
    expect(text).toContain('absorbed: ');
    expect(text).toContain('amount  type_changed');
    const firstRetyped = Math.min(...retyped.map((r) => Date.parse(r['createdAt'] as string)));
    const lastRetyped = Math.max(...retyped.map((r) => Date.parse(r['createdAt'] as string)));
    const printed = /repair: once the catalogue or upstream is fixed: (gamedata backfill .+)$/m.exec(
      text,
    )?.[1];
    expect(printed).toBe(
      `gamedata backfill donations --replay --since ${new Date(firstRetyped).toISOString()} --until ${new Date(lastRetyped + 1).toISOString()}`,
    );
    expect(
      (await readEvolvedFields(rt.redis, h.settings.redisPrefix, 'donations')).get('referrerId'),
    ).toMatchObject({
      subject,
      id: v2.id,
      kind: 'string',
    });
    // status names the absorbed field with its subject and schema id.
    const status = formatStatus(
      await collectStatus({
        redis: rt.redis,
        queuePrefix: h.settings.queuePrefix,
        redisPrefix: h.settings.redisPrefix,
        scrape: false,
      }),
    );
    expect(status).toMatch(
      new RegExp(
        `referrerId .*; absorbed: a field of ${subject.replace(/\./g, '\\.')} from schema id ${v2.id}\n`,
      ),
    );
    const dlq = new Map<string, number>();
    await readTopic(
      {
        brokers: h.settings.kafkaBrokers,
        topic: dlqTopicName(topicName(h.settings.topicPrefix, 'donations')),
      },
      (m) => {
        const key = `${m.headers['gamedata.error.reason']}@${m.headers['gamedata.error.path']}`;
        dlq.set(key, (dlq.get(key) ?? 0) + 1);
      },
    );
    expect(Object.fromEntries(dlq)).toEqual({ 'wrong-type@amount': retyped.length });

    // Upstream fixes `amount` (same world, the field kept): the printed command, run as printed, repairs the range.
    fixed = await startSimulator({
      scale: 'small',
      seed: 1,
      port: 0,
      shapeChanges: { donations: [{ from: fieldFrom, addField: 'referrerId' }] },
    });
    await workers.close();
    await rt.close();
    await startWorkers(fixed.url);
    const cli = await runCli([...(printed as string).split(' ').slice(1), '--wait'], {
      ...h.env,
      GAMEDATA_API_URL: fixed.url,
      GAMEDATA_SCHEMA_CONTRACT: 'donations=evolve',
    });
    expect(cli.code, cli.out).toBe(0);
    const after = await readRaw(h.settings);
    const count = new Map<string, number>();
    for (const m of after) count.set(m.id, (count.get(m.id) ?? 0) + 1);
    // Every record of the range is on the topic exactly once more than before; each retyped one exactly once.
    for (const r of retyped) expect(count.get(r['_id'] as string)).toBe(1);
    const inRange = truth.filter((r) => {
      const t = Date.parse(r['createdAt'] as string);
      return t >= firstRetyped && t <= lastRetyped;
    });
    expect(after.length - raw.length).toBe(inRange.length);
    const fixedTruth = new Map(fixed.truth('donations').map((r) => [r['_id'] as string, r]));
    const seenBefore = new Set(raw.map((m) => m.at));
    const replayed = after.filter((m) => !seenBefore.has(m.at));
    expect(replayed.map((m) => m.id).sort()).toEqual(inRange.map((r) => r['_id'] as string).sort());
    for (const m of replayed) {
      const frame = Buffer.concat([Buffer.from([0]), Buffer.alloc(4), m.payload]);
      frame.writeInt32BE(m.schemaId, 1);
      const { record } = await decoder.decode('donations', frame);
      expect(record).toEqual(canonicalRecord(Donation, fixedTruth.get(m.id) as Obj));
    }
    console.log(
      `drift evolve e2e: ${truth.length} donations, ${retyped.length} repaired, in ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
  });
});
