/**
 * Lakehouse benchmark: Apache Iceberg's Kafka Connect sink with `gamedata connect --sink iceberg`'s config.
 * 1. Backlog: produces N records of the resource (transactions unless named; simulator truth, scale medium, encoded with their schema) to a fresh topic in
 *    Kafka transactions, then creates the sink and times it until the table holds all N (PyIceberg's snapshots):
 *    rows/s into Iceberg, from the connector's creation and between its first and last snapshot.
 * 2. Kafka commit -> visible: with the sink caught up, commits B small transactions one every `gap` ms and takes, for
 *    each, the time from its Kafka commit to the first Iceberg snapshot that holds it (the snapshot's own timestamp:
 *    a PyIceberg read after it sees the rows). Bounded below by nothing and above by about one commit interval plus
 *    the commit's own time.
 *
 * Run (services from `eval "$(bash scripts/stack.sh up --with lakehouse)"`):
 *   `npx tsx bench/lakehouse.ts [records=100000] [commitIntervalMs=10000] [batches=12] [gapMs=2500] [resource=transactions]`
 * (users: appended like every resource, each version a row; scale medium holds 20 000, so e.g. `15000 5000 4 1500 users`)
 * Prints one JSON line; cleans up its topic, subject, connector, groups, control topic and table.
 */
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import avro from 'avsc';
import kafkajs from 'kafkajs';
import { toAvroValue } from '../src/output/encoding/avro-mapping.js';
import { AVRO_TYPE_OPTIONS } from '../src/output/encoding/avro-types.js';
import { frameConfluent } from '../src/output/encoding/confluent-frame.js';
import { readSchemaFiles } from '../src/output/encoding/schema-files.js';
import { isResourceName, RESOURCE_INFO } from '../src/foundation/models/resources.js';
import { startSimulator } from '../tools/simulator/start-simulator.js';
import {
  buildIcebergSinkConfig,
  createIcebergReader,
  icebergControlTopic,
  icebergNamespace,
} from '../src/output/lakehouse/index.js';
import { createConnectClient } from '../src/output/warehouse/index.js';
import { describeMachine } from './machine.js';

const [
  nArg = '100000',
  intervalArg = '10000',
  batchesArg = '12',
  gapArg = '2500',
  resourceArg = 'transactions',
] = process.argv.slice(2);
if (!isResourceName(resourceArg)) throw new Error(`the resource must be a resource name, got ${resourceArg}`);
const n = Number(nArg);
const commitIntervalMs = Number(intervalArg);
const batches = Number(batchesArg);
const gapMs = Number(gapArg);
const env = (name: string): string => {
  const v = process.env[name];
  if (v === undefined || v === '')
    throw new Error(`${name} is not set: eval "$(bash scripts/stack.sh up --with lakehouse)"`);
  return v;
};
const brokers = env('KAFKA_BROKERS').split(',');
const registryUrl = env('SCHEMA_REGISTRY_URL');
const catalogUri = env('ICEBERG_CATALOG_URI');
const warehouse = env('ICEBERG_WAREHOUSE');
const catalogName = env('ICEBERG_CATALOG_NAME');
const machine = describeMachine();
const started = new Date().toISOString();

const resource = resourceArg;
const prefix = `lhbench-${Date.now()}`;
const topic = `${prefix}.${resource}`;
const namespace = icebergNamespace(prefix);
const sim = await startSimulator({ scale: 'medium', seed: 1, port: 0 });
const records = sim.truth(resource).slice(0, n + batches * 1000);
await sim.close();
if (records.length < n + batches * 1000) throw new Error(`the world has only ${records.length} ${resource}`);
const schema = (await readSchemaFiles())[resource].schema;
const reg = await fetch(`${registryUrl}/subjects/${topic}-value/versions`, {
  method: 'POST',
  headers: { 'content-type': 'application/vnd.schemaregistry.v1+json' },
  body: JSON.stringify({ schema: JSON.stringify(schema) }),
});
const { id } = (await reg.json()) as { id: number };
const type = avro.Type.forSchema(schema as avro.Schema, AVRO_TYPE_OPTIONS);
const model = RESOURCE_INFO[resource].model;
const encoded = records.map((r) => ({
  key: String(r['_id']),
  value: frameConfluent(id, type.toBuffer(toAvroValue(model, r))),
}));
const kafka = new kafkajs.Kafka({ brokers, logLevel: kafkajs.logLevel.NOTHING });
const admin = kafka.admin();
await admin.connect();
await admin.createTopics({ topics: [{ topic, numPartitions: 3 }] });
const producer = kafka.producer({
  transactionalId: `${prefix}-bench`,
  idempotent: true,
  maxInFlightRequests: 1,
});
await producer.connect();
function chunksUnder<T extends { key: string; value: Buffer }>(messages: T[], bytes: number): T[][] {
  const chunks: T[][] = [[]];
  let size = 0;
  for (const m of messages) {
    const b = m.value.length + m.key.length + 64;
    if (size + b > bytes && (chunks.at(-1)?.length ?? 0) > 0) {
      chunks.push([]);
      size = 0;
    }
    chunks.at(-1)?.push(m);
    size += b;
  }
  return chunks;
}
async function commit(messages: { key: string; value: Buffer }[]): Promise<number> {
  const tx = await producer.transaction();
  // Under the broker's 1 MB request limit: a user is ~2 KB of Avro, a transaction ~0.4 KB.
  for (const chunk of chunksUnder(messages, 800_000)) await tx.send({ topic, acks: -1, messages: chunk });
  await tx.commit();
  return Date.now();
}

// 1. the backlog
const p0 = Date.now();
for (let i = 0; i < n; i += 2000) await commit(encoded.slice(i, Math.min(i + 2000, n)));
const produceS = (Date.now() - p0) / 1000;

const connect = createConnectClient({ url: env('LAKEHOUSE_CONNECT_URL') });
const reader = createIcebergReader({ python: env('ICEBERG_PYTHON'), catalogUri, warehouse, catalogName });
const sink = buildIcebergSinkConfig({
  resource,
  topicPrefix: prefix,
  catalogUri,
  warehouse,
  catalogName,
  namespace,
  commitIntervalMs,
});
const table = `${namespace}.${resource}`;
const total = async (): Promise<{ ts: number; total: number }[]> =>
  (await reader.snapshots(table).catch(() => [])).map((s) => ({
    ts: s.timestamp_ms,
    total: Number(s.summary['total-records'] ?? 0),
  }));
const t0 = Date.now();
await connect.putConnector(sink.name, sink.config);
let snaps: { ts: number; total: number }[] = [];
while ((snaps.at(-1)?.total ?? 0) < n) {
  await new Promise((r) => setTimeout(r, 1000));
  snaps = await total();
  if (Date.now() - t0 > 900_000) throw new Error(`timeout at ${snaps.at(-1)?.total ?? 0}`);
}
const first = snaps.find((s) => s.total > 0) as { ts: number };
const last = snaps.find((s) => s.total >= n) as { ts: number };

// 2. Kafka commit -> visible, one small transaction every gapMs
const commits: { at: number; total: number }[] = [];
for (let b = 0; b < batches; b++) {
  const from = n + b * 1000;
  commits.push({ at: await commit(encoded.slice(from, from + 1000)), total: from + 1000 });
  await new Promise((r) => setTimeout(r, gapMs));
}
const end = n + batches * 1000;
const t2 = Date.now();
while ((snaps.at(-1)?.total ?? 0) < end) {
  await new Promise((r) => setTimeout(r, 1000));
  snaps = await total();
  if (Date.now() - t2 > 300_000) throw new Error(`timeout at ${snaps.at(-1)?.total ?? 0}`);
}
const lags = commits
  .map((c) => (snaps.find((s) => s.total >= c.total)?.ts ?? NaN) - c.at)
  .sort((a, b) => a - b);
const finalRows = (await reader.counts(namespace, [resource]))[resource];

await producer.disconnect();
await connect.deleteConnector(sink.name);
await reader.drop(namespace).catch(() => undefined);
if (warehouse.startsWith('file://'))
  rmSync(`${fileURLToPath(warehouse)}/${namespace}`, { recursive: true, force: true });
await admin.deleteTopics({ topics: [topic, icebergControlTopic(prefix)] }).catch(() => undefined);
const groups = (await admin.listGroups()).groups.map((g) => g.groupId).filter((g) => g.includes(sink.name));
await admin.deleteGroups(groups).catch(() => undefined);
await admin.disconnect();
await fetch(`${registryUrl}/subjects/${topic}-value`, { method: 'DELETE' });
await fetch(`${registryUrl}/subjects/${topic}-value?permanent=true`, { method: 'DELETE' });
const pct = (p: number): number => lags[Math.min(lags.length - 1, Math.floor(p * lags.length))] ?? NaN;
console.log(
  JSON.stringify({
    started,
    machine,
    resource,
    records: n,
    partitionBy: sink.config[`iceberg.table.${table}.partition-by`],
    commitIntervalMs,
    kafkaTxRecPerS: Math.round(n / produceS),
    icebergRowsPerS_incl_start: Math.round(n / ((last.ts - t0) / 1000)),
    // null when one snapshot held them all
    icebergRowsPerS_first_to_last_snapshot:
      last.ts > first.ts ? Math.round(n / ((last.ts - first.ts) / 1000)) : null,
    firstSnapshotAfterS: (first.ts - t0) / 1000,
    commitToVisibleMs: { batches, gapMs, min: lags[0], median: pct(0.5), p90: pct(0.9), max: lags.at(-1) },
    finalRows,
    exact: finalRows === end,
  }),
);
