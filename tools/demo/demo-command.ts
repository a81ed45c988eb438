/**
 * `gamedata demo`: the whole flow on the embedded default upstream, ending with a verified summary.
 * Simulator (scale small) -> schemas registered -> topics created -> workers (one shared batching client) ->
 * backfill of all six resources (transactions with --full-history) -> verify every topic against the simulator's
 * truth -> a summary table (records per topic, missing, duplicates, DLQ, records/s). Exits 1 if anything is missing.
 * Needs KAFKA_BROKERS, SCHEMA_REGISTRY_URL and REDIS_URL (`npm run demo` starts the local stack first).
 */
import type { Command } from 'commander';
import { ConfigError } from '../../src/foundation/errors/index.js';
import { createRegistryClient } from '../../src/output/encoding/registry-client.js';
import { createRecordDecoder } from '../../src/output/encoding/record-decoder.js';
import { readSchemaFiles } from '../../src/output/encoding/schema-files.js';
import { registerSchemas } from '../../src/output/encoding/schema-registration.js';
import type { AvroRecordSchema } from '../../src/output/encoding/avro-schema.js';
import { createPipelineRuntime, type PipelineRuntime } from '../../src/app/index.js';
import {
  connectRedis,
  startBackfill,
  startPipelineWorkers,
  waitForRun,
} from '../../src/pipeline/queue/index.js';
import { readPipelineSettings, type PipelineSettings } from '../../src/foundation/config/index.js';
import { commandRedisLines } from '../../src/app/cli/connection-lines.js';
import { addressOf, requireReachable } from '../../src/app/cli/service-probes.js';
import { RESOURCES, type ResourceName } from '../../src/foundation/models/resources.js';
import { createTopics } from '../../src/output/kafka/admin/create-topics.js';
import { startSimulator } from '../simulator/start-simulator.js';
import { parseFaultSpec, parseLatencySpec } from '../simulator/options.js';
import { verifyResource, type VerifyReport } from '../../src/app/verify/index.js';

interface DemoFlags {
  scale: string;
  seed: string;
  concurrency: string;
  prefix?: string;
  faults?: string;
  latency?: string;
  warehouse?: boolean;
  lakehouse?: boolean;
}

function pad(s: string | number, n: number, right = false): string {
  const t = String(s);
  return right ? t.padEnd(n) : t.padStart(n);
}

export function register(program: Command): void {
  program
    .command('demo')
    .description(
      'simulator -> workers -> backfill of all six resources -> Kafka -> verify, with a summary table',
    )
    .option('--scale <scale>', 'simulator world size: small | medium | large', 'small')
    .option('--seed <n>', 'simulator world seed', '1')
    .option('--concurrency <n>', 'slices processed at once', '32')
    .option('--prefix <prefix>', 'topic / key prefix (default: demo-<time>, so every demo starts empty)')
    .option('--faults <spec>', 'simulator faults, e.g. 5xx=0.05,reset=0.01,hang=0.005,malformed=0.002')
    .option('--latency <spec>', 'simulator latency: realistic | off | request=600,...')
    .option('--warehouse', 'also land every topic in PostgreSQL via Kafka Connect; exit 1 if a table differs')
    .option(
      '--lakehouse',
      'also land every topic in Apache Iceberg tables via Kafka Connect, read back with PyIceberg; exit 1 if a table differs',
    )
    .action(async (flags: DemoFlags) => {
      const concurrency = checkDemoFlags(flags);
      const stamp = new Date().toISOString().replace(/[-:T]/g, '').slice(0, 14);
      const prefix = flags.prefix ?? `demo-${stamp}`;
      const t0 = Date.now();
      const step = (msg: string): void =>
        console.log(`[demo ${((Date.now() - t0) / 1000).toFixed(1).padStart(6)} s] ${msg}`);

      const sim = await startSimulator({
        scale: flags.scale as 'small',
        seed: Number(flags.seed),
        port: 0,
        ...(flags.faults === undefined ? {} : { faults: parseFaultSpec(flags.faults) }),
        ...(flags.latency === undefined ? {} : { latency: parseLatencySpec(flags.latency) }),
      });
      step(
        `simulator (${flags.scale}, seed ${flags.seed}) at ${sim.url}, world now ${new Date(sim.now()).toISOString()}`,
      );
      const base = readPipelineSettings({ api: false, kafka: true, registry: true });
      await requireReachable(base);
      const settings: PipelineSettings = {
        ...base,
        apiUrl: sim.url,
        apiKey: base.apiKey ?? 'demo-key',
        topicPrefix: prefix,
        queuePrefix: `${prefix}-bull`,
        redisPrefix: prefix,
      };
      const registry = createRegistryClient({ url: settings.schemaRegistryUrl });
      await prepareDemoTopics(settings, registry, step);

      const rt = await createPipelineRuntime(settings);
      const redisLines = commandRedisLines('demo', addressOf(settings.redisUrl));
      redisLines.watch(rt.redis);
      const bull = redisLines.watch(connectRedis(settings.redisUrl));
      const workers = startPipelineWorkers(
        {
          connection: bull,
          prefix: settings.queuePrefix,
          concurrency,
          onError: (e, where) => console.error(`  ! ${where}: ${e.message}`),
        },
        rt,
      );
      step(`workers started (concurrency ${concurrency}, one shared batching client)`);
      let failed: boolean | undefined;
      try {
        const started = Date.now();
        const runId = await runDemoBackfill(sim.now(), settings, rt, bull, step);
        const c = (
          await waitForRun(runId, {
            connection: bull,
            prefix: settings.queuePrefix,
            pollMs: 1000,
            onTick: progress(step),
          })
        ).counters;
        const secs = (Date.now() - started) / 1000;
        step(
          `backfill done in ${secs.toFixed(1)} s: fetched ${c.fetched}, published ${c.published}, deduplicated ${c.deduplicated}, dead-lettered ${c.deadLettered}`,
        );
        const decoder = createRecordDecoder({ registry, topicPrefix: prefix });
        const reports: VerifyReport[] = [];
        for (const resource of RESOURCES) {
          reports.push(
            await verifyResource({
              resource,
              brokers: settings.kafkaBrokers,
              topicPrefix: prefix,
              decoder,
              truth: sim.truth(resource),
              malformedIds: new Set(sim.malformed(resource).map((m) => m._id)),
            }),
          );
        }
        step('verified every topic against the simulator truth (consume, decode, compare)');
        printDemoSummary(reports, await rt.counters.get(runId), rt.client.stats(), c.published, secs);
        failed = reports.some((r) => !r.ok);
        console.log(failed ? 'RESULT: MISSING RECORDS' : 'RESULT: OK (missing 0)');
        const warehouseRows = new Map<ResourceName, number>();
        if (flags.warehouse === true) {
          const { landDemoInWarehouse } = await import('../../src/app/cli/commands/connect.js');
          if (!(await landDemoInWarehouse(prefix, settings.kafkaBrokers, warehouseRows))) failed = true;
        }
        if (flags.lakehouse === true) {
          const { landDemoInLakehouse } = await import('../../src/app/cli/lakehouse-sinks.js');
          const pgRows = flags.warehouse === true ? warehouseRows : undefined;
          if (!(await landDemoInLakehouse(prefix, settings.kafkaBrokers, pgRows))) failed = true;
        }
      } finally {
        await workers.close();
        await bull.quit();
        await rt.close();
        await sim.close();
      }
      if (failed === true) process.exitCode = 1;
    });
}

/** Checks the flags once; returns the concurrency. @throws ConfigError naming the flag. */
function checkDemoFlags(flags: DemoFlags): number {
  if (!['small', 'medium', 'large'].includes(flags.scale))
    throw new ConfigError(`--scale must be small, medium or large, got ${flags.scale}`);
  const concurrency = Number(flags.concurrency);
  if (!Number.isSafeInteger(concurrency) || concurrency < 1)
    throw new ConfigError(`--concurrency must be a positive integer, got ${flags.concurrency}`);
  return concurrency;
}

/** Registers every resource's schema and creates its topic and DLQ under the demo's prefix. */
async function prepareDemoTopics(
  settings: PipelineSettings,
  registry: ReturnType<typeof createRegistryClient>,
  step: (msg: string) => void,
): Promise<void> {
  const prefix = settings.topicPrefix;
  const files = await readSchemaFiles();
  const schemas = Object.fromEntries(Object.entries(files).map(([r, f]) => [r, f.schema])) as Record<
    ResourceName,
    AvroRecordSchema
  >;
  const subjects = await registerSchemas({ registry, topicPrefix: prefix, schemas });
  step(`schemas registered: ${subjects.map((s) => `${s.subject}#${s.id}`).join(', ')}`);
  await createTopics({ brokers: settings.kafkaBrokers, topicPrefix: prefix });
  step(`topics created: ${prefix}.<resource> and ${prefix}.<resource>.dlq`);
}

/** Plans and enqueues the backfill of every resource up to the simulator's now; returns its run id. */
async function runDemoBackfill(
  until: number,
  settings: PipelineSettings,
  rt: PipelineRuntime,
  bull: ReturnType<typeof connectRedis>,
  step: (msg: string) => void,
): Promise<string> {
  const planned = await startBackfill(
    { resources: [...RESOURCES], fullHistory: true, until },
    {
      connection: bull,
      prefix: settings.queuePrefix,
      planner: rt.planner,
      counters: rt.counters,
      users: rt.users,
      // Each transaction read once where the proof shows the per-country walks partition the rows.
      plan: { partition: 'countryId' },
    },
  );
  const proof = planned.run.partition;
  step(
    `backfill ${planned.run.runId}: ${planned.slices.length} slices (transactions: ` +
      (proof === undefined || proof.provenTypes.length === 0
        ? 'every user walked'
        : `per country for ${proof.provenTypes.length} proven type(s)${proof.unprovenTypes.length === 0 ? '' : `, per user for ${proof.unprovenTypes.join(' ')}`}`) +
      ')',
  );
  return planned.run.runId;
}

/** A progress line each time the slice counts change. */
function progress(
  step: (msg: string) => void,
): (s: { slices: { completed: number; pending: number } }) => void {
  let last = '';
  return (s) => {
    const line = `${s.slices.completed} slices done, ${s.slices.pending} pending`;
    if (line !== last) step(line);
    last = line;
  };
}

/** The summary table (one line per topic, then the total) and the upstream and throughput lines. */
function printDemoSummary(
  reports: VerifyReport[],
  counters: Awaited<ReturnType<PipelineRuntime['counters']['get']>>,
  cs: ReturnType<PipelineRuntime['client']['stats']>,
  published: number,
  secs: number,
): void {
  console.log('');
  console.log(
    `${pad('topic', 34, true)} ${pad('truth', 8)} ${pad('records', 8)} ${pad('missing', 8)} ${pad('dupl.', 6)} ${pad('unexp.', 6)} ${pad('dlq', 5)} ${pad('deduped', 8)}`,
  );
  for (const r of reports) {
    const byRes = counters.byResource[r.resource];
    console.log(
      `${pad(r.topic, 34, true)} ${pad(r.expected + r.dlq.expected, 8)} ${pad(r.consumed, 8)} ${pad(r.missing, 8)} ${pad(r.duplicates, 6)} ${pad(r.unexpected, 6)} ${pad(r.dlq.messages, 5)} ${pad(byRes?.deduplicated ?? 0, 8)}`,
    );
  }
  const total = reports.reduce((a, r) => a + r.consumed, 0);
  const missing = reports.reduce((a, r) => a + r.missing, 0);
  const dups = reports.reduce((a, r) => a + r.duplicates, 0);
  console.log(`${pad('total', 34, true)} ${pad('', 8)} ${pad(total, 8)} ${pad(missing, 8)} ${pad(dups, 6)}`);
  console.log('');
  console.log(
    `upstream: ${cs.httpRequests} HTTP requests carrying ${cs.procedures} procedure calls ` +
      `(${(cs.procedures / Math.max(1, cs.httpRequests)).toFixed(1)} per POST), ${cs.status429} answered 429`,
  );
  console.log(
    `${published} records in ${secs.toFixed(1)} s = ${(published / secs).toFixed(0)} records/s end to end (upstream -> Kafka ack)`,
  );
}
