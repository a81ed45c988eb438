/**
 * Pipeline benchmark: end-to-end records/s from the simulator upstream into Kafka (`gamedata worker` processes,
 * the compiled CLI as in production: fetch -> dedup -> Avro -> produce -> ack -> mark -> checkpoint), with ONE worker
 * process and with `--processes N|auto` (default auto = one per core) in the same run, each into fresh topics, beside
 * - Kafka's own producer benchmark (`org.apache.kafka.tools.ProducerPerformance`, same record count and average
 *   value size, acks=all, idempotent, same run), and
 * - the client-only figure (the same slices read through the same batching client, nothing published);
 * plus each worker process's peak RSS (VmHWM; the largest child's with --processes) at scale medium and, with
 * `--large`, at scale large.
 *
 * Upstream: the simulator with its rate limit and latency off (this measures the pipeline, not the upstream's
 * pacing). Services: KAFKA_BROKERS / SCHEMA_REGISTRY_URL / REDIS_URL (`eval "$(scripts/stack.sh env)"`).
 *
 * Run: `npm run build && npm run bench:pipeline -- [--resource donations] [--concurrency 32] [--processes N|auto]
 * [--large] [--worker-cpu-prof DIR] [--worker-node-options '--max-semi-space-size=8']
 * [--delivery both|exactly-once|at-least-once] [--rounds 1] [--partition countryId] [--warmup]` (`--processes 1`: the one-process
 * run only; `--partition`: full-history transactions planned from the partition proof, issue 23; `--delivery
 * both`, the default, runs every end-to-end run once per delivery mode, alternating, `--rounds` times);
 * prints Markdown for docs/benchmarks/diary.md. `--worker-cpu-prof DIR` writes the worker process's V8 CPU profile
 * (`node --cpu-prof`) into DIR when it exits (open it in Chrome DevTools or speedscope).
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pLimit from 'p-limit';
import { startSimulator, type Simulator } from '../tools/simulator/start-simulator.js';
import { createClient } from '../src/upstream/client/create-client.js';
import { createListing, LISTING_SPECS } from '../src/upstream/client/listing.js';
import { readSlice } from '../src/upstream/client/read-slice.js';
import { createRegistryClient } from '../src/output/encoding/registry-client.js';
import { createRecordEncoder } from '../src/output/encoding/record-encoder.js';
import { readSchemaFiles } from '../src/output/encoding/schema-files.js';
import { deleteSubjects, registerSchemas } from '../src/output/encoding/schema-registration.js';
import type { AvroRecordSchema } from '../src/output/encoding/avro-schema.js';
import { createTopics, deleteTopics } from '../src/output/kafka/admin/create-topics.js';
import { createClientPlannerSource, PIPELINE_CLIENT_DEFAULTS } from '../src/app/index.js';
import { connectRedis, createRunCounters, startBackfill, waitForRun } from '../src/pipeline/queue/index.js';
import { planBackfill } from '../src/pipeline/planner/index.js';
import { createRedisPendingMarks, createRunRegistry } from '../src/pipeline/dedup/index.js';
import { cpuSeconds } from './machine.js';
import { isResourceName, type ResourceName } from '../src/foundation/models/resources.js';

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
const processesArg = arg('processes', 'auto');
/** Extra Node flags for the worker processes only (NODE_OPTIONS), e.g. `--max-semi-space-size=8` for memory runs. */
const workerNodeOptions = arg('worker-node-options', '');
const processes = processesArg === 'auto' ? availableParallelism() : Number(processesArg);
type Delivery = 'exactly-once' | 'at-least-once';
const deliveryArg = arg('delivery', 'both');
const deliveries: Delivery[] =
  deliveryArg === 'both'
    ? ['at-least-once', 'exactly-once']
    : deliveryArg === 'exactly-once' || deliveryArg === 'at-least-once'
      ? [deliveryArg]
      : (() => {
          throw new Error(`--delivery must be both, exactly-once or at-least-once, got ${deliveryArg}`);
        })();
const rounds = Number(arg('rounds', '1'));
/** Full-history transactions: `--partition countryId` plans them from the partition proof (issue 23). */
const partition = arg('partition', 'off');
/** `--warmup`: each measured run follows the same backfill, unmeasured, in the same worker (steady state, not start-up). */
const warmup = args.includes('--warmup');
if (partition !== 'off' && partition !== 'countryId')
  throw new Error(`--partition must be off or countryId, got ${partition}`);
if (!Number.isSafeInteger(rounds) || rounds < 1) throw new Error(`--rounds must be a positive integer`);
if (!Number.isSafeInteger(processes) || processes < 1)
  throw new Error(`--processes must be a positive integer or auto, got ${processesArg}`);
if (!existsSync(`${ROOT}dist/app/cli/main.js`))
  throw new Error('dist/ is missing: run `npm run build` first');
const scales = (args.includes('--large') ? ['medium', 'large'] : [arg('scale', 'medium')]) as (
  'small' | 'medium' | 'large'
)[];

const brokers = (process.env['KAFKA_BROKERS'] ?? '').split(',').filter((b) => b !== '');
const registryUrl = process.env['SCHEMA_REGISTRY_URL'] ?? '';
const redisUrl = process.env['REDIS_URL'] ?? '';
if (brokers.length === 0 || registryUrl === '' || redisUrl === '')
  throw new Error('set KAFKA_BROKERS, SCHEMA_REGISTRY_URL, REDIS_URL (eval "$(bash scripts/stack.sh env)")');

interface E2e {
  processes: number;
  delivery: Delivery;
  records: number;
  endToEnd: number;
  /** The largest peak RSS (VmHWM) of one worker process. */
  workerPeakMb: number;
  secs: number;
  /** Worker CPU milliseconds (user + system, all worker processes) per 1 000 published records, during the run. */
  workerCpuMsPerK: number;
}

interface Row {
  scale: string;
  avgValueBytes: number;
  clientOnly: number;
  kafkaPerf: number;
  runs: E2e[];
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

interface Setup {
  registry: ReturnType<typeof createRegistryClient>;
  schemas: Record<ResourceName, AvroRecordSchema>;
  sim: Simulator;
  until: number;
  fullHistory: boolean;
  client: ReturnType<typeof createClient>;
}

/** Heap total/used, external and per-space used MB from a worker's /metrics (prom-client default metrics). */
async function memoryBreakdown(url: string): Promise<string> {
  try {
    const text = await (await fetch(url)).text();
    const mb = (re: RegExp): string => {
      const m = re.exec(text);
      return m ? (Number(m[1]) / 2 ** 20).toFixed(0) : '?';
    };
    const spaces = [...text.matchAll(/heap_space_size_used_bytes\{space="(\w+)"[^}]*\} (\S+)/g)]
      .map((m) => `${m[1]} ${(Number(m[2]) / 2 ** 20).toFixed(0)}`)
      .join(', ');
    return (
      `rss ${mb(/^\S*resident_memory_bytes(?:\{[^}]*\})? (\S+)$/m)} MB, heap total ${mb(/^\S*heap_size_total_bytes(?:\{[^}]*\})? (\S+)$/m)} / used ` +
      `${mb(/^\S*heap_size_used_bytes(?:\{[^}]*\})? (\S+)$/m)} MB, external ${mb(/^\S*external_memory_bytes(?:\{[^}]*\})? (\S+)$/m)} MB; used by space (MB): ${spaces}`
    );
  } catch (error) {
    return `unreadable (${(error as Error).message})`;
  }
}

/** Fresh topics, subjects and queue for one end-to-end run (so its records are not deduplicated away). */
async function endToEnd(scale: string, n: number, setup: Setup, delivery: Delivery): Promise<E2e> {
  const prefix = `bench-${scale}-p${n}-${Date.now()}`;
  await registerSchemas({ registry: setup.registry, topicPrefix: prefix, schemas: setup.schemas });
  await createTopics({ brokers, topicPrefix: prefix });
  const env = {
    ...process.env,
    GAMEDATA_API_URL: setup.sim.url,
    GAMEDATA_API_KEY: 'bench',
    GAMEDATA_TOPIC_PREFIX: prefix,
    GAMEDATA_QUEUE_PREFIX: `${prefix}-bull`,
    GAMEDATA_REDIS_PREFIX: prefix,
    GAMEDATA_DELIVERY: delivery,
    ...(workerNodeOptions === '' ? {} : { NODE_OPTIONS: workerNodeOptions }),
  };
  // The compiled CLI (bin/gamedata.mjs -> dist/), as installed: a supervisor with n worker processes.
  const worker = spawn(
    process.execPath,
    [
      ...(workerCpuProf === '' ? [] : ['--cpu-prof', '--cpu-prof-dir', workerCpuProf]),
      'bin/gamedata.mjs',
      'worker',
      '--concurrency',
      String(concurrency),
      '--quiet',
      '--metrics-port',
      '0',
      // Through the supervisor even for one process, so both runs get its defaults (the children's heap limit).
      '--processes',
      String(n),
    ],
    { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let log = '';
  const pids = await new Promise<number[]>((resolve, reject) => {
    worker.once('exit', (code) => reject(new Error(`worker exited ${code}: ${log.slice(-2000)}`)));
    worker.stderr.on('data', (b: Buffer) => {
      log += b.toString();
      const found = [...log.matchAll(/worker: pid (\d+)/g)].map((m) => Number(m[1]));
      if (found.length >= n) resolve(found);
    });
  });
  const redis = connectRedis(redisUrl);
  const counters = createRunCounters(redis, prefix);
  const runs = createRunRegistry(createRedisPendingMarks(redis), { prefix });
  const peaks = new Map<number, number>();
  const sample = (): void => {
    for (const pid of pids) peaks.set(pid, Math.max(peaks.get(pid) ?? 0, peakRssMb(pid)));
  };
  const cpu = (): number => pids.reduce((sum, pid) => sum + cpuSeconds(pid), 0);
  const sampler = setInterval(sample, 500);
  if (warmup) {
    // The same backfill once first, not measured: the measured one then runs on a warm worker (JIT-compiled code,
    // connections open), as a long-lived worker does; `replay` makes it publish everything again.
    const warm = await startBackfill(
      { resources: [resource as ResourceName], fullHistory: setup.fullHistory, until: setup.until },
      {
        connection: redis,
        prefix: `${prefix}-bull`,
        planner: createClientPlannerSource(setup.client),
        counters,
        runs,
        plan: { partition: partition as 'off' | 'countryId' },
      },
    );
    await waitForRun(warm.run.runId, { connection: redis, prefix: `${prefix}-bull`, pollMs: 200 });
    console.error(`[bench] warm-up run done (${warm.slices.length} slices); the measured run replays it`);
  }
  const te = Date.now();
  const cpu0 = cpu();
  setup.sim.resetStats();
  const planned = await startBackfill(
    {
      resources: [resource as ResourceName],
      fullHistory: setup.fullHistory,
      until: setup.until,
      ...(warmup ? { replay: true } : {}),
    },
    {
      connection: redis,
      prefix: `${prefix}-bull`,
      planner: createClientPlannerSource(setup.client),
      counters,
      runs,
      plan: { partition: partition as 'off' | 'countryId' },
    },
  );
  const result = await waitForRun(planned.run.runId, {
    connection: redis,
    prefix: `${prefix}-bull`,
    pollMs: 200,
  });
  const secs = (Date.now() - te) / 1000;
  const workerCpu = cpu() - cpu0;
  // Page reads of the resource's listing (planning included), against the fewest pages its rows fit in.
  const procedure = LISTING_SPECS[resource as ResourceName].procedure;
  const listingPages = setup.sim.stats().procedureCalls.byProcedure[procedure] ?? 0;
  const rows = setup.sim.truth(resource as ResourceName).length;
  console.error(
    `[bench] ${procedure}: ${listingPages} page reads for ${rows} rows = ${(listingPages / Math.ceil(rows / 100)).toFixed(2)}x ceil(rows/100)` +
      `${planned.run.partition === undefined ? '' : `; partition proof: proven ${planned.run.partition.provenTypes.join(' ') || 'none'}, per user ${planned.run.partition.unprovenTypes.join(' ') || 'none'}, ${planned.run.partition.pages} proof pages`}; ${planned.slices.length} slices planned`,
  );
  sample();
  clearInterval(sampler);
  // Where the memory is, at the end of the run (prom-client's default process metrics of each worker).
  for (const url of [...log.matchAll(/metrics (http:\/\/\S+)/g)].map((m) => m[1] as string))
    console.error(`[bench] worker memory at the end: ${await memoryBreakdown(url)}`);
  const peak = Math.max(...peaks.values());
  const rate = result.counters.published / secs;
  console.error(
    `[bench] end to end (${delivery}), ${n} process(es): ${result.counters.published} published in ${secs.toFixed(1)} s = ${rate.toFixed(0)}/s, ` +
      `worker peak RSS ${[...peaks.values()].map((p) => p.toFixed(0)).join(' / ')} MB, worker CPU ${workerCpu.toFixed(1)} s`,
  );
  worker.removeAllListeners('exit');
  worker.kill('SIGTERM');
  await new Promise((r) => worker.once('exit', r));

  const keys = await redis.keys(`${prefix}*`);
  for (let i = 0; i < keys.length; i += 500) await redis.del(...keys.slice(i, i + 500));
  await redis.quit();
  await deleteTopics({ brokers, topicPrefix: prefix }).catch(() => undefined);
  await deleteSubjects(setup.registry, prefix).catch(() => undefined);
  return {
    processes: n,
    delivery,
    records: result.counters.published,
    endToEnd: rate,
    workerPeakMb: peak,
    secs,
    workerCpuMsPerK: (workerCpu * 1000 * 1000) / Math.max(1, result.counters.published),
  };
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
  const truth = sim.truth(resource as ResourceName);
  const until = sim.now();
  const fullHistory = resource === 'transactions';

  // Average encoded value size (sample).
  const encoder = createRecordEncoder({ registry, topicPrefix: prefix });
  const sampled = truth.filter((_, i) => i % Math.max(1, Math.floor(truth.length / 2000)) === 0);
  let bytes = 0;
  for (const r of sampled) bytes += (await encoder.encode(resource as ResourceName, r)).length;
  const avgValueBytes = Math.round(bytes / sampled.length);
  await deleteSubjects(registry, prefix).catch(() => undefined);

  // Client only: the planned slices read through one batching client, nothing published.
  const client = createClient({ baseUrl: sim.url, apiKey: 'bench', ...PIPELINE_CLIENT_DEFAULTS });
  const plan = await planBackfill(
    { resources: [resource as ResourceName], fullHistory, until, runId: 'bench' },
    createClientPlannerSource(client),
    { partition: partition as 'off' | 'countryId' },
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

  // End to end: one worker process, then n (unless n is 1), each into fresh topics.
  const setup: Setup = { registry, schemas, sim, until, fullHistory, client };
  const runs: E2e[] = [];
  for (let round = 0; round < rounds; round++)
    for (const delivery of deliveries) {
      runs.push(await endToEnd(scale, 1, setup, delivery));
      if (processes > 1) runs.push(await endToEnd(scale, processes, setup, delivery));
    }

  // Kafka's own producer benchmark, same count and average size, same run.
  const records = runs[0]?.records ?? 0;
  const kafkaPerf = await kafkaProducerPerf(`${prefix}.perf`, records, avgValueBytes);
  console.error(`[bench] ProducerPerformance: ${kafkaPerf.toFixed(0)}/s`);
  await deleteTopics({ brokers, topicPrefix: prefix }).catch(() => undefined);
  await sim.close();
  return { scale, avgValueBytes, clientOnly, kafkaPerf, runs };
}

const rows: Row[] = [];
for (const scale of scales) rows.push(await benchScale(scale));
const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');
console.log(
  `Machine: ${cpus()[0]?.model ?? '?'}, ${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}; ` +
    `load average ${loadavg()[0]?.toFixed(1)}; date ${new Date().toISOString().slice(0, 10)}; resource ${resource}, ` +
    `worker concurrency ${concurrency} per process, --processes ${processesArg} = ${processes}; compiled CLI (dist/).`,
);
console.log('');
console.log(
  '| scale | delivery | worker processes | records | avg value B | end to end rec/s | client only rec/s | Kafka ProducerPerformance rec/s | e2e / slower standalone | peak RSS per worker process | worker CPU ms / 1k rec |',
);
console.log('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
for (const r of rows) {
  const slower = Math.min(r.clientOnly, r.kafkaPerf);
  for (const e of r.runs)
    console.log(
      `| ${r.scale} | ${e.delivery} | ${e.processes} | ${fmt(e.records)} | ${r.avgValueBytes} | ${fmt(e.endToEnd)} | ${fmt(r.clientOnly)} | ${fmt(r.kafkaPerf)} | ${((e.endToEnd / slower) * 100).toFixed(0)} % | ${fmt(e.workerPeakMb)} MB | ${fmt(e.workerCpuMsPerK)} |`,
    );
}
process.exit(0);
