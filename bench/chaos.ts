/**
 * Chaos run: a full-history backfill of every resource through several `gamedata worker` processes while the
 * infrastructure fails under it, then a check of every topic against the simulator's truth.
 *
 * - a PRIVATE stack (`scripts/stack.sh up --brokers N` with its own STACK_DIR and ports; the schema registry of the
 *   environment is reused when SCHEMA_REGISTRY_URL is set, since nothing here stops it), so the run may stop
 *   services without touching anyone else's;
 * - the simulator in process with upstream faults on (5xx, per-call 500s in batches, resets, hangs, broken JSON,
 *   malformed records) and periodic 429 storms (a tiny keyed limit for a few seconds);
 * - `workers` worker processes (the real CLI); every `killEveryMs` one of them, at random, is killed with SIGKILL and
 *   started again, `kills` times in all; after a third of the kills Redis is restarted (`stack.sh restart-redis`:
 *   SHUTDOWN, AOF reloaded); after half of them one broker of the cluster is stopped for `brokerDownMs` and started
 *   again (on a single-node stack: the broker is restarted);
 * - at the end: missing (must be 0), duplicates (0 under exactly-once delivery), unexpected, undecodable, DLQ
 *   messages against the malformed records the simulator served, and the wall time; every duplicated record traced
 *   to its copies (partition, offset, producer id and epoch, slice, fetchedAt, time, the chaos events between), and
 *   with `--java-oracle` the same topics read by Kafka's own Java consumer (read_committed), to tell a real
 *   duplicate from a reader's mistake. `--no-redis-restart`, `--no-broker-stop`, `--no-storms`, `--no-faults` vary one
 *   event at a time; `--latency-ms` stretches a small run, `--hold-request-ms` holds it back while it is ahead of the
 *   chaos (see ChaosOptions.holdRequestMs).
 *
 * Run (the long figure of docs/guarantees.md): `npx tsx bench/chaos.ts --scale medium --brokers 3 --workers 3
 * --kills 20 [--partition countryId] [--compiled]` (options below; `--compiled`: the workers run the built CLI, as
 * installed; `--keep-stack` leaves the private stack running, `--json` prints the
 * report as JSON).
 * test/e2e/chaos.test.ts runs the same code at a CI size.
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { appendFileSync, cpSync, existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startSimulator, type Simulator } from '../src/simulator/start-simulator.js';
import type { SimulatorOptions } from '../src/simulator/options.js';
import { createRegistryClient } from '../src/output/encoding/registry-client.js';
import { createRecordDecoder } from '../src/output/encoding/record-decoder.js';
import { readSchemaFiles } from '../src/output/encoding/schema-files.js';
import { deleteSubjects, registerSchemas } from '../src/output/encoding/schema-registration.js';
import type { AvroRecordSchema } from '../src/output/encoding/avro-schema.js';
import {
  clusterReplication,
  createTopics,
  deleteTopics,
  replicationForBrokers,
} from '../src/output/kafka/admin/create-topics.js';
import { createKafkaClient } from '../src/output/kafka/kafka-client.js';
import { resolveKafkaOptions } from '../src/output/kafka/kafka-options.js';
import type { ReadTopicStats } from '../src/output/kafka/readers/read-topic.js';
import { createPipelineRuntime } from '../src/app/index.js';
import { connectRedis, getRunStatus, startBackfill } from '../src/pipeline/queue/index.js';
import { QUEUE_NAMES } from '../src/pipeline/contract/queue-names.js';
import { Queue } from 'bullmq';
import { loadConfig, type PipelineSettings } from '../src/foundation/config/index.js';
import { RESOURCES, isResourceName, type ResourceName } from '../src/foundation/models/resources.js';
import { verifyResource } from '../src/app/verify/index.js';
import { versionKey } from '../src/app/verify/compare-records.js';
import { readTopic } from '../src/output/kafka/readers/read-topic.js';
import { dlqTopicName, topicName } from '../src/foundation/models/topic-names.js';
import type { RecordDecoder } from '../src/output/encoding/record-decoder.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const run = promisify(execFile);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export interface ChaosOptions {
  /** @default 'medium' */
  scale?: 'small' | 'medium' | 'large';
  /** Kafka nodes of the private stack (3: one is stopped and brought back; 1: the broker is restarted). @default 3 */
  brokers?: number;
  /** Resources backfilled (full history). @default every resource */
  resources?: ResourceName[];
  /** Worker processes. @default 3 */
  workers?: number;
  /** Slices in flight per worker process. @default 16 */
  concurrency?: number;
  /** The workers' `--max-concurrency` (the slot sizing's cap). @default the worker's own (512) */
  maxConcurrency?: number;
  /** SIGKILLs in all. @default 20 */
  kills?: number;
  /** Time between two kills. @default 15000 */
  killEveryMs?: number;
  /** How long the stopped broker stays down. @default 30000 */
  brokerDownMs?: number;
  /** Upstream faults (the simulator's `faults`); 429 storms come on top. */
  faults?: SimulatorOptions['faults'];
  /** Extra simulator options (latency, to stretch a small run). */
  simulator?: SimulatorOptions;
  /**
   * Full-history transactions planned per country from the partition proof (`countryId`, as `gamedata backfill`
   * does by default) or per user (`off`: more, smaller slices, so a small run outlasts its chaos). @default 'off'
   */
  partition?: 'off' | 'countryId';
  /**
   * Workers run the compiled CLI (`bin/gamedata.mjs` -> `dist/`, as installed; run `npm run build` first) instead
   * of the sources through tsx, whose start-up (transpiling on load) every restart after a SIGKILL pays again.
   * @default false
   */
  compiled?: boolean;
  /** A 429 storm (keyed limit 20 per 3 s) for `stormMs` every `stormEveryMs`. @default 60000 / 8000 */
  stormEveryMs?: number;
  stormMs?: number;
  /**
   * Base ports of the private stack (Kafka node i: kafkaPort + 10 (i - 1)). Below Linux's ephemeral range (32768-60999):
   * a fixed port in it can be taken by any outgoing connection of the box (a clean-clone CI of 3a0776c failed the
   * chaos e2e at `stack.sh up`: "Socket server failed to bind to 127.0.0.1:39102: Address already in use", the
   * other lane's tests holding hundreds of client sockets). @default 23092 / 23379 / 23081
   */
  kafkaPort?: number;
  redisPort?: number;
  registryPort?: number;
  /** The private stack's folder. @default <repo>/.stack/chaos */
  stackDir?: string;
  /** Leave the private stack running at the end. @default false */
  keepStack?: boolean;
  /** Leave the run's topics and Redis keys (to inspect the checkpoint topic after a run). @default false */
  keepData?: boolean;
  /**
   * The workers' `--liveness-timeout`: a SIGKILLed worker's slices go back to wait after this long without its
   * heartbeat instead of after their 8 s locks (0 = off, the locks only). @default 4000
   */
  livenessMs?: number;
  /** Append every line the workers print to this file. @default undefined */
  workerLogFile?: string;
  /**
   * Read every topic again with Kafka's own Java consumer (read_committed; needs java and the stack's Kafka jars) to
   * tell real duplicates from a reader's mistakes. @default false
   */
  javaOracle?: boolean;
  /** The run may take this long. @default 3 h */
  timeoutMs?: number;
  seed?: number;
  /**
   * Check every topic against the truth after the run (off: `--no-verify`, for timing the run alone while trying a
   * change; the report's record counts are then 0 and `verified` false). @default true
   */
  verify?: boolean;
  /** Restart Redis after a third of the kills (off: to find which event causes a defect). @default true */
  redisRestart?: boolean;
  /** Stop (or restart) a broker after half of the kills. @default true */
  brokerStop?: boolean;
  /** 429 storms. @default true */
  storms?: boolean;
  /**
   * Keep the run going until the chaos is over, on a box of any speed: while the run's share of slices done is ahead of
   * the chaos (more than 0.1 + 0.8 x kills done / kills), the simulator answers each request after this long instead of
   * its own latency; once the last kill has landed, its own latency again. The report says how long the run was held.
   * The CI test sets it: a run timed to outlast the chaos ended before its last kills in three clean-clone CIs (the
   * box's speed moves by 2x with its load). @default undefined (off)
   */
  holdRequestMs?: number;
  log?: (line: string) => void;
}

export interface ChaosEvent {
  at: number;
  what: string;
  /** The run was still going when the event happened. */
  midRun: boolean;
}

export interface ChaosReport {
  scale: string;
  /** Whether the topics were checked against the truth (the counts below are 0 when not). */
  verified: boolean;
  resources: string[];
  brokers: number;
  workers: number;
  concurrency: number;
  delivery: string;
  /** Records of the truth (every version of every resource up to the run's end). */
  records: number;
  published: number;
  kills: number;
  /** Worker exits that were not our kills (restarted like the killed ones). */
  unplannedExits: number;
  /** Slices the workers' liveness sweeps moved back to wait (a dead worker's, before their locks expired). */
  takenOver: number;
  redisRestarts: number;
  brokerStops: number;
  missing: number;
  duplicates: number;
  unexpected: number;
  undecodable: number;
  dlq: { messages: number; malformed: number; found: number };
  perResource: Record<
    string,
    {
      expected: number;
      missing: number;
      /** Up to 10 `_id`s of the missing records (to look them up on the kept topics with `--keep-data`). */
      missingSample: string[];
      duplicates: number;
      dlq: number;
      malformed: number;
      /** The verification reader's group joins again and messages it fetched again (skipped). */
      reader: ReadTopicStats;
    }
  >;
  wallSeconds: number;
  runSeconds: number;
  /** Seconds the run was slowed to keep it going until the chaos was over (`holdRequestMs`; 0 when off). */
  heldSeconds: number;
  events: ChaosEvent[];
  /**
   * Records a Java read_committed consumer (Kafka's own client, kafka-tools) reads more than once, and dead letters
   * it holds for the malformed records: an oracle independent of kafkajs. Undefined when java is not available.
   */
  javaOracle?:
    | {
        duplicates: number;
        dlqFound: number;
        committedCopiesOfKafkajsDuplicates: number;
        javaOnly: number;
        kafkajsOnly: number;
      }
    | undefined;
  /** Every duplicated record (as kafkajs reads it) with its copies: where, by which producer, when, from which slice. */
  duplicateTraces: DuplicateTrace[];
  /** Malformed records whose `_id` no DLQ message carries (keyless dead letters not matched). */
  dlqMissingIds: Record<string, string[]>;
}

export interface DuplicateCopy {
  partition: number;
  offset: string;
  /** The producer id of the record's batch (one per transactional.id, i.e. per slice, and epoch-independent). */
  producerId: string;
  producerEpoch: number;
  sliceId: string;
  fetchedAt: string;
  /** Seconds after the run started that the copy was produced (record timestamp). */
  at: number;
  /** A Java read_committed consumer reads this copy (undefined: no java). */
  javaCommitted?: boolean | undefined;
}

export interface DuplicateTrace {
  resource: string;
  key: string;
  copies: DuplicateCopy[];
  /** The chaos events between the first and the last copy (seconds after the run started). */
  between: string[];
}

interface StackEnv {
  env: NodeJS.ProcessEnv;
  kafkaBrokers: string;
  schemaRegistryUrl: string;
  redisUrl: string;
}

async function stack(args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  const { stdout } = await run('bash', [`${ROOT}scripts/stack.sh`, ...args], {
    env,
    cwd: ROOT,
    maxBuffer: 16 << 20,
  });
  return stdout;
}

/** Waits (up to 2 minutes) until the cluster lists `brokers` brokers. */
async function waitForBrokers(kafkaBrokers: string[], brokers: number): Promise<void> {
  const until = Date.now() + 120_000;
  for (;;) {
    const seen = await clusterReplication({ brokers: kafkaBrokers }).then(
      (c) => c.brokers,
      () => 0,
    );
    if (seen >= brokers) return;
    if (Date.now() > until) throw new Error(`the private cluster lists ${seen} of its ${brokers} brokers`);
    await sleep(1000);
  }
}

/**
 * Deletes what earlier runs left on the private stack (a run that failed or was stopped keeps its topics and keys):
 * every partition the cluster holds is in every follower's fetch session, so six runs' leftover topics made each
 * replica fetch walk ~240 partitions instead of ~40 and the brokers the box's largest CPU user.
 */
async function removeEarlierRuns(
  kafkaBrokers: string[],
  redisUrl: string,
  log: (line: string) => void,
): Promise<void> {
  const admin = createKafkaClient(resolveKafkaOptions({ brokers: kafkaBrokers })).admin();
  await admin.connect();
  try {
    const topics = (await admin.listTopics()).filter((t) => t.startsWith('chaos-'));
    if (topics.length > 0) {
      await admin.deleteTopics({ topics, timeout: 60_000 });
      log(`deleted ${topics.length} topics of earlier runs`);
    }
  } finally {
    await admin.disconnect();
  }
  const redis = connectRedis(redisUrl);
  try {
    const removed = (await deleteKeys(redis, 'chaosq-')) + (await deleteKeys(redis, 'chaosr-'));
    if (removed > 0) log(`deleted ${removed} Redis keys of earlier runs`);
  } finally {
    await redis.quit();
  }
}

/** Deletes every Redis key that starts with `prefix` (SCAN, not KEYS: a long-lived private Redis may hold many). */
async function deleteKeys(redis: ReturnType<typeof connectRedis>, prefix: string): Promise<number> {
  let removed = 0;
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) removed += await redis.del(...keys);
  } while (cursor !== '0');
  return removed;
}

/** Starts (or reuses) the private stack; the registry of the environment is reused when there is one. */
async function privateStack(
  o: Required<Pick<ChaosOptions, 'brokers' | 'kafkaPort' | 'redisPort' | 'registryPort' | 'stackDir'>>,
): Promise<StackEnv> {
  const shared = process.env['SCHEMA_REGISTRY_URL'];
  const registryPort = shared === undefined || shared === '' ? o.registryPort : Number(new URL(shared).port);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    STACK_DIR: o.stackDir,
    STACK_KAFKA_PORT: String(o.kafkaPort),
    STACK_KAFKA_CONTROLLER_PORT: String(o.kafkaPort + 1),
    STACK_REDIS_PORT: String(o.redisPort),
    STACK_REGISTRY_PORT: String(registryPort),
    STACK_REGISTRY_MGMT_PORT: String(o.registryPort + 919),
  };
  // The Kafka jars of the main stack, when it has them, spare a Maven resolution.
  const libs = `${ROOT}.stack/kafka/libs`;
  if (existsSync(libs) && !existsSync(`${o.stackDir}/kafka/libs`))
    cpSync(libs, `${o.stackDir}/kafka/libs`, { recursive: true });
  // A failed `up` (a broker that could not bind its port) leaves the nodes it did start running: stop them.
  const out = await stack(['up', '--brokers', String(o.brokers)], env).catch(async (error: unknown) => {
    await stack(['down'], env).catch(() => undefined);
    throw error;
  });
  const get = (name: string): string => {
    const m = new RegExp(`^export ${name}=(.*)$`, 'm').exec(out);
    if (m?.[1] === undefined) throw new Error(`scripts/stack.sh up printed no ${name}`);
    return m[1];
  };
  return {
    env,
    kafkaBrokers: get('KAFKA_BROKERS'),
    schemaRegistryUrl: get('SCHEMA_REGISTRY_URL'),
    redisUrl: get('REDIS_URL'),
  };
}

export async function runChaos(options: ChaosOptions = {}): Promise<ChaosReport> {
  const o = {
    scale: 'medium' as const,
    resources: [...RESOURCES],
    brokers: 3,
    workers: 3,
    concurrency: 16,
    kills: 20,
    killEveryMs: 15_000,
    brokerDownMs: 30_000,
    stormEveryMs: 60_000,
    stormMs: 8_000,
    kafkaPort: 23092,
    redisPort: 23379,
    registryPort: 23081,
    stackDir: `${ROOT}.stack/chaos`,
    keepStack: false,
    keepData: false,
    javaOracle: false,
    verify: true,
    timeoutMs: 3 * 3_600_000,
    seed: 7,
    redisRestart: true,
    brokerStop: true,
    storms: true,
    log: (line: string) => process.stderr.write(`[chaos] ${line}\n`),
    faults: {
      seed: 11,
      http5xx: 0.01,
      batch5xx: 0.01,
      reset: 0.005,
      hang: 0.002,
      badJson: 0.005,
      malformed: 0.002,
    },
    ...options,
  };
  const t0 = Date.now();
  const log = o.log;
  const events: ChaosEvent[] = [];
  log(
    `private stack: ${o.brokers} broker(s) from port ${o.kafkaPort}, redis ${o.redisPort}, dir ${o.stackDir}`,
  );
  const svc = await privateStack(o);
  try {
    log(
      `stack up in ${((Date.now() - t0) / 1000).toFixed(0)} s: kafka ${svc.kafkaBrokers}, redis ${svc.redisUrl}`,
    );

    const sim: Simulator = await startSimulator({
      scale: o.scale,
      seed: o.seed,
      port: 0,
      rateLimit: { enabled: true, keyed: 1_000_000, windowMs: 60_000 },
      ...o.simulator,
      ...(o.faults === undefined ? {} : { faults: o.faults }),
    });
    const id = `${Date.now().toString(36)}`;
    const settings: PipelineSettings = {
      apiUrl: sim.url,
      apiKey: 'chaos-key',
      kafkaBrokers: svc.kafkaBrokers.split(','),
      schemaRegistryUrl: svc.schemaRegistryUrl,
      redisUrl: svc.redisUrl,
      topicPrefix: `chaos-${id}`,
      queuePrefix: `chaosq-${id}`,
      redisPrefix: `chaosr-${id}`,
    };
    const registry = createRegistryClient({ url: settings.schemaRegistryUrl });
    const files = await readSchemaFiles();
    const schemas = Object.fromEntries(Object.entries(files).map(([r, f]) => [r, f.schema])) as Record<
      ResourceName,
      AvroRecordSchema
    >;
    await registerSchemas({ registry, topicPrefix: settings.topicPrefix, schemas });
    await removeEarlierRuns(settings.kafkaBrokers, svc.redisUrl, log);
    await waitForBrokers(settings.kafkaBrokers, o.brokers);
    // Replicated across the whole cluster, said explicitly: a broker still registering when the topics are made
    // would otherwise give them the replication of the brokers that answered (2 of 3 seen once, and with the
    // stack's min.insync.replicas=2 a broker stop then halted every write to them).
    await createTopics({
      brokers: settings.kafkaBrokers,
      topicPrefix: settings.topicPrefix,
      partitions: 3,
      replicationFactor: replicationForBrokers(o.brokers),
    });
    const workerEnv: NodeJS.ProcessEnv = {
      ...process.env,
      GAMEDATA_API_URL: settings.apiUrl,
      GAMEDATA_API_KEY: settings.apiKey,
      KAFKA_BROKERS: svc.kafkaBrokers,
      SCHEMA_REGISTRY_URL: settings.schemaRegistryUrl,
      REDIS_URL: settings.redisUrl,
      GAMEDATA_TOPIC_PREFIX: settings.topicPrefix,
      GAMEDATA_QUEUE_PREFIX: settings.queuePrefix,
      GAMEDATA_REDIS_PREFIX: settings.redisPrefix,
      GAMEDATA_METRICS_PORT: 'off',
      GAMEDATA_LOG_LEVEL: 'warn',
    };

    // ---- workers
    interface Slot {
      child: ChildProcess;
      killed: boolean;
    }
    const slots: (Slot | undefined)[] = [];
    let stopping = false;
    let unplannedExits = 0;
    let takenOver = 0;
    const workerLog: string[] = [];
    const start = (i: number): void => {
      const child = spawn(
        process.execPath,
        [
          ...(o.compiled === true ? ['bin/gamedata.mjs'] : ['--import', 'tsx', 'src/app/cli/main.ts']),
          'worker',
          '--concurrency',
          String(o.concurrency),
          ...(o.maxConcurrency === undefined ? [] : ['--max-concurrency', String(o.maxConcurrency)]),
          '--quiet',
          '--lock-duration',
          '8000',
          '--stalled-interval',
          '2000',
          '--liveness-timeout',
          String(o.livenessMs ?? 4000),
        ],
        { cwd: ROOT, env: workerEnv, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      const slot: Slot = { child, killed: false };
      slots[i] = slot;
      const keep = (b: Buffer): void => {
        if (o.workerLogFile !== undefined)
          appendFileSync(
            o.workerLogFile,
            `${new Date().toISOString()} [w${i} pid ${child.pid}] ${b.toString()}`,
          );
        for (const m of b.toString().matchAll(/took over (\d+) slices? of/g)) takenOver += Number(m[1]);
        workerLog.push(`[w${i}] ${b.toString()}`);
        if (workerLog.length > 400) workerLog.splice(0, 200);
      };
      child.stdout?.on('data', keep);
      child.stderr?.on('data', keep);
      child.once('exit', (code, signal) => {
        if (stopping) return;
        if (!slot.killed) {
          unplannedExits += 1;
          log(`worker ${i} exited on its own (${code ?? signal}); starting it again`);
          setTimeout(() => !stopping && start(i), 1000);
        }
      });
    };
    for (let i = 0; i < o.workers; i++) start(i);

    // ---- the run
    const planner = await createPipelineRuntime(settings, { kafka: false });
    const control = connectRedis(settings.redisUrl);
    // Redis restarts on purpose: its connections reconnect by themselves, the errors meanwhile are expected.
    control.on('error', () => undefined);
    planner.redis.on('error', () => undefined);
    // The chaos starts with the backfill, not after its planning: a per-user plan starts its walks while it still lists
    // the users (issue 32), so at scale small on a busy CI box most of the run was done by the time planning returned
    // (a run of 10 s after planning, one kill of four landed).
    const runT0 = Date.now();
    const plannedP = startBackfill(
      { resources: o.resources, fullHistory: true, until: sim.now() },
      {
        connection: control,
        prefix: settings.queuePrefix,
        planner: planner.planner,
        counters: planner.counters,
        users: planner.users,
        plan: { partition: o.partition ?? 'off' },
      },
    );
    plannedP.catch(() => undefined); // awaited below (by the watcher, and before Redis restarts)
    let runId = '';
    let done = false;
    // The hold (`holdRequestMs`): the chaos's progress, and since when the run has been slowed.
    let chaosShare = 0;
    let chaosOver = false;
    let heldSince: number | undefined;
    let heldMs = 0;
    const baseRequestMs = sim.settings().latency.requestMs;
    const hold = (on: boolean): void => {
      if (o.holdRequestMs === undefined || on === (heldSince !== undefined)) return;
      sim.configure({ latency: { requestMs: on ? o.holdRequestMs : baseRequestMs } });
      log(
        `${Math.round((Date.now() - runT0) / 1000)} s: ${on ? `the run is ahead of the chaos: ${o.holdRequestMs} ms a request` : `${baseRequestMs} ms a request again`}`,
      );
      if (on) heldSince = Date.now();
      else {
        heldMs += Date.now() - (heldSince ?? Date.now());
        heldSince = undefined;
      }
    };
    let failed: string | undefined;
    const bull = { connection: control, prefix: settings.queuePrefix };
    // The last slices of a run (a long tail reads differently when they wait out a backoff or run on).
    const slicesQueue = new Queue(QUEUE_NAMES.slices, bull);
    slicesQueue.on('error', () => undefined);
    const pendingSlices = async (run: string): Promise<string> => {
      const jobs = await slicesQueue
        .getJobs(['active', 'waiting', 'delayed', 'prioritized', 'waiting-children'])
        .catch(() => []);
      return jobs
        .filter((j) => (j.data as { runId?: string } | undefined)?.runId === run)
        .map(
          (j) =>
            `${j.id?.slice(-24) ?? '?'} ${j.attemptsMade} attempt(s), stalled ${j.stalledCounter}${
              j.failedReason ? `, last error: ${j.failedReason.slice(0, 120)}` : ''
            }`,
        )
        .join('; ');
    };
    const watcher = (async () => {
      const planned = await plannedP.catch((error: unknown) => {
        done = true; // the chaos stops; the error is thrown where the watcher is awaited
        throw error;
      });
      runId = planned.run.runId;
      log(
        `run ${runId}: ${planned.slices.length} slices planned in ${Math.round((Date.now() - runT0) / 1000)} s`,
      );
      let shownAt = 0;
      while (!done && Date.now() - runT0 < o.timeoutMs) {
        const s = await getRunStatus(runId, bull).catch(() => undefined);
        // The run's shape over time (a long tail of a few slices reads differently from a slow start).
        if (s !== undefined && Date.now() - shownAt >= 10_000) {
          shownAt = Date.now();
          log(
            `${Math.round((shownAt - runT0) / 1000)} s: ${s.slices.completed} slices done, ${s.slices.pending} pending${
              s.slices.pending > 0 && s.slices.pending <= 10 ? `: ${await pendingSlices(runId)}` : ''
            }`,
          );
        }
        if (s !== undefined && !chaosOver) {
          const share = s.slices.completed / Math.max(1, s.slices.completed + s.slices.pending);
          hold(share > 0.1 + 0.8 * chaosShare);
        }
        if (s?.state === 'completed') done = true;
        else if (s?.state === 'failed') {
          failed = s.failedReason ?? 'failed';
          // The run's reason names the child that failed; its own reason says why.
          const child = /child \S*?:gamedata-slices:(\S+) failed/.exec(failed)?.[1];
          const job =
            child === undefined ? undefined : await slicesQueue.getJob(child).catch(() => undefined);
          if (job)
            failed += ` (the slice: ${job.failedReason ?? '?'}; ${job.attemptsMade} attempt(s), stalled ${job.stalledCounter})`;
          done = true;
        }
        if (!done) await sleep(1000);
      }
    })();
    const event = (what: string): void => {
      events.push({ at: Math.round((Date.now() - runT0) / 1000), what, midRun: !done });
      log(`${Math.round((Date.now() - runT0) / 1000)} s: ${what}${done ? ' (after the run ended)' : ''}`);
    };

    // ---- 429 storms
    const storms = (async () => {
      while (!done && o.storms) {
        await sleep(o.stormEveryMs);
        if (done) break;
        sim.configure({ rateLimit: { keyed: 20, windowMs: 3000 } });
        await sleep(o.stormMs);
        sim.configure({ rateLimit: { keyed: 1_000_000, windowMs: 60_000 } });
      }
    })();

    // ---- chaos
    let kills = 0;
    let redisRestarts = 0;
    let brokerStops = 0;
    const redisAt = Math.ceil(o.kills / 3);
    const brokerAt = Math.ceil(o.kills / 2);
    let brokerBack: Promise<void> | undefined;
    const rnd = (
      (seed) => () =>
        (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff
    )(o.seed);
    while (kills < o.kills && !done) {
      await sleep(o.killEveryMs);
      if (done) break;
      const i = Math.floor(rnd() * o.workers);
      const slot = slots[i];
      if (slot !== undefined) {
        slot.killed = true;
        slot.child.kill('SIGKILL');
        kills += 1;
        chaosShare = kills / o.kills;
        event(`SIGKILL worker ${i} (kill ${kills}/${o.kills})`);
        setTimeout(() => !stopping && start(i), 1000);
      }
      if (kills === redisAt && o.redisRestart) {
        // Not while planning: the planner (this process) enqueues the run's slices through Redis.
        await plannedP;
        event('restarting Redis');
        await stack(['restart-redis'], svc.env);
        redisRestarts += 1;
        event('Redis back');
      }
      if (kills === brokerAt && o.brokerStop) {
        brokerStops += 1;
        if (o.brokers > 1) {
          event(`stopping broker 2 of ${o.brokers} for ${o.brokerDownMs / 1000} s`);
          await stack(['stop-broker', '2'], svc.env);
          event('broker 2 stopped');
          brokerBack = (async () => {
            await sleep(o.brokerDownMs);
            await stack(['start-broker', '2'], svc.env);
            event('broker 2 back');
          })();
        } else {
          event('restarting the broker');
          await stack(['restart-broker', '1'], svc.env);
          event('broker back');
        }
      }
    }
    chaosOver = true;
    hold(false);
    await brokerBack;
    await watcher;
    await slicesQueue.close();
    const runSeconds = (Date.now() - runT0) / 1000;
    stopping = true;
    await Promise.all(
      slots.map(async (s) => {
        if (s === undefined || s.child.exitCode !== null || s.child.signalCode !== null) return;
        const exited = new Promise((r) => s.child.once('exit', r));
        s.child.kill('SIGTERM');
        await Promise.race([exited, sleep(60_000).then(() => s.child.kill('SIGKILL'))]);
      }),
    );
    await storms;
    if (failed !== undefined || !done) {
      log(workerLog.slice(-40).join(''));
      throw new Error(
        `run ${runId} ${failed === undefined ? 'did not finish in time' : `failed: ${failed}`}`,
      );
    }
    log(
      `run completed in ${runSeconds.toFixed(0)} s${o.verify ? '; verifying every topic against the truth' : ' (not verified: --no-verify)'}`,
    );

    // ---- verify
    const decoder = createRecordDecoder({ registry, topicPrefix: settings.topicPrefix });
    const perResource: ChaosReport['perResource'] = {};
    const duplicateTraces: DuplicateTrace[] = [];
    const dlqMissingIds: Record<string, string[]> = {};
    let javaOracle: ChaosReport['javaOracle'];
    const totals = {
      records: 0,
      missing: 0,
      duplicates: 0,
      unexpected: 0,
      undecodable: 0,
      dlq: 0,
      malformed: 0,
      found: 0,
    };
    for (const resource of o.verify ? o.resources : []) {
      const verifyT0 = Date.now();
      const r = await verifyResource({
        resource,
        brokers: settings.kafkaBrokers,
        topicPrefix: settings.topicPrefix,
        decoder,
        truth: sim.truth(resource),
        malformedIds: new Set(sim.malformed(resource).map((m) => m._id)),
      });
      perResource[resource] = {
        expected: r.expected,
        missing: r.missing,
        missingSample: r.missingSample,
        duplicates: r.duplicates,
        dlq: r.dlq.messages,
        malformed: r.dlq.expected,
        reader: r.reader,
      };
      totals.records += r.expected;
      totals.missing += r.missing;
      totals.duplicates += r.duplicates;
      totals.unexpected += r.unexpected;
      totals.undecodable += r.undecodable;
      totals.dlq += r.dlq.messages;
      totals.malformed += r.dlq.expected;
      totals.found += r.dlq.found;
      const java = o.javaOracle
        ? await javaReadCommitted(svc.kafkaBrokers, topicName(settings.topicPrefix, resource))
        : undefined;
      const t = await traceDuplicates({
        resource,
        brokers: settings.kafkaBrokers,
        topicPrefix: settings.topicPrefix,
        decoder,
        runT0,
        events,
        java,
      });
      // One by one: a spread of 100 k traces overflows the call stack.
      for (const trace of t.traces) duplicateTraces.push(trace);
      log(`verified ${resource} in ${((Date.now() - verifyT0) / 1000).toFixed(1)} s`);
      if (java !== undefined) {
        javaOracle ??= {
          duplicates: 0,
          dlqFound: 0,
          committedCopiesOfKafkajsDuplicates: 0,
          javaOnly: 0,
          kafkajsOnly: 0,
        };
        javaOracle.duplicates += t.javaDuplicates;
        javaOracle.committedCopiesOfKafkajsDuplicates += t.committedCopies;
        javaOracle.javaOnly += t.javaOnly;
        javaOracle.kafkajsOnly += t.kafkajsOnly;
      }
      const dlqTopic = dlqTopicName(topicName(settings.topicPrefix, resource));
      const dlqKeys = new Set<string>();
      await readTopic({ brokers: settings.kafkaBrokers, topic: dlqTopic }, (m) => {
        if (m.key !== null) dlqKeys.add(m.key.toString());
      });
      const malformedIds = sim.malformed(resource).map((m) => m._id);
      const notThere = malformedIds.filter((id) => !dlqKeys.has(id));
      if (notThere.length > 0) dlqMissingIds[resource] = notThere;
      const javaDlq = o.javaOracle ? await javaReadCommitted(svc.kafkaBrokers, dlqTopic) : undefined;
      if (javaDlq !== undefined && javaOracle !== undefined) {
        const keys = new Set(javaDlq.values());
        javaOracle.dlqFound += malformedIds.filter((id) => keys.has(id)).length;
      }
    }
    const counters = await planner.counters.get(runId);
    // The private stack keeps its data between runs: leave nothing of this one behind.
    if (!o.keepData) {
      for (const p of [settings.queuePrefix, settings.redisPrefix]) await deleteKeys(control, p);
      // Not fatal (the next run deletes what is left), but said: leftover topics slow every later run.
      await deleteTopics({ brokers: settings.kafkaBrokers, topicPrefix: settings.topicPrefix }).catch(
        (e: unknown) => log(`deleting the run's topics: ${String(e)}`),
      );
    } else log(`kept topics ${settings.topicPrefix}.* and Redis keys ${settings.redisPrefix}*`);
    await control.quit();
    await planner.close();
    await sim.close();
    await deleteSubjects(registry, settings.topicPrefix).catch(() => undefined);
    log(`cleaned up ${Math.round((Date.now() - t0) / 1000)} s after the start`);
    if (!o.keepStack) await stack(['down'], svc.env).catch((e: unknown) => log(`stack down: ${String(e)}`));
    return {
      scale: o.scale,
      verified: o.verify,
      resources: o.resources,
      brokers: o.brokers,
      workers: o.workers,
      concurrency: o.concurrency,
      delivery: loadConfig({ env: workerEnv }).delivery,
      records: totals.records,
      published: counters.published,
      kills,
      unplannedExits,
      takenOver,
      redisRestarts,
      brokerStops,
      missing: totals.missing,
      duplicates: totals.duplicates,
      unexpected: totals.unexpected,
      undecodable: totals.undecodable,
      dlq: { messages: totals.dlq, malformed: totals.malformed, found: totals.found },
      perResource,
      wallSeconds: Math.round((Date.now() - t0) / 1000),
      runSeconds: Math.round(runSeconds),
      heldSeconds: Math.round(heldMs / 1000),
      events,
      javaOracle,
      duplicateTraces,
      dlqMissingIds,
    };
  } catch (error) {
    // A failed run (a stall, a verification error) stops its private stack too: nothing is left running after it.
    if (!o.keepStack) await stack(['down'], svc.env).catch(() => undefined);
    throw error;
  }
}

/** The `partition:offset -> key` of every record a Java read_committed consumer reads (undefined without java). */
async function javaReadCommitted(brokers: string, topic: string): Promise<Map<string, string> | undefined> {
  const libs = `${ROOT}.stack/kafka/libs/*`;
  try {
    const { stdout } = await run(
      'java',
      [
        '-Xmx256m',
        '-XX:+UseSerialGC',
        '-cp',
        libs,
        'org.apache.kafka.tools.consumer.ConsoleConsumer',
        '--bootstrap-server',
        brokers,
        '--topic',
        topic,
        '--from-beginning',
        '--isolation-level',
        'read_committed',
        '--timeout-ms',
        '15000',
        '--property',
        'print.partition=true',
        '--property',
        'print.offset=true',
        '--property',
        'print.key=true',
        '--property',
        'print.value=false',
      ],
      { cwd: ROOT, maxBuffer: 512 << 20 },
    ).catch((e: { stdout?: string }) => ({ stdout: e.stdout ?? '' })); // exits 1 on its timeout: that is the end
    const out = new Map<string, string>();
    for (const line of stdout.split('\n')) {
      const m = /Partition:(\d+)\s+Offset:(\d+)\s+(\S*)/.exec(line);
      if (m !== null) out.set(`${m[1]}:${m[2]}`, m[3] ?? '');
    }
    return out;
  } catch {
    return undefined;
  }
}

/**
 * Every record of `resource` a kafkajs read_committed consumer reads more than once, with its copies traced to
 * partition, offset, producer, slice and time, and whether Kafka's own (Java) client reads each copy.
 */
async function traceDuplicates(o: {
  resource: ResourceName;
  brokers: string[];
  topicPrefix: string;
  decoder: RecordDecoder;
  runT0: number;
  events: ChaosEvent[];
  java: Map<string, string> | undefined;
}): Promise<{
  traces: DuplicateTrace[];
  javaDuplicates: number;
  committedCopies: number;
  /** Records the Java client reads and kafkajs does not (committed records the kafkajs filter dropped). */
  javaOnly: number;
  /** Records kafkajs reads and the Java client does not (records of aborted transactions kafkajs let through). */
  kafkajsOnly: number;
}> {
  const byKey = new Map<string, DuplicateCopy[]>();
  const keyOf = new Map<string, string>(); // partition:offset -> version key
  await readTopic({ brokers: o.brokers, topic: topicName(o.topicPrefix, o.resource) }, async (m) => {
    if (m.value === null) return;
    let key: string;
    try {
      key = versionKey(o.resource, (await o.decoder.decode(o.resource, m.value)).record);
    } catch {
      return;
    }
    keyOf.set(`${m.partition}:${m.offset}`, key);
    const copy: DuplicateCopy = {
      partition: m.partition,
      offset: m.offset,
      producerId: m.producerId,
      producerEpoch: m.producerEpoch,
      sliceId: m.headers['gamedata.slice.id'] ?? m.headers['gamedata.sliceId'] ?? JSON.stringify(m.headers),
      fetchedAt: m.headers['gamedata.fetched.at'] ?? m.headers['gamedata.fetchedAt'] ?? '',
      at: Math.round((Number(m.timestamp) - o.runT0) / 100) / 10,
      ...(o.java === undefined ? {} : { javaCommitted: o.java.has(`${m.partition}:${m.offset}`) }),
    };
    const copies = byKey.get(key);
    if (copies === undefined) byKey.set(key, [copy]);
    else copies.push(copy);
  });
  const traces: DuplicateTrace[] = [];
  let committedCopies = 0;
  for (const [key, copies] of byKey) {
    if (copies.length < 2) continue;
    committedCopies += copies.filter((c) => c.javaCommitted === true).length;
    const first = Math.min(...copies.map((c) => c.at));
    const last = Math.max(...copies.map((c) => c.at));
    traces.push({
      resource: o.resource,
      key,
      copies,
      between: o.events.filter((e) => e.at >= first - 1 && e.at <= last + 1).map((e) => `${e.at}s ${e.what}`),
    });
  }
  // Duplicates as the Java client reads them (keys of the copies it reads; for changing resources the version key
  // comes from the kafkajs read of the same offset).
  let javaDuplicates = 0;
  let javaOnly = 0;
  if (o.java !== undefined) {
    const counts = new Map<string, number>();
    for (const [po, k] of o.java) {
      const key = keyOf.get(po) ?? k;
      if (!keyOf.has(po)) javaOnly += 1;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    for (const n of counts.values()) if (n > 1) javaDuplicates += n - 1;
  }
  const kafkajsOnly = o.java === undefined ? 0 : [...keyOf.keys()].filter((po) => !o.java!.has(po)).length;
  return { traces, javaDuplicates, committedCopies, javaOnly, kafkajsOnly };
}

export function formatChaosReport(r: ChaosReport): string {
  return [
    `chaos (${r.scale}: ${r.resources.join(',')}; ${r.brokers} broker(s), ${r.workers} workers x ${r.concurrency}, delivery ${r.delivery}): ` +
      `${r.verified ? `${r.records} records in the truth` : 'NOT VERIFIED (--no-verify)'}, ${r.published} published; ${r.kills} SIGKILLs (+${r.unplannedExits} unplanned exits, ${r.takenOver} slices taken over by liveness), ` +
      `${r.redisRestarts} Redis restart(s), ${r.brokerStops} broker stop(s); missing ${r.missing}, duplicates ${r.duplicates}, ` +
      `unexpected ${r.unexpected}, undecodable ${r.undecodable}; DLQ ${r.dlq.messages} messages for ${r.dlq.malformed} malformed records (${r.dlq.found} found); ` +
      `run ${r.runSeconds} s${r.heldSeconds > 0 ? ` (${r.heldSeconds} s of it slowed to outlast the chaos)` : ''}, wall ${r.wallSeconds} s`,
    `events: ${r.events.map((e) => `${e.at}s ${e.what}${e.midRun ? '' : ' (after the end)'}`).join('; ')}`,
    `per resource: ${JSON.stringify(r.perResource)}`,
    ...(r.javaOracle === undefined
      ? []
      : [
          `java read_committed oracle: duplicates ${r.javaOracle.duplicates}, DLQ found ${r.javaOracle.dlqFound}; ` +
            `committed copies of the kafkajs duplicates ${r.javaOracle.committedCopiesOfKafkajsDuplicates}; ` +
            `read by java only ${r.javaOracle.javaOnly}, by kafkajs only ${r.javaOracle.kafkajsOnly}`,
        ]),
    ...(Object.keys(r.dlqMissingIds).length === 0
      ? []
      : [
          `malformed ids with no keyed dead letter (a record malformed by losing its _id is dead-lettered without a key; those count by number): ${JSON.stringify(r.dlqMissingIds)}`,
        ]),
    ...r.duplicateTraces
      .slice(0, 40)
      .map(
        (d) =>
          `dup ${d.resource} ${d.key}: ${d.copies
            .map(
              (c) =>
                `[p${c.partition}@${c.offset} pid ${c.producerId}/${c.producerEpoch} ${c.at}s slice ${c.sliceId}${c.javaCommitted === undefined ? '' : c.javaCommitted ? ' java:yes' : ' java:NO'}]`,
            )
            .join(' ')}${d.between.length === 0 ? '' : ` | between: ${d.between.join('; ')}`}`,
      ),
  ].join('\n');
}

function flag(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? undefined : process.argv[i + 1];
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const num = (name: string): number | undefined =>
    flag(name) === undefined ? undefined : Number(flag(name));
  const opts: ChaosOptions = {
    ...(flag('scale') === undefined ? {} : { scale: flag('scale') as 'small' | 'medium' | 'large' }),
    ...(num('brokers') === undefined ? {} : { brokers: num('brokers') as number }),
    ...(num('workers') === undefined ? {} : { workers: num('workers') as number }),
    ...(num('concurrency') === undefined ? {} : { concurrency: num('concurrency') as number }),
    ...(num('max-concurrency') === undefined ? {} : { maxConcurrency: num('max-concurrency') as number }),
    ...(num('kills') === undefined ? {} : { kills: num('kills') as number }),
    ...(num('kill-every-ms') === undefined ? {} : { killEveryMs: num('kill-every-ms') as number }),
    ...(num('broker-down-ms') === undefined ? {} : { brokerDownMs: num('broker-down-ms') as number }),
    ...(flag('resources') === undefined
      ? {}
      : { resources: (flag('resources') ?? '').split(',').filter(isResourceName) }),
    ...(num('kafka-port') === undefined ? {} : { kafkaPort: num('kafka-port') as number }),
    ...(num('redis-port') === undefined ? {} : { redisPort: num('redis-port') as number }),
    ...(flag('stack-dir') === undefined ? {} : { stackDir: flag('stack-dir') as string }),
    ...(flag('partition') === undefined ? {} : { partition: flag('partition') as 'off' | 'countryId' }),
    ...(process.argv.includes('--compiled') ? { compiled: true } : {}),
    ...(process.argv.includes('--keep-stack') ? { keepStack: true } : {}),
    ...(process.argv.includes('--keep-data') ? { keepData: true } : {}),
    ...(process.argv.includes('--java-oracle') ? { javaOracle: true } : {}),
    ...(flag('worker-log') === undefined ? {} : { workerLogFile: flag('worker-log') as string }),
    ...(num('liveness-ms') === undefined ? {} : { livenessMs: num('liveness-ms') as number }),
    ...(process.argv.includes('--no-verify') ? { verify: false } : {}),
    ...(process.argv.includes('--no-redis-restart') ? { redisRestart: false } : {}),
    ...(process.argv.includes('--no-broker-stop') ? { brokerStop: false } : {}),
    ...(process.argv.includes('--no-storms') ? { storms: false } : {}),
    ...(process.argv.includes('--no-faults') ? { faults: { seed: 11 } } : {}),
    ...(num('hold-request-ms') === undefined ? {} : { holdRequestMs: num('hold-request-ms') as number }),
    ...(num('latency-ms') === undefined
      ? {}
      : {
          simulator: {
            latency: {
              requestMs: num('latency-ms') as number,
              procedureMs: 0,
              feedHeadMs: 0,
              feedPerHourMs: 0,
              filteredMs: 0,
            },
          },
        }),
  };
  runChaos(opts).then(
    (report) => {
      process.stdout.write(
        `${process.argv.includes('--json') ? JSON.stringify(report) : formatChaosReport(report)}\n`,
      );
      process.exit(report.missing === 0 ? 0 : 1);
    },
    (error: unknown) => {
      process.stderr.write(
        `chaos: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
      );
      process.exit(1);
    },
  );
}
