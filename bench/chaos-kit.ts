/**
 * The machinery the chaos runs share (bench/chaos.ts: a full-history backfill under chaos; bench/tail-chaos.ts: live
 * tails under chaos): the PRIVATE stack (`scripts/stack.sh` with its own folder and ports; the registry of the
 * environment reused), the run's simulator, settings, schemas and topics, the fleet of `gamedata worker` processes
 * (SIGKILLed and started again), the chaos events (kills, a Redis restart, a broker stop or kill), the 429 storms,
 * and the duplicate traces of the verification (every copy of a record read twice: partition, offset, producer,
 * slice, time, the chaos events between; optionally Kafka's own Java read_committed consumer as an oracle).
 * Nothing here touches the shared stack: every stop, kill and deletion is of the private stack's processes and keys.
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { appendFileSync, cpSync, existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startSimulator, type Simulator } from '../tools/simulator/start-simulator.js';
import type { SimulatorOptions } from '../tools/simulator/options.js';
import type { Client as RegistryClient } from '@confluentinc/schemaregistry/dist/schemaregistry-client.js';
import { createRegistryClient } from '../src/output/encoding/registry-client.js';
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
import { connectRedis } from '../src/pipeline/queue/index.js';
import type { PipelineSettings } from '../src/foundation/config/index.js';
import type { ResourceName } from '../src/foundation/models/resources.js';
import { versionKey } from '../src/app/verify/compare-records.js';
import { readTopic } from '../src/output/kafka/readers/read-topic.js';
import { topicName } from '../src/foundation/models/topic-names.js';
import type { RecordDecoder } from '../src/output/encoding/record-decoder.js';
import { GamedataError, ServiceError } from '../src/foundation/errors/index.js';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
const run = promisify(execFile);
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * The upstream faults of every chaos run (the simulator's `faults`): failed requests, bad JSON, malformed records, and
 * the bad pages of issue 48 (a repeated, missing or stale cursor, an empty page with a cursor, a page over its limit).
 */
export const CHAOS_FAULTS: NonNullable<SimulatorOptions['faults']> = {
  seed: 11,
  http5xx: 0.01,
  batch5xx: 0.01,
  reset: 0.005,
  hang: 0.002,
  badJson: 0.005,
  malformed: 0.002,
  // Bad pages (issue 48), drawn per read: a retry may be answered well, and none may end a slice early or loop.
  repeatCursor: 0.003,
  emptyPages: 0.003,
  missingCursor: 0.003,
  longPages: 0.003,
};

export interface ChaosEvent {
  at: number;
  what: string;
  /** The run was still going when the event happened. */
  midRun: boolean;
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

export interface StackEnv {
  env: NodeJS.ProcessEnv;
  kafkaBrokers: string;
  schemaRegistryUrl: string;
  redisUrl: string;
}

export interface PrivateStackOptions {
  brokers: number;
  kafkaPort: number;
  redisPort: number;
  registryPort: number;
  stackDir: string;
}

/** Where a chaos bench's private stack runs, and what the run leaves behind: both chaos benches take these. */
export interface PrivateRunOptions {
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
}

export async function stack(args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  const { stdout } = await run('bash', [`${ROOT}scripts/stack.sh`, ...args], {
    env,
    cwd: ROOT,
    maxBuffer: 16 << 20,
  });
  return stdout;
}

/** Waits (up to 2 minutes) until the cluster lists `brokers` brokers. */
export async function waitForBrokers(kafkaBrokers: string[], brokers: number): Promise<void> {
  const until = Date.now() + 120_000;
  for (;;) {
    const seen = await clusterReplication({ brokers: kafkaBrokers }).then(
      (c) => c.brokers,
      () => 0,
    );
    if (seen >= brokers) return;
    if (Date.now() > until)
      throw new ServiceError(`the private cluster lists ${seen} of its ${brokers} brokers`, 'kafka');
    await sleep(1000);
  }
}

/**
 * Deletes what earlier runs left on the private stack (a run that failed or was stopped keeps its topics and keys):
 * every partition the cluster holds is in every follower's fetch session, so six runs' leftover topics made each
 * replica fetch walk ~240 partitions instead of ~40 and the brokers the box's largest CPU user.
 */
export async function removeEarlierRuns(
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
export async function deleteKeys(redis: ReturnType<typeof connectRedis>, prefix: string): Promise<number> {
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
export async function privateStack(o: PrivateStackOptions): Promise<StackEnv> {
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
    if (m?.[1] === undefined) throw new GamedataError(`scripts/stack.sh up printed no ${name}`);
    return m[1];
  };
  return {
    env,
    kafkaBrokers: get('KAFKA_BROKERS'),
    schemaRegistryUrl: get('SCHEMA_REGISTRY_URL'),
    redisUrl: get('REDIS_URL'),
  };
}

/** A chaos run's upstream, settings and topics on the private stack. */
export interface ChaosRunSetup {
  sim: Simulator;
  settings: PipelineSettings;
  registry: RegistryClient;
  /** The environment of the run's worker (and CLI) processes. */
  workerEnv: NodeJS.ProcessEnv;
}

/**
 * Starts the run's simulator (keyed limit out of the way: the storms set their own), names the run's topics, queues
 * and keys (`chaos-<tag><id>`, `chaosq-…`, `chaosr-…`: what `removeEarlierRuns` deletes), registers the schemas,
 * deletes earlier runs' leftovers and creates the topics replicated across the whole cluster.
 */
export async function setUpChaosRun(
  svc: StackEnv,
  o: {
    scale: 'small' | 'medium' | 'large';
    seed: number;
    brokers: number;
    simulator?: SimulatorOptions | undefined;
    faults?: SimulatorOptions['faults'] | undefined;
    /** Marks the run's names (e.g. `t` for the tail chaos). @default '' */
    tag?: string;
    log: (line: string) => void;
  },
): Promise<ChaosRunSetup> {
  const sim: Simulator = await startSimulator({
    scale: o.scale,
    seed: o.seed,
    port: 0,
    rateLimit: { enabled: true, keyed: 1_000_000, windowMs: 60_000 },
    ...o.simulator,
    ...(o.faults === undefined ? {} : { faults: o.faults }),
  });
  const id = `${o.tag ?? ''}${Date.now().toString(36)}`;
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
  await removeEarlierRuns(settings.kafkaBrokers, svc.redisUrl, o.log);
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
  return { sim, settings, registry, workerEnv };
}

/** Deletes the run's Redis keys and topics (unless kept), its subjects, and stops the private stack (unless kept). */
export async function cleanUpChaosRun(
  setup: ChaosRunSetup,
  svc: StackEnv,
  o: { keepData: boolean; keepStack: boolean; log: (line: string) => void },
): Promise<void> {
  const { settings } = setup;
  if (!o.keepData) {
    const redis = connectRedis(settings.redisUrl);
    redis.on('error', () => undefined);
    for (const p of [settings.queuePrefix, settings.redisPrefix]) await deleteKeys(redis, p);
    await redis.quit();
    // Not fatal (the next run deletes what is left), but said: leftover topics slow every later run.
    await deleteTopics({ brokers: settings.kafkaBrokers, topicPrefix: settings.topicPrefix }).catch(
      (e: unknown) => o.log(`deleting the run's topics: ${String(e)}`),
    );
  } else o.log(`kept topics ${settings.topicPrefix}.* and Redis keys ${settings.redisPrefix}*`);
  await setup.sim.close();
  await deleteSubjects(setup.registry, settings.topicPrefix).catch(() => undefined);
  if (!o.keepStack) await stack(['down'], svc.env).catch((e: unknown) => o.log(`stack down: ${String(e)}`));
}

export interface WorkerFleetOptions {
  workers: number;
  concurrency: number;
  /** The workers' `--max-concurrency`. @default the worker's own */
  maxConcurrency?: number | undefined;
  /** The built CLI (`bin/gamedata.mjs`) instead of the sources through tsx. */
  compiled?: boolean | undefined;
  /** `--liveness-timeout`. @default 4000 */
  livenessMs?: number | undefined;
  env: NodeJS.ProcessEnv;
  /** Append every line the workers print to this file. */
  logFile?: string | undefined;
  log: (line: string) => void;
}

/** The run's `gamedata worker` processes: each one killed is started again 1 s later, so are unplanned exits. */
export interface WorkerFleet {
  /** SIGKILLs worker `i` (one of this fleet's own children) and starts it again 1 s later; false when none runs. */
  kill(i: number): boolean;
  /** The pids of the fleet's live workers. */
  pids(): number[];
  /** SIGTERM to every worker (SIGKILL after 60 s); none is started again after this. */
  stop(): Promise<void>;
  unplannedExits(): number;
  /** Slices the workers' liveness sweeps moved back to wait (their "took over N slices" lines). */
  takenOver(): number;
  /** The last lines the workers printed. */
  recentLog(lines: number): string;
}

/** The argv of one worker process (the real CLI). */
export function workerArgs(o: WorkerFleetOptions): string[] {
  return [
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
  ];
}

export function startWorkerFleet(o: WorkerFleetOptions): WorkerFleet {
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
    const child = spawn(process.execPath, workerArgs(o), {
      cwd: ROOT,
      env: o.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const slot: Slot = { child, killed: false };
    slots[i] = slot;
    const keep = (b: Buffer): void => {
      if (o.logFile !== undefined)
        appendFileSync(o.logFile, `${new Date().toISOString()} [w${i} pid ${child.pid}] ${b.toString()}`);
      for (const m of b.toString().matchAll(/took over (\d+) slices? of/g)) takenOver += Number(m[1]);
      workerLog.push(`[w${i}] ${b.toString()}`);
      if (workerLog.length > 400) workerLog.splice(0, 200);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    child.once('exit', (code, signal) => {
      if (stopping || slot.killed) return;
      unplannedExits += 1;
      o.log(`worker ${i} exited on its own (${code ?? signal}); starting it again`);
      setTimeout(() => !stopping && start(i), 1000);
    });
  };
  for (let i = 0; i < o.workers; i++) start(i);
  return {
    kill(i) {
      const slot = slots[i];
      if (slot === undefined) return false;
      slot.killed = true;
      slot.child.kill('SIGKILL');
      setTimeout(() => !stopping && start(i), 1000);
      return true;
    },
    pids: () =>
      slots.flatMap((s) =>
        s?.child.pid !== undefined && s.child.exitCode === null && s.child.signalCode === null
          ? [s.child.pid]
          : [],
      ),
    async stop() {
      stopping = true;
      await Promise.all(
        slots.map(async (s) => {
          if (s === undefined || s.child.exitCode !== null || s.child.signalCode !== null) return;
          const exited = new Promise((r) => s.child.once('exit', r));
          s.child.kill('SIGTERM');
          await Promise.race([exited, sleep(60_000).then(() => s.child.kill('SIGKILL'))]);
        }),
      );
    },
    unplannedExits: () => unplannedExits,
    takenOver: () => takenOver,
    recentLog: (lines) => workerLog.slice(-lines).join(''),
  };
}

/** 429 storms (a keyed limit of 20 per 3 s for `stormMs`) every `stormEveryMs` until `done()`. */
export async function runStorms(
  sim: Simulator,
  o: { storms: boolean; stormEveryMs: number; stormMs: number },
  done: () => boolean,
): Promise<void> {
  while (!done() && o.storms) {
    await sleep(o.stormEveryMs);
    if (done()) break;
    sim.configure({ rateLimit: { keyed: 20, windowMs: 3000 } });
    await sleep(o.stormMs);
    sim.configure({ rateLimit: { keyed: 1_000_000, windowMs: 60_000 } });
  }
}

export interface ChaosScheduleOptions {
  kills: number;
  killEveryMs: number;
  workers: number;
  seed: number;
  brokers: number;
  brokerDownMs: number;
  /** Restart Redis after a third of the kills. */
  redisRestart: boolean;
  /** Stop (or kill) a broker after half of the kills. */
  brokerStop: boolean;
  /**
   * How broker 2 goes down: `stop` (`stack.sh stop-broker`: SIGTERM, a controlled shutdown) or `kill` (SIGKILL of
   * the private node's process, no shutdown). On a single-node stack the broker is restarted either way.
   * @default 'stop'
   */
  brokerDown?: 'stop' | 'kill';
  stackDir: string;
}

export interface ChaosOutcome {
  kills: number;
  redisRestarts: number;
  brokerStops: number;
  /** Resolves when the stopped broker is back (undefined when none was stopped). */
  brokerBack: Promise<void> | undefined;
}

/**
 * SIGKILLs of the fleet's workers every `killEveryMs` (a seeded choice of worker), `kills` in all, a Redis restart
 * (`stack.sh restart-redis`: SHUTDOWN, AOF reloaded) after a third of them and broker 2 down for `brokerDownMs`
 * after half; stops early when `done()`. `beforeRedisRestart` is awaited first (a planner enqueueing through Redis).
 */
export async function runChaosSchedule(
  o: ChaosScheduleOptions,
  deps: {
    svc: StackEnv;
    fleet: WorkerFleet;
    done: () => boolean;
    event: (what: string) => void;
    onKill?: (kills: number) => void;
    beforeRedisRestart?: () => Promise<unknown>;
  },
): Promise<ChaosOutcome> {
  const out: ChaosOutcome = { kills: 0, redisRestarts: 0, brokerStops: 0, brokerBack: undefined };
  const redisAt = Math.ceil(o.kills / 3);
  const brokerAt = Math.ceil(o.kills / 2);
  const rnd = (
    (seed) => () =>
      (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff
  )(o.seed);
  while (out.kills < o.kills && !deps.done()) {
    await sleep(o.killEveryMs);
    if (deps.done()) break;
    const i = Math.floor(rnd() * o.workers);
    if (deps.fleet.kill(i)) {
      out.kills += 1;
      deps.onKill?.(out.kills);
      deps.event(`SIGKILL worker ${i} (kill ${out.kills}/${o.kills})`);
    }
    if (out.kills === redisAt && o.redisRestart) {
      await deps.beforeRedisRestart?.();
      deps.event('restarting Redis');
      await stack(['restart-redis'], deps.svc.env);
      out.redisRestarts += 1;
      deps.event('Redis back');
    }
    if (out.kills === brokerAt && o.brokerStop) {
      out.brokerStops += 1;
      // Wrapped: an async function's returned promise would be awaited with it (the kills held for the downtime).
      out.brokerBack = (await takeBrokerDown(o, deps)).back;
    }
  }
  return out;
}

/** Broker 2 stopped or killed, brought back after `brokerDownMs` (`back`: its return); a single node restarted. */
async function takeBrokerDown(
  o: ChaosScheduleOptions,
  deps: { svc: StackEnv; event: (what: string) => void },
): Promise<{ back: Promise<void> | undefined }> {
  if (o.brokers <= 1) {
    deps.event('restarting the broker');
    await stack(['restart-broker', '1'], deps.svc.env);
    deps.event('broker back');
    return { back: undefined };
  }
  if (o.brokerDown === 'kill') {
    const pid = privateBrokerPid(o.stackDir, 2);
    deps.event(`SIGKILL broker 2 of ${o.brokers} (pid ${pid}) for ${o.brokerDownMs / 1000} s`);
    process.kill(pid, 'SIGKILL');
    for (let i = 0; i < 40 && isAlive(pid); i++) await sleep(250);
    deps.event('broker 2 dead');
  } else {
    deps.event(`stopping broker 2 of ${o.brokers} for ${o.brokerDownMs / 1000} s`);
    await stack(['stop-broker', '2'], deps.svc.env);
    deps.event('broker 2 stopped');
  }
  const back = (async () => {
    await sleep(o.brokerDownMs);
    await stack(['start-broker', '2'], deps.svc.env);
    deps.event('broker 2 back');
  })();
  return { back };
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * The pid of the private stack's Kafka node `node`, checked as `stack.sh` checks what it owns: its pid file under the
 * stack's folder, a live process, and a command line that names that folder (never a process of the shared stack).
 */
export function privateBrokerPid(stackDir: string, node: number): number {
  const file = `${stackDir}/run/kafka-${node}.pid`;
  const pid = Number(existsSync(file) ? readFileSync(file, 'utf8').trim() : Number.NaN);
  const cmdline = Number.isSafeInteger(pid)
    ? (() => {
        try {
          return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
        } catch {
          return '';
        }
      })()
    : '';
  if (!Number.isSafeInteger(pid) || pid <= 1 || !cmdline.includes(stackDir))
    throw new ServiceError(
      `no Kafka node ${node} of the private stack ${stackDir} is running (${file})`,
      'kafka',
    );
  return pid;
}

/** The `partition:offset -> key` of every record a Java read_committed consumer reads (undefined without java). */
export async function javaReadCommitted(
  brokers: string,
  topic: string,
): Promise<Map<string, string> | undefined> {
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

/** Every copy of every record of a topic, by version key, as a kafkajs read_committed consumer reads them. */
export interface TopicCopies {
  byKey: Map<string, DuplicateCopy[]>;
  /** partition:offset -> version key */
  keyOf: Map<string, string>;
}

/** Reads `resource`'s topic (read_committed, through the verification's reader) into its copies by version key. */
export async function readCopies(o: {
  resource: ResourceName;
  brokers: string[];
  topicPrefix: string;
  decoder: RecordDecoder;
  runT0: number;
  java?: Map<string, string> | undefined;
}): Promise<TopicCopies> {
  const byKey = new Map<string, DuplicateCopy[]>();
  const keyOf = new Map<string, string>();
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
  return { byKey, keyOf };
}

/** The chaos events within a second of `[first, last]` (seconds after the run started). */
export function eventsBetween(events: readonly ChaosEvent[], first: number, last: number): string[] {
  return events.filter((e) => e.at >= first - 1 && e.at <= last + 1).map((e) => `${e.at}s ${e.what}`);
}

/**
 * Every record of `resource` a kafkajs read_committed consumer reads more than once, with its copies traced to
 * partition, offset, producer, slice and time, and whether Kafka's own (Java) client reads each copy.
 */
export async function traceDuplicates(o: {
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
  const { byKey, keyOf } = await readCopies(o);
  const traces = duplicateTraces(o.resource, byKey, o.events);
  let committedCopies = 0;
  for (const t of traces) committedCopies += t.copies.filter((c) => c.javaCommitted === true).length;
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

/** The traces of the keys read more than once (`keep` narrows the keys looked at). */
export function duplicateTraces(
  resource: string,
  byKey: ReadonlyMap<string, DuplicateCopy[]>,
  events: readonly ChaosEvent[],
  keep: (key: string) => boolean = () => true,
): DuplicateTrace[] {
  const traces: DuplicateTrace[] = [];
  for (const [key, copies] of byKey) {
    if (copies.length < 2 || !keep(key)) continue;
    const first = Math.min(...copies.map((c) => c.at));
    const last = Math.max(...copies.map((c) => c.at));
    traces.push({ resource, key, copies, between: eventsBetween(events, first, last) });
  }
  return traces;
}

/** One copy as the reports print it. */
export function formatCopy(c: DuplicateCopy): string {
  return `[p${c.partition}@${c.offset} pid ${c.producerId}/${c.producerEpoch} ${c.at}s slice ${c.sliceId}${c.javaCommitted === undefined ? '' : c.javaCommitted ? ' java:yes' : ' java:NO'}]`;
}

/** The report lines of (up to `max`) duplicate traces. */
export function formatDuplicateTraces(traces: readonly DuplicateTrace[], max = 40): string[] {
  return traces
    .slice(0, max)
    .map(
      (d) =>
        `dup ${d.resource} ${d.key}: ${d.copies.map(formatCopy).join(' ')}${d.between.length === 0 ? '' : ` | between: ${d.between.join('; ')}`}`,
    );
}

/** A `--name value` flag of the command line. */
export function flag(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? undefined : process.argv[i + 1];
}

/** A numeric `--name value` flag. */
export function numFlag(name: string): number | undefined {
  const v = flag(name);
  return v === undefined ? undefined : Number(v);
}
