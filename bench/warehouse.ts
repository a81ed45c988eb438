/**
 * Warehouse benchmark: produces N records of a resource (simulator truth, scale medium, encoded with its schema) to a
 * fresh topic, then times one `gamedata connect`-style JDBC sink draining it into PostgreSQL (`count(*)` polled every
 * 200 ms). Prints records/s into Kafka beside rows/s into PostgreSQL (steady, and including the connector's start).
 *
 * Run (services from `eval "$(bash scripts/stack.sh up --with warehouse)"`):
 *   `npx tsx bench/warehouse.ts <resource> <records> [tasks=1] [batch=500]`
 * Cleans up its topic, subject, connector, consumer group and schema.
 */
import avro from 'avsc';
import kafkajs from 'kafkajs';
import pg from 'pg';
import { toAvroValue } from '../src/output/encoding/avro-mapping.js';
import { AVRO_TYPE_OPTIONS } from '../src/output/encoding/avro-types.js';
import { frameConfluent } from '../src/output/encoding/confluent-frame.js';
import { readSchemaFiles } from '../src/output/encoding/schema-files.js';
import { RESOURCE_INFO, type ResourceName } from '../src/foundation/models/resources.js';
import { startSimulator } from '../tools/simulator/start-simulator.js';
import {
  buildSinkConnectorConfig,
  createConnectClient,
  warehouseSchemaName,
} from '../src/output/warehouse/index.js';

const [resource, nArg, tasksArg, batchArg] = process.argv.slice(2) as [ResourceName, string, string, string];
const env = (name: string, fallback: string): string => process.env[name] ?? fallback;
const registryUrl = env('SCHEMA_REGISTRY_URL', 'http://127.0.0.1:18081/apis/ccompat/v7');
const brokers = env('KAFKA_BROKERS', '127.0.0.1:19092').split(',');
const warehouseUrl = env('WAREHOUSE_URL', 'postgresql://gamedata:gamedata@127.0.0.1:15432/gamedata');
const connectUrl = env('CONNECT_URL', 'http://127.0.0.1:18083');
if (!(resource in RESOURCE_INFO) || !(Number(nArg) > 0))
  throw new Error('usage: bench/warehouse.ts <resource> <records> [tasks] [batch]');
const n = Number(nArg);
const prefix = `whbench-${Date.now()}`;
const topic = `${prefix}.${resource}`;
const sim = await startSimulator({ scale: 'medium', seed: 1, port: 0 });
const records = sim.truth(resource).slice(0, n);
await sim.close();
const files = await readSchemaFiles();
const schema = files[resource].schema;
const reg = await fetch(`${registryUrl}/subjects/${topic}-value/versions`, {
  method: 'POST',
  headers: { 'content-type': 'application/vnd.schemaregistry.v1+json' },
  body: JSON.stringify({ schema: JSON.stringify(schema) }),
});
const { id } = (await reg.json()) as { id: number };
const type = avro.Type.forSchema(schema as avro.Schema, AVRO_TYPE_OPTIONS);
const model = RESOURCE_INFO[resource].model;
const kafka = new kafkajs.Kafka({ brokers, logLevel: kafkajs.logLevel.NOTHING });
const admin = kafka.admin();
await admin.connect();
await admin.createTopics({ topics: [{ topic, numPartitions: 3 }] });
const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
await producer.connect();
const encoded = records.map((r) => ({
  key: String(r['_id']),
  value: frameConfluent(id, type.toBuffer(toAvroValue(model, r))),
}));
const bytes = encoded.reduce((s, m) => s + m.value.length, 0);
const p0 = Date.now();
const step = resource === 'users' ? 100 : 2000;
for (let i = 0; i < encoded.length; i += step)
  await producer.send({ topic, acks: -1, messages: encoded.slice(i, i + step) });
const produceS = (Date.now() - p0) / 1000;
await producer.disconnect();

const url = warehouseUrl;
const db = new pg.Client({ connectionString: url });
await db.connect();
const dbSchema = warehouseSchemaName(prefix);
await db.query(`CREATE SCHEMA "${dbSchema}"`);
const connect = createConnectClient({ url: connectUrl });
const c = buildSinkConnectorConfig({
  resource,
  topicPrefix: prefix,
  warehouseUrl: url,
  tasksMax: Number(tasksArg ?? 1),
  batchSize: Number(batchArg ?? 500),
});
const t0 = Date.now();
await connect.putConnector(c.name, c.config);
let first = 0;
let count = 0;
while (count < records.length) {
  await new Promise((r) => setTimeout(r, 200));
  count = await db
    .query<{ n: number }>(`SELECT count(*)::int AS n FROM "${dbSchema}"."${resource}"`)
    .then((r) => r.rows[0]?.n ?? 0)
    .catch(() => 0);
  if (count > 0 && first === 0) first = Date.now();
  if (Date.now() - t0 > 600_000) throw new Error(`timeout at ${count}`);
}
const t1 = Date.now();
await connect.deleteConnector(c.name);
await db.query(`DROP SCHEMA "${dbSchema}" CASCADE`);
await db.end();
await admin.deleteTopics({ topics: [topic, `${topic}.connect-dlq`].filter(Boolean) }).catch(() => undefined);
await admin.deleteGroups([`connect-${c.name}`]).catch(() => undefined);
await admin.disconnect();
await fetch(`${registryUrl}/subjects/${topic}-value`, { method: 'DELETE' });
await fetch(`${registryUrl}/subjects/${topic}-value?permanent=true`, { method: 'DELETE' });
console.log(
  JSON.stringify({
    resource,
    records: records.length,
    avgValueB: Math.round(bytes / records.length),
    tasks: c.config['tasks.max'],
    batch: c.config['batch.size'],
    kafkaRecPerS: Math.round(records.length / produceS),
    sinkTotalS: (t1 - t0) / 1000,
    firstRowAfterS: (first - t0) / 1000,
    rowsPerS_steady: Math.round(records.length / ((t1 - first) / 1000)),
    rowsPerS_incl_start: Math.round(records.length / ((t1 - t0) / 1000)),
  }),
);
