/**
 * The warehouse path end to end: real Kafka, registry, Kafka Connect (Debezium JDBC sink, `gamedata connect`'s
 * configs) and PostgreSQL, with the simulator upstream.
 * - a backfill of all six resources lands in PostgreSQL, and every table equals the simulator truth field by field
 *   (the documented mapping: nested records -> `<parent>_<child>` columns, arrays of strings -> text[], arrays of
 *   records -> jsonb, typed maps (`<name>Map`) -> jsonb, date-times -> timestamp (UTC), JSON fields, the JSON
 *   string kept beside each typed map, and `_extra` -> text);
 * - after users change upstream, an incremental run (what a tail's rescan does) updates their rows in place;
 * - a new schema version with an extra nullable field becomes a column;
 * - a record the sink cannot read lands in the connector's own DLQ and the connector keeps running.
 */
import { isDeepStrictEqual } from 'node:util';
import avro from 'avsc';
import kafkajs from 'kafkajs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toAvroValue } from '../../src/output/encoding/avro-mapping.js';
import { typedMapFieldName } from '../../src/output/encoding/avro-schema.js';
import { AVRO_TYPE_OPTIONS } from '../../src/output/encoding/avro-types.js';
import { frameConfluent } from '../../src/output/encoding/confluent-frame.js';
import { readSchemaFiles } from '../../src/output/encoding/schema-files.js';
import type { ModelDef } from '../../src/foundation/models/field.js';
import { RESOURCES, RESOURCE_INFO, type ResourceName } from '../../src/foundation/models/resources.js';
import { topicName } from '../../src/foundation/models/topic-names.js';
import { readTopic } from '../../src/output/kafka/readers/read-topic.js';
import {
  connectDlqTopicName,
  createConnectClient,
  createSinkConnectors,
  sinkConnectorName,
  waitForSink,
  warehouseSchemaName,
  type ConnectClient,
} from '../../src/output/warehouse/index.js';
import { warehouseUrls } from '../helpers/services.js';
import { createHarness, type Harness } from './pipeline-harness.js';

type Obj = Record<string, unknown>;

// timestamp without time zone holds UTC: read it as UTC epoch ms; bigint as a number (the schemas' longs are safe)
pg.types.setTypeParser(1114, (s: string) => Date.parse(`${s.replace(' ', 'T')}Z`));
pg.types.setTypeParser(20, (s: string) => Number(s));

/** JSON as the sink's ArraysOfRecordsToJson transform writes it: dates as epoch ms. */
function jsonish(value: unknown): unknown {
  if (value instanceof Date) return value.getTime();
  if (Array.isArray(value)) return value.map(jsonish);
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, jsonish(v)]));
  return value;
}

/** The row the sink should hold for an Avro value of `model`: nested records flattened with `_`. */
function expectedRow(model: ModelDef, avroValue: Obj | null, prefix = '', out: Obj = {}): Obj {
  const fieldNames = Object.entries(model.fields).flatMap(([name, type]) =>
    type.kind === 'map' && type.keepJsonString ? [name, typedMapFieldName(name)] : [name],
  );
  const names = [...(model.ids ? ['_id', '__v'] : []), ...fieldNames, '_extra'];
  for (const name of names) {
    const type = model.fields[name];
    const value = avroValue?.[name] ?? null;
    if (type?.kind === 'model') expectedRow(type.model, value as Obj | null, `${prefix}${name}_`, out);
    else out[`${prefix}${name}`] = jsonish(value);
  }
  return out;
}

interface Mismatch {
  resource: ResourceName;
  _id: string;
  column: string;
  expected: unknown;
  actual: unknown;
}

describe('warehouse: topics -> Kafka Connect JDBC sink -> PostgreSQL (simulator small)', () => {
  let h: Harness;
  let db: pg.Client;
  let connect: ConnectClient;
  let schema: string;
  const connectors: string[] = [];

  const table = (resource: ResourceName): string => `"${schema}"."${resource}"`;

  async function rows(resource: ResourceName): Promise<Map<string, Obj>> {
    const result = await db.query<Obj>(`SELECT * FROM ${table(resource)}`);
    return new Map(result.rows.map((row) => [String(row['_id']), row]));
  }

  async function columns(resource: ResourceName): Promise<string[]> {
    const result = await db.query<{ column_name: string }>(
      'SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2',
      [schema, resource],
    );
    return result.rows.map((r) => r.column_name).sort();
  }

  async function caughtUp(resource: ResourceName): Promise<void> {
    await waitForSink({
      connect,
      brokers: h.settings.kafkaBrokers,
      connectorName: sinkConnectorName(h.settings.topicPrefix, resource),
      topic: topicName(h.settings.topicPrefix, resource),
      timeoutMs: 180_000,
    });
  }

  /** Every truth record equals its row, column by column; returns the mismatches (empty = equal). */
  async function compareWithTruth(resource: ResourceName, extraColumns: string[] = []): Promise<Mismatch[]> {
    const model = RESOURCE_INFO[resource].model;
    const truth = h.sim.truth(resource);
    const table = await rows(resource);
    const mismatches: Mismatch[] = [];
    let columnNames: string[] | undefined;
    for (const record of truth) {
      const id = String(record['_id']);
      const expected = expectedRow(model, toAvroValue(model, record));
      columnNames ??= Object.keys(expected).concat(extraColumns).sort();
      const row = table.get(id);
      if (row === undefined) {
        mismatches.push({ resource, _id: id, column: '(row)', expected: 'a row', actual: 'none' });
        continue;
      }
      for (const [column, value] of Object.entries(expected)) {
        if (!isDeepStrictEqual(row[column] ?? null, value))
          mismatches.push({ resource, _id: id, column, expected: value, actual: row[column] });
      }
    }
    expect({ resource, rows: table.size }).toEqual({ resource, rows: truth.length });
    expect(await columns(resource)).toEqual(columnNames);
    return mismatches;
  }

  async function latestSchema(resource: ResourceName): Promise<{ id: number; schema: avro.Schema }> {
    const subject = `${topicName(h.settings.topicPrefix, resource)}-value`;
    const response = await fetch(`${h.settings.schemaRegistryUrl}/subjects/${subject}/versions/latest`);
    expect(response.status).toBe(200);
    const body = (await response.json()) as { id: number; schema: string };
    return { id: body.id, schema: JSON.parse(body.schema) as avro.Schema };
  }

  async function produce(resource: ResourceName, messages: { key: string; value: Buffer }[]): Promise<void> {
    const producer = new kafkajs.Kafka({
      clientId: `${h.settings.topicPrefix}-probe`,
      brokers: h.settings.kafkaBrokers,
      logLevel: kafkajs.logLevel.ERROR,
    }).producer();
    await producer.connect();
    try {
      await producer.send({ topic: topicName(h.settings.topicPrefix, resource), messages });
    } finally {
      await producer.disconnect();
    }
  }

  beforeAll(async () => {
    const urls = warehouseUrls();
    h = await createHarness('warehouse');
    schema = warehouseSchemaName(h.settings.topicPrefix);
    connect = createConnectClient({ url: urls.connectUrl });
    db = new pg.Client({ connectionString: urls.warehouseUrl });
    await db.connect();
    await h.startWorkers(32);
    const created = await createSinkConnectors({
      connect,
      resources: [...RESOURCES],
      topicPrefix: h.settings.topicPrefix,
      warehouseUrl: urls.warehouseUrl,
    });
    connectors.push(...created.map((c) => c.name));
    expect(created.every((c) => c.created)).toBe(true);
    // idempotent: the same call again updates the same six connectors
    const again = await createSinkConnectors({
      connect,
      resources: [...RESOURCES],
      topicPrefix: h.settings.topicPrefix,
      warehouseUrl: urls.warehouseUrl,
    });
    expect(again.map((c) => [c.name, c.created])).toEqual(created.map((c) => [c.name, false]));
  });

  afterAll(async () => {
    for (const name of connectors) await connect?.deleteConnector(name).catch(() => undefined);
    if (db !== undefined) {
      await db.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
      await db.end();
    }
    if (h !== undefined) {
      const admin = new kafkajs.Kafka({
        brokers: h.settings.kafkaBrokers,
        logLevel: kafkajs.logLevel.NOTHING,
      }).admin();
      await admin.connect();
      const dlqs = RESOURCES.map((r) => connectDlqTopicName(topicName(h.settings.topicPrefix, r)));
      const present = new Set(await admin.listTopics());
      await admin.deleteTopics({ topics: dlqs.filter((t) => present.has(t)) }).catch(() => undefined);
      await admin.deleteGroups(connectors.map((name) => `connect-${name}`)).catch(() => undefined);
      await admin.disconnect();
      await h.cleanup();
    }
  });

  it('a backfill of all six resources lands in PostgreSQL; every table equals the truth field by field', async () => {
    await h.backfill({ resources: [...RESOURCES], fullHistory: true });
    const started = Date.now();
    for (const resource of RESOURCES) await caughtUp(resource);
    const secs = (Date.now() - started) / 1000;
    const all: Mismatch[] = [];
    let total = 0;
    for (const resource of RESOURCES) {
      all.push(...(await compareWithTruth(resource)));
      total += h.sim.truth(resource).length;
    }
    expect({ mismatches: all.length, sample: all.slice(0, 5) }).toEqual({ mismatches: 0, sample: [] });
    // the array of records is queryable JSON
    const candidates = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ${table('elections')}, jsonb_array_elements(candidates) c WHERE c ? 'voteCount'`,
    );
    const truthCandidates = h.sim
      .truth('elections')
      .reduce((n, e) => n + (Array.isArray(e['candidates']) ? e['candidates'].length : 0), 0);
    expect(truthCandidates).toBeGreaterThan(0);
    expect(candidates.rows[0]?.n).toBe(truthCandidates);
    // typed maps are jsonb columns a warehouse can query key by key (the JSON string beside each stays text)
    const mapColumns = await db.query<{ column_name: string; data_type: string }>(
      `SELECT column_name, data_type FROM information_schema.columns
        WHERE table_schema = $1 AND table_name = 'users' AND column_name IN
          ('finishedTours', 'finishedToursMap', 'equippedSkinKeys', 'equippedSkinKeysMap') ORDER BY column_name`,
      [schema],
    );
    expect(mapColumns.rows.map((r) => [r.column_name, r.data_type])).toEqual([
      ['equippedSkinKeys', 'text'],
      ['equippedSkinKeysMap', 'jsonb'],
      ['finishedTours', 'text'],
      ['finishedToursMap', 'jsonb'],
    ]);
    const finished = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ${table('users')}, jsonb_each("finishedToursMap") e WHERE e.value = 'true'::jsonb`,
    );
    const truthFinished = h.sim
      .truth('users')
      .reduce(
        (n, u) =>
          n +
          Object.values((u['finishedTours'] ?? {}) as Record<string, unknown>).filter((v) => v === true)
            .length,
        0,
      );
    expect(truthFinished).toBeGreaterThan(0);
    expect(finished.rows[0]?.n).toBe(truthFinished);
    console.log(`warehouse: ${total} rows in PostgreSQL ${secs.toFixed(1)} s after the backfill ended`);
  });

  it('users that change upstream are updated in place by the next incremental run (same row count)', async () => {
    const before = h.sim.truth('users');
    const beforeVersions = new Map(before.map((u) => [String(u['_id']), String(u['updatedAt'])]));
    // ten simulated minutes of changes (no new records) on the frozen world
    h.sim.world.advanceTo(h.sim.now() + 600_000, { ratePerSecond: 0, changeRatePerSecond: 1 });
    const after = h.sim.truth('users');
    const changed = after.filter((u) => beforeVersions.get(String(u['_id'])) !== String(u['updatedAt']));
    expect(after.length).toBe(before.length);
    expect(changed.length).toBeGreaterThan(0);

    const run = await h.backfill({ resources: ['users'] });
    expect(run.counters.published).toBe(changed.length);
    await caughtUp('users');
    expect(await compareWithTruth('users')).toEqual([]);
    const count = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table('users')}`);
    expect(count.rows[0]?.n).toBe(before.length);
  });

  it('a new schema version with an extra nullable field becomes a column', async () => {
    const latest = await latestSchema('users');
    const files = await readSchemaFiles();
    const evolved = {
      ...files.users.schema,
      fields: [
        ...files.users.schema.fields,
        { name: 'warehouseProbe', type: ['null', 'string'], default: null },
      ],
    };
    const subject = `${topicName(h.settings.topicPrefix, 'users')}-value`;
    const registered = await fetch(`${h.settings.schemaRegistryUrl}/subjects/${subject}/versions`, {
      method: 'POST',
      headers: { 'content-type': 'application/vnd.schemaregistry.v1+json' },
      body: JSON.stringify({ schema: JSON.stringify(evolved) }),
    });
    expect(registered.status).toBe(200);
    const { id } = (await registered.json()) as { id: number };
    expect(id).not.toBe(latest.id);

    const user = h.sim.truth('users')[0] as Obj;
    const type = avro.Type.forSchema(evolved as avro.Schema, AVRO_TYPE_OPTIONS);
    const value = { ...toAvroValue(RESOURCE_INFO.users.model, user), warehouseProbe: 'probe-1' };
    await produce('users', [{ key: String(user['_id']), value: frameConfluent(id, type.toBuffer(value)) }]);
    await caughtUp('users');

    expect(await columns('users')).toContain('warehouseProbe');
    const probe = await db.query<{ _id: string; warehouseProbe: string | null }>(
      `SELECT "_id", "warehouseProbe" FROM ${table('users')} WHERE "warehouseProbe" IS NOT NULL`,
    );
    expect(probe.rows).toEqual([{ _id: user['_id'], warehouseProbe: 'probe-1' }]);
    // the other columns of that row (and every other row) still equal the truth
    expect(await compareWithTruth('users', ['warehouseProbe'])).toEqual([]);
  });

  it("a record the sink cannot read lands in the connector's DLQ; the connector keeps running", async () => {
    const latest = await latestSchema('donations');
    const type = avro.Type.forSchema(latest.schema, AVRO_TYPE_OPTIONS);
    const donation = h.sim.truth('donations')[0] as Obj;
    const after = { ...toAvroValue(RESOURCE_INFO.donations.model, donation), _id: 'warehouse-after-bad' };
    await produce('donations', [
      // a value in no registered format (e.g. a producer that skipped the serializer)
      { key: 'warehouse-bad', value: Buffer.from('{"_id":"warehouse-bad","amount":1}') },
      { key: 'warehouse-after-bad', value: frameConfluent(latest.id, type.toBuffer(after)) },
    ]);
    await caughtUp('donations');

    const status = await connect.connectorStatus(sinkConnectorName(h.settings.topicPrefix, 'donations'));
    expect({ state: status?.state, tasks: status?.tasks.map((t) => t.state) }).toEqual({
      state: 'RUNNING',
      tasks: ['RUNNING'],
    });
    const landed = await db.query<{ _id: string }>(
      `SELECT "_id" FROM ${table('donations')} WHERE "_id" LIKE 'warehouse-%'`,
    );
    expect(landed.rows).toEqual([{ _id: 'warehouse-after-bad' }]);

    const dlq = connectDlqTopicName(topicName(h.settings.topicPrefix, 'donations'));
    const got: { key: string; headers: Record<string, string> }[] = [];
    await readTopic({ brokers: h.settings.kafkaBrokers, topic: dlq }, (m) => {
      got.push({ key: m.key?.toString() ?? '', headers: m.headers });
    });
    expect(got.map((m) => m.key)).toEqual(['warehouse-bad']);
    expect(got[0]?.headers).toMatchObject({
      '__connect.errors.topic': topicName(h.settings.topicPrefix, 'donations'),
      '__connect.errors.stage': 'VALUE_CONVERTER',
    });
  });
});
