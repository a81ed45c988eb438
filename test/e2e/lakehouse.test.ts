/**
 * The lakehouse path end to end: real Kafka, registry, Kafka Connect (Apache Iceberg's sink with `gamedata connect
 * --sink iceberg`'s configs), an Iceberg JDBC catalog in PostgreSQL and table files on the local disk, with the
 * simulator upstream, read back by PyIceberg (a reader no one here wrote).
 * - a backfill of all six resources lands in six Iceberg tables whose rows equal the simulator truth record by
 *   record, through a kill -9 of the Connect worker while the sinks are still committing (it is started again):
 *   nothing lost, nothing doubled;
 * - users that change upstream append their new versions (the table is the history), and docs/consuming.md's
 *   latest-per-_id query, run by DuckDB over PyIceberg's scan, gives the truth;
 * - records of an aborted Kafka transaction never reach a table (the sinks read read_committed);
 * - a new subject version with an extra optional field becomes a column; the rows before read it as null.
 *
 * This file starts its own Connect worker for the Iceberg sink (scripts/stack.sh up --with lakehouse on its own port
 * and group, GAMEDATA_TEST_LAKEHOUSE_PORT, default 18094), so it can kill it, and a Redis of its own (a `services`
 * file restarts the shared one in CI's other lane); Kafka, the registry and PostgreSQL are the shared ones. It is in
 * the `stacks` project (CI's second lane).
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import avro from 'avsc';
import kafkajs from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toAvroValue } from '../../src/output/encoding/avro-mapping.js';
import { AVRO_TYPE_OPTIONS } from '../../src/output/encoding/avro-types.js';
import { frameConfluent } from '../../src/output/encoding/confluent-frame.js';
import { readSchemaFiles } from '../../src/output/encoding/schema-files.js';
import { RESOURCES, RESOURCE_INFO, type ResourceName } from '../../src/foundation/models/resources.js';
import { topicName } from '../../src/foundation/models/topic-names.js';
import {
  createIcebergConnectors,
  createIcebergReader,
  icebergConnectorName,
  icebergControlTopic,
  icebergNamespace,
  restartFailedSinks,
  type IcebergReader,
} from '../../src/output/lakehouse/index.js';
import { createConnectClient, type ConnectClient } from '../../src/output/warehouse/index.js';
import { startPrivateRedis, type PrivateRedis } from '../helpers/private-kafka.js';
import { createHarness, type Harness } from './pipeline-harness.js';

type Obj = Record<string, unknown>;

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PORT = process.env['GAMEDATA_TEST_LAKEHOUSE_PORT'] ?? '18094';
const COMMIT_INTERVAL_MS = 2_000;

/** `scripts/stack.sh up --with lakehouse` with this file's own worker; the export lines it prints. */
async function lakehouseUp(): Promise<Map<string, string>> {
  const stdout = await new Promise<string>((resolve, reject) => {
    const child = spawn('bash', [`${ROOT}scripts/stack.sh`, 'up', '--with', 'lakehouse'], {
      cwd: ROOT,
      env: {
        ...process.env,
        STACK_LAKEHOUSE_CONNECT_PORT: PORT,
        STACK_LAKEHOUSE_CONNECT_GROUP: `gamedata-lakehouse-e2e-${PORT}`,
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolve(out)
        : reject(new Error(`scripts/stack.sh up --with lakehouse failed (exit ${code})`)),
    );
  });
  const env = new Map<string, string>();
  for (const match of stdout.matchAll(/^export ([A-Z_]+)=(.*)$/gm)) env.set(match[1] ?? '', match[2] ?? '');
  return env;
}

/** Dates as epoch ms, recursively: how the reader gives Iceberg timestamps back. */
function plain(value: unknown): unknown {
  if (value instanceof Date) return value.getTime();
  if (Array.isArray(value)) return value.map(plain);
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v ?? null)]));
  return value ?? null;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('lakehouse: topics -> Kafka Connect Iceberg sink -> Iceberg tables (JDBC catalog) -> PyIceberg', () => {
  let h: Harness;
  let redis: PrivateRedis | undefined;
  let sharedRedisUrl: string | undefined;
  let env: Map<string, string>;
  let connect: ConnectClient;
  let reader: IcebergReader;
  let namespace: string;
  let connectors: string[] = [];
  const need = (name: string): string => {
    const value = env.get(name);
    if (value === undefined || value === '')
      throw new Error(`scripts/stack.sh up --with lakehouse printed no ${name}`);
    return value;
  };
  const table = (resource: ResourceName): string => `${namespace}.${resource}`;

  async function counts(): Promise<Record<string, number | null>> {
    return reader.counts(namespace, [...RESOURCES]);
  }

  /** Polls (restarting failed sink tasks, see restart-failed-sinks.ts) until `done` holds or the time is up. */
  async function until(
    what: string,
    done: (c: Record<string, number | null>) => boolean,
    timeoutMs = 240_000,
  ): Promise<{ counts: Record<string, number | null>; restarts: string[] }> {
    const deadline = Date.now() + timeoutMs;
    const restarts: string[] = [];
    for (;;) {
      restarts.push(...(await restartFailedSinks(connect, connectors)));
      const c = await counts();
      if (done(c)) return { counts: c, restarts };
      if (Date.now() > deadline)
        throw new Error(`${what}: not within ${timeoutMs} ms (counts ${JSON.stringify(c)})`);
      await sleep(500);
    }
  }

  async function rowsById(resource: ResourceName): Promise<{ columns: string[]; rows: Map<string, Obj[]> }> {
    const result = await reader.rows(table(resource));
    const rows = new Map<string, Obj[]>();
    for (const row of result.rows) {
      const id = String(row['_id']);
      rows.set(id, [...(rows.get(id) ?? []), row]);
    }
    return { columns: result.columns, rows };
  }

  /** Every truth record equals its one row, field by field; returns the differences (empty = equal). */
  async function compareWithTruth(resource: ResourceName, extraColumns: string[] = []): Promise<string[]> {
    const model = RESOURCE_INFO[resource].model;
    const truth = h.sim.truth(resource);
    const { rows } = await rowsById(resource);
    const diffs: string[] = [];
    for (const record of truth) {
      const id = String(record['_id']);
      const found = rows.get(id) ?? [];
      if (found.length !== 1) {
        diffs.push(`${resource} ${id}: ${found.length} rows`);
        continue;
      }
      const expected = plain(toAvroValue(model, record)) as Obj;
      for (const column of extraColumns) expected[column] = null;
      const actual = found[0] as Obj;
      for (const key of new Set([...Object.keys(expected), ...Object.keys(actual)]))
        if (!isDeepStrictEqual(actual[key] ?? null, expected[key] ?? null))
          diffs.push(
            `${resource} ${id} ${key}: expected ${JSON.stringify(expected[key])}, got ${JSON.stringify(actual[key])}`,
          );
    }
    const extra = [...rows.keys()].filter((id) => !truth.some((r) => String(r['_id']) === id));
    if (extra.length > 0) diffs.push(`${resource}: rows of no truth record: ${extra.slice(0, 5).join(', ')}`);
    return diffs;
  }

  async function latestSchema(resource: ResourceName): Promise<{ id: number; schema: avro.Schema }> {
    const subject = `${topicName(h.settings.topicPrefix, resource)}-value`;
    const response = await fetch(`${h.settings.schemaRegistryUrl}/subjects/${subject}/versions/latest`);
    expect(response.status).toBe(200);
    const body = (await response.json()) as { id: number; schema: string };
    return { id: body.id, schema: JSON.parse(body.schema) as avro.Schema };
  }

  const kafka = (): kafkajs.Kafka =>
    new kafkajs.Kafka({
      clientId: `${h.settings.topicPrefix}-probe`,
      brokers: h.settings.kafkaBrokers,
      logLevel: kafkajs.logLevel.ERROR,
    });

  beforeAll(async () => {
    env = await lakehouseUp();
    // a Redis of its own: this file runs in CI's second lane, beside a `services` file that restarts the shared one
    redis = await startPrivateRedis();
    sharedRedisUrl = process.env['REDIS_URL'];
    process.env['REDIS_URL'] = redis.redisUrl;
    h = await createHarness('lakehouse');
    namespace = icebergNamespace(h.settings.topicPrefix);
    connect = createConnectClient({ url: need('LAKEHOUSE_CONNECT_URL') });
    reader = createIcebergReader({
      python: need('ICEBERG_PYTHON'),
      catalogUri: need('ICEBERG_CATALOG_URI'),
      warehouse: need('ICEBERG_WAREHOUSE'),
      catalogName: need('ICEBERG_CATALOG_NAME'),
    });
    const options = {
      connect,
      resources: [...RESOURCES],
      topicPrefix: h.settings.topicPrefix,
      catalogUri: need('ICEBERG_CATALOG_URI'),
      warehouse: need('ICEBERG_WAREHOUSE'),
      catalogName: need('ICEBERG_CATALOG_NAME'),
      namespace,
      commitIntervalMs: COMMIT_INTERVAL_MS,
      // the killed worker's consumers leave the connectors' groups after 10 s, not the default 45
      consumerSessionTimeoutMs: 10_000,
    };
    const created = await createIcebergConnectors(options);
    connectors = created.map((c) => c.name);
    expect(created.map((c) => [c.name, c.created, c.table])).toEqual(
      RESOURCES.map((r) => [icebergConnectorName(h.settings.topicPrefix, r), true, `${namespace}.${r}`]),
    );
    // idempotent: the same call again updates the same six connectors
    const again = await createIcebergConnectors(options);
    expect(again.map((c) => [c.name, c.created])).toEqual(created.map((c) => [c.name, false]));
    // what the worker holds: only committed records are read
    const held = (await connect.listConnectors()).filter((c) => connectors.includes(c.name));
    expect(held.map((c) => c.config['consumer.override.isolation.level'])).toEqual(
      RESOURCES.map(() => 'read_committed'),
    );
  }, 420_000); // a first run fetches the sink (Maven) and PyIceberg (pip)

  afterAll(async () => {
    for (const name of connectors) await connect?.deleteConnector(name).catch(() => undefined);
    if (reader !== undefined && namespace !== undefined) {
      await reader.drop(namespace).catch(() => undefined);
      const warehouse = env.get('ICEBERG_WAREHOUSE') ?? '';
      if (warehouse.startsWith('file://'))
        rmSync(`${fileURLToPath(warehouse)}/${namespace}`, { recursive: true, force: true });
    }
    if (h !== undefined) {
      const admin = kafka().admin();
      await admin.connect();
      const control = icebergControlTopic(h.settings.topicPrefix);
      if ((await admin.listTopics()).includes(control))
        await admin.deleteTopics({ topics: [control] }).catch(() => undefined);
      const groups = (await admin.listGroups()).groups.map((g) => g.groupId);
      await admin
        .deleteGroups(
          // the sinks' groups, and their coordinators' control-topic groups (`<group>-coord`)
          groups.filter((g) => connectors.some((name) => g.endsWith(name) || g.endsWith(`${name}-coord`))),
        )
        .catch(() => undefined);
      await admin.disconnect();
      await h.cleanup();
    }
    if (sharedRedisUrl !== undefined) process.env['REDIS_URL'] = sharedRedisUrl;
    await redis?.destroy();
  });

  it('a backfill of all six resources lands in six tables equal to the truth, through a kill -9 of the worker mid-run', async () => {
    const truthTotal = RESOURCES.reduce((n, r) => n + h.sim.truth(r).length, 0);
    // few workers: the backfill takes several commit intervals, so the kill finds the sinks mid-way
    await h.startWorkers(2);
    const runId = await h.enqueue({ resources: [...RESOURCES], fullHistory: true });
    // the first commit of any table is in, the backfill is not yet all visible: kill -9 the worker
    const before = await until('a first commit', (c) => Object.values(c).some((n) => (n ?? 0) > 0), 180_000);
    const pidFile = need('LAKEHOUSE_CONNECT_PID_FILE');
    // the worker must be this checkout's (a worker found answering on the port is reused, and cannot be killed here)
    if (!existsSync(pidFile))
      throw new Error(
        `the Connect worker on port ${PORT} was not started by this checkout (no ${pidFile}): stop it, or set GAMEDATA_TEST_LAKEHOUSE_PORT`,
      );
    const pid = Number(readFileSync(pidFile, 'utf8').trim());
    expect(Number.isSafeInteger(pid) && pid > 0).toBe(true);
    process.kill(pid, 'SIGKILL');
    const visibleAtKill = Object.values(before.counts).reduce<number>((n, c) => n + (c ?? 0), 0);
    const restartStarted = Date.now();
    for (let i = 0; i < 100; i++) {
      try {
        process.kill(pid, 0);
      } catch {
        break;
      }
      await sleep(100);
    }
    env = await lakehouseUp();
    const restartSeconds = (Date.now() - restartStarted) / 1000;
    const run = await h.wait(runId);
    expect(run.counters.published).toBe(truthTotal);

    const landedStarted = Date.now();
    const after = await until('every table = its truth', (c) =>
      RESOURCES.every((r) => (c[r] ?? 0) >= h.sim.truth(r).length),
    );
    const landedSeconds = (Date.now() - landedStarted) / 1000;
    // two more commit intervals: a record committed twice (a replay after the crash) would show now
    await sleep(2 * COMMIT_INTERVAL_MS + 1000);
    expect(await counts()).toEqual(Object.fromEntries(RESOURCES.map((r) => [r, h.sim.truth(r).length])));
    const diffs: string[] = [];
    for (const resource of RESOURCES) diffs.push(...(await compareWithTruth(resource)));
    expect({ diffs: diffs.length, sample: diffs.slice(0, 5) }).toEqual({ diffs: 0, sample: [] });
    // transactions are partitioned by day of createdAt
    const snapshots = await reader.snapshots(table('transactions'));
    expect(snapshots.length).toBeGreaterThan(0);
    expect(Number(snapshots.at(-1)?.summary['changed-partition-count'] ?? 0)).toBeGreaterThan(0);
    console.log(
      `lakehouse: killed the worker with ${visibleAtKill} of ${truthTotal} rows visible; ` +
        `worker back after ${restartSeconds.toFixed(1)} s; all ${truthTotal} rows exact ${landedSeconds.toFixed(1)} s after the backfill ended; ` +
        `failed tasks restarted: ${[...before.restarts, ...after.restarts].join(', ') || 'none'}`,
    );
    // the kill came mid-run: not everything was visible yet
    expect(visibleAtKill).toBeLessThan(truthTotal);
  }, 600_000);

  it("users that change upstream append their new versions; docs/consuming.md's latest-per-_id query gives the truth", async () => {
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
    await until('the changed versions', (c) => (c['users'] ?? 0) >= before.length + changed.length, 120_000);
    await sleep(2 * COMMIT_INTERVAL_MS + 1000);
    // the history: every version once
    expect((await counts())['users']).toBe(before.length + changed.length);
    // the latest per _id (DuckDB over PyIceberg's scan) equals the truth now, field by field
    const latest = await reader.latest(table('users'));
    const byId = new Map(latest.rows.map((r) => [String(r['_id']), r]));
    expect(byId.size).toBe(after.length);
    const model = RESOURCE_INFO.users.model;
    const diffs: string[] = [];
    for (const record of after) {
      const expected = plain(toAvroValue(model, record)) as Obj;
      const actual = byId.get(String(record['_id'])) ?? {};
      for (const key of Object.keys(expected))
        if (!isDeepStrictEqual(actual[key] ?? null, expected[key] ?? null))
          diffs.push(`users ${String(record['_id'])} ${key}`);
    }
    expect({ diffs: diffs.length, sample: diffs.slice(0, 5) }).toEqual({ diffs: 0, sample: [] });
  });

  it('records of an aborted Kafka transaction never reach a table (read_committed)', async () => {
    const latest = await latestSchema('articles');
    const type = avro.Type.forSchema(latest.schema, AVRO_TYPE_OPTIONS);
    const article = h.sim.truth('articles')[0] as Obj;
    const value = (id: string): Buffer =>
      frameConfluent(
        latest.id,
        type.toBuffer({ ...toAvroValue(RESOURCE_INFO.articles.model, article), _id: id }),
      );
    const producer = kafka().producer({
      transactionalId: `${h.settings.topicPrefix}-aborts`,
      idempotent: true,
      maxInFlightRequests: 1,
    });
    await producer.connect();
    try {
      const topic = topicName(h.settings.topicPrefix, 'articles');
      const aborted = await producer.transaction();
      await aborted.send({
        topic,
        messages: [{ key: 'lakehouse-aborted', value: value('lakehouse-aborted') }],
      });
      await aborted.abort();
      const committed = await producer.transaction();
      await committed.send({
        topic,
        messages: [{ key: 'lakehouse-committed', value: value('lakehouse-committed') }],
      });
      await committed.commit();
    } finally {
      await producer.disconnect();
    }
    const truth = h.sim.truth('articles').length;
    await until('the committed record', (c) => (c['articles'] ?? 0) >= truth + 1, 120_000);
    await sleep(2 * COMMIT_INTERVAL_MS + 1000);
    const { rows } = await rowsById('articles');
    expect(rows.get('lakehouse-committed')?.length).toBe(1);
    expect(rows.has('lakehouse-aborted')).toBe(false);
    expect((await counts())['articles']).toBe(truth + 1);
  });

  it('a new subject version with an extra optional field becomes a column; the rows before read it as null', async () => {
    const latest = await latestSchema('donations');
    const files = await readSchemaFiles();
    const evolved = {
      ...files.donations.schema,
      fields: [
        ...files.donations.schema.fields,
        { name: 'lakehouseProbe', type: ['null', 'string'], default: null },
      ],
    };
    const subject = `${topicName(h.settings.topicPrefix, 'donations')}-value`;
    const registered = await fetch(`${h.settings.schemaRegistryUrl}/subjects/${subject}/versions`, {
      method: 'POST',
      headers: { 'content-type': 'application/vnd.schemaregistry.v1+json' },
      body: JSON.stringify({ schema: JSON.stringify(evolved) }),
    });
    expect(registered.status).toBe(200);
    const { id } = (await registered.json()) as { id: number };
    expect(id).not.toBe(latest.id);

    const donation = h.sim.truth('donations')[0] as Obj; // immutable: the world's changes above left donations alone
    const type = avro.Type.forSchema(evolved as avro.Schema, AVRO_TYPE_OPTIONS);
    const probe = {
      ...toAvroValue(RESOURCE_INFO.donations.model, donation),
      _id: 'lakehouse-probe',
      lakehouseProbe: 'probe-1',
    };
    const producer = kafka().producer();
    await producer.connect();
    try {
      await producer.send({
        topic: topicName(h.settings.topicPrefix, 'donations'),
        messages: [{ key: 'lakehouse-probe', value: frameConfluent(id, type.toBuffer(probe)) }],
      });
    } finally {
      await producer.disconnect();
    }
    const truth = h.sim.truth('donations').length;
    await until('the evolved record', (c) => (c['donations'] ?? 0) >= truth + 1, 120_000);
    const { columns, rows } = await rowsById('donations');
    expect(columns).toContain('lakehouseProbe');
    expect(rows.get('lakehouse-probe')?.map((r) => r['lakehouseProbe'])).toEqual(['probe-1']);
    // every row before reads the new column as null, and still equals its truth record
    const before = [...rows.entries()].filter(([k]) => k !== 'lakehouse-probe').flatMap(([, r]) => r);
    expect(before.length).toBe(truth);
    expect(before.every((r) => r['lakehouseProbe'] === null)).toBe(true);
    rows.delete('lakehouse-probe');
    const diffs = (await compareWithTruth('donations', ['lakehouseProbe'])).filter(
      (d) => !d.includes('lakehouse-probe'),
    );
    expect(diffs).toEqual([]);
  });
});
