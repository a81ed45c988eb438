/**
 * Pipeline benchmark: end-to-end records/s from the simulator upstream into Kafka (a `gamedata worker` PROCESS:
 * fetch -> dedup -> Avro -> produce -> ack -> mark -> checkpoint), beside
 * - Kafka's own producer benchmark (`org.apache.kafka.tools.ProducerPerformance`, same record count and average
 *   value size, acks=all, idempotent, same run), and
 * - the client-only figure (the same slices read through the same batching client, nothing published);
 * plus the worker's peak RSS (VmHWM) at scale medium and, with `--large`, at scale large.
 *
 * Upstream: the simulator with its rate limit and latency off (this measures the pipeline, not the upstream's
 * pacing). Services: KAFKA_BROKERS / SCHEMA_REGISTRY_URL / REDIS_URL (`eval "$(scripts/stack.sh env)"`).
 *
 * Run: `npm run bench:pipeline -- [--resource donations] [--concurrency 32] [--large] [--worker-cpu-prof DIR]`;
 * prints Markdown for docs/BENCHMARKS.md. `--worker-cpu-prof DIR` writes the worker process's V8 CPU profile
 * (`node --cpu-prof`) into DIR when it exits (open it in Chrome DevTools or speedscope).
 */
import { execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pLimit from 'p-limit';
import { startSimulator, type Simulator } from '../src/simulator/start-simulator.js';
import { createClient } from '../src/client/create-client.js';
import { createListing } from '../src/client/listing.js';
import { readSlice } from '../src/client/read-slice.js';
import { createRegistryClient } from '../src/encoding/registry-client.js';
import { createRecordEncoder } from '../src/encoding/record-encoder.js';
import { readSchemaFiles } from '../src/encoding/schema-files.js';
import { deleteSubjects, registerSchemas } from '../src/encoding/schema-registration.js';
import type { AvroRecordSchema } from '../src/encoding/avro-schema.js';
import { createTopics, deleteTopics } from '../src/sink/create-topics.js';
import {
  connectRedis,
  createClientPlannerSource,
  createRunCounters,
  startBackfill,
  waitForRun,
  PIPELINE_CLIENT_DEFAULTS,
} from '../src/jobs/index.js';
import { planBackfill } from '../src/planner/index.js';
import { isResourceName, type ResourceName } from '../src/models/resources.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const args = process.argv.slice(2);
const arg = (name: string, def: string): string => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? (args[i + 1] ?? def) : def;
};
const resource = arg('resource', 'donations');
if (!isResourceName(resource)) throw new Error(`--resource must be a resource name, got ${resource}`);
const concurrency = Number(arg('concurrency', '32'));
const workerCpuProf = arg('worker-cpu-prof', '');
const scales = (args.includes('--large') ? ['medium', 'large'] : [arg('scale', 'medium')]) as (
  'small' | 'medium' | 'large'
)[];

const brokers = (process.env['KAFKA_BROKERS'] ?? '').split(',').filter((b) => b !== '');
const registryUrl = process.env['SCHEMA_REGISTRY_URL'] ?? '';
const redisUrl = process.env['REDIS_URL'] ?? '';
if (brokers.length === 0 || registryUrl === '' || redisUrl === '')
  throw new Error('set KAFKA_BROKERS, SCHEMA_REGISTRY_URL, REDIS_URL (eval "$(bash scripts/stack.sh env)")');

interface Row {
  scale: string;
  records: number;
  avgValueBytes: number;
  endToEnd: number;
  clientOnly: number;
  kafkaPerf: number;
  workerPeakMb: number;
  secs: number;
  /** Worker CPU seconds (user + system) per 1 000 published records, during the run. */
  workerCpuMsPerK: number;
}

/** CPU seconds (user + system) a process has used so far, from /proc (0 when unreadable). */
function cpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8')
      .replace(/^.*\) /, '')
      .split(' ');
    // After "pid (comm) ": state is field 3, so utime/stime (fields 14/15) are at indexes 11/12.
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

function peakRssMb(pid: number): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

async function kafkaProducerPerf(topic: string, records: number, size: number): Promise<number> {
  const { stdout } = await promisify(execFile)(
    'java',
    [
      '-Xmx512m',
      '-cp',
      `${ROOT}.stack/kafka/libs/*`,
      'org.apache.kafka.tools.ProducerPerformance',
      '--topic',
      topic,
      '--num-records',
      String(records),
      '--record-size',
      String(size),
      '--throughput',
      '-1',
      '--producer-props',
      `bootstrap.servers=${brokers.join(',')}`,
      'acks=all',
      'enable.idempotence=true',
    ],
    { maxBuffer: 10 * 1024 * 1024 },
  );
  // Last summary line: "N records sent, X records/sec (Y MB/sec), ..."
  const m = /(\d+) records sent, ([\d.]+) records\/sec/.exec(stdout.trim().split('\n').at(-1) ?? '');
  if (!m) throw new Error(`unexpected ProducerPerformance output: ${stdout.slice(-500)}`);
  return Number(m[2]);
}

async function benchScale(scale: 'small' | 'medium' | 'large'): Promise<Row> {
  const t0 = Date.now();
  const sim: Simulator = await startSimulator({ scale, seed: 1, port: 0, rateLimit: { enabled: false } });
  console.error(`[bench] ${scale} simulator up in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  const prefix = `bench-${scale}-${Date.now()}`;
  const registry = createRegistryClient({ url: registryUrl });
  const files = await readSchemaFiles();
  const schemas = Object.fromEntries(Object.entries(files).map(([r, f]) => [r, f.schema])) as Record<
    ResourceName,
    AvroRecordSchema
  >;
  await registerSchemas({ registry, topicPrefix: prefix, schemas });
  await createTopics({ brokers, topicPrefix: prefix });
  const truth = sim.truth(resource as ResourceName);
  const until = sim.now();
  const fullHistory = resource === 'transactions';

  // Average encoded value size (sample).
  const encoder = createRecordEncoder({ registry, topicPrefix: prefix });
  const sample = truth.filter((_, i) => i % Math.max(1, Math.floor(truth.length / 2000)) === 0);
  let bytes = 0;
  for (const r of sample) bytes += (await encoder.encode(resource as ResourceName, r)).length;
  const avgValueBytes = Math.round(bytes / sample.length);

  // Client only: the planned slices read through one batching client, nothing published.
  const client = createClient({ baseUrl: sim.url, apiKey: 'bench', ...PIPELINE_CLIENT_DEFAULTS });
  const plan = await planBackfill(
    { resources: [resource as ResourceName], fullHistory, until, runId: 'bench' },
    createClientPlannerSource(client),
  );
  const limit = pLimit(concurrency);
  let read = 0;
  const tc = Date.now();
  await Promise.all(
    plan.slices.map((s) =>
      limit(async () => {
        for await (const page of readSlice(
          client,
          createListing(s.resource, s.filters),
          { start: s.start, end: s.end },
          { onInvalidItem: 'pass' },
        ))
          read += page.items.length;
      }),
    ),
  );
  const clientOnly = read / ((Date.now() - tc) / 1000);
  console.error(
    `[bench] client only: ${read} items (${plan.slices.length} slices) at ${clientOnly.toFixed(0)}/s`,
  );

  // End to end through a worker process.
  const env = {
    ...process.env,
    GAMEDATA_API_URL: sim.url,
    GAMEDATA_API_KEY: 'bench',
    GAMEDATA_TOPIC_PREFIX: prefix,
    GAMEDATA_QUEUE_PREFIX: `${prefix}-bull`,
    GAMEDATA_REDIS_PREFIX: prefix,
  };
  const worker = spawn(
    process.execPath,
    [
      ...(workerCpuProf === '' ? [] : ['--cpu-prof', '--cpu-prof-dir', workerCpuProf]),
      '--import',
      'tsx',
      'src/cli/main.ts',
      'worker',
      '--concurrency',
      String(concurrency),
      '--quiet',
    ],
    {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  await new Promise<void>((resolve) =>
    worker.stderr.on('data', (b: Buffer) => (b.toString().includes('worker: pid') ? resolve() : undefined)),
  );
  const redis = connectRedis(redisUrl);
  const counters = createRunCounters(redis, prefix);
  let peak = 0;
  const sampler = setInterval(() => (peak = Math.max(peak, peakRssMb(worker.pid ?? 0))), 500);
  const te = Date.now();
  const cpu0 = cpuSeconds(worker.pid ?? 0);
  const planned = await startBackfill(
    { resources: [resource as ResourceName], fullHistory, until },
    { connection: redis, prefix: `${prefix}-bull`, planner: createClientPlannerSource(client), counters },
  );
  const result = await waitForRun(planned.run.runId, {
    connection: redis,
    prefix: `${prefix}-bull`,
    pollMs: 200,
  });
  const secs = (Date.now() - te) / 1000;
  const workerCpu = cpuSeconds(worker.pid ?? 0) - cpu0;
  peak = Math.max(peak, peakRssMb(worker.pid ?? 0));
  clearInterval(sampler);
  const endToEnd = result.counters.published / secs;
  console.error(
    `[bench] end to end: ${result.counters.published} published in ${secs.toFixed(1)} s = ${endToEnd.toFixed(0)}/s, worker peak ${peak.toFixed(0)} MB, worker CPU ${workerCpu.toFixed(1)} s`,
  );
  worker.kill('SIGTERM');
  await new Promise((r) => worker.once('exit', r));

  // Kafka's own producer benchmark, same count and average size, same run.
  const kafkaPerf = await kafkaProducerPerf(`${prefix}.perf`, result.counters.published, avgValueBytes);
  console.error(`[bench] ProducerPerformance: ${kafkaPerf.toFixed(0)}/s`);

  const keys = await redis.keys(`${prefix}*`);
  for (let i = 0; i < keys.length; i += 500) await redis.del(...keys.slice(i, i + 500));
  await redis.quit();
  await deleteTopics({ brokers, topicPrefix: prefix }).catch(() => undefined);
  await deleteSubjects(registry, prefix).catch(() => undefined);
  await sim.close();
  return {
    scale,
    records: result.counters.published,
    avgValueBytes,
    endToEnd,
    clientOnly,
    kafkaPerf,
    workerPeakMb: peak,
    secs,
    workerCpuMsPerK: (workerCpu * 1000 * 1000) / Math.max(1, result.counters.published),
  };
}

const rows: Row[] = [];
for (const scale of scales) rows.push(await benchScale(scale));
const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');
console.log(
  `Machine: ${cpus()[0]?.model ?? '?'}, ${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}; ` +
    `load average ${loadavg()[0]?.toFixed(1)}; date ${new Date().toISOString().slice(0, 10)}; resource ${resource}, worker concurrency ${concurrency}.`,
);
console.log('');
console.log(
  '| scale | records | avg value B | end to end rec/s | client only rec/s | Kafka ProducerPerformance rec/s | e2e / slower standalone | worker peak RSS | worker CPU ms / 1k rec |',
);
console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
for (const r of rows) {
  const slower = Math.min(r.clientOnly, r.kafkaPerf);
  console.log(
    `| ${r.scale} | ${fmt(r.records)} | ${r.avgValueBytes} | ${fmt(r.endToEnd)} | ${fmt(r.clientOnly)} | ${fmt(r.kafkaPerf)} | ${((r.endToEnd / slower) * 100).toFixed(0)} % | ${fmt(r.workerPeakMb)} MB | ${fmt(r.workerCpuMsPerK)} |`,
  );
}
process.exit(0);
