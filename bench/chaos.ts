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
import { fileURLToPath } from 'node:url';
import type { Simulator } from '../tools/simulator/start-simulator.js';
import type { SimulatorOptions } from '../tools/simulator/options.js';
import { createRecordDecoder } from '../src/output/encoding/record-decoder.js';
import type { ReadTopicStats } from '../src/output/kafka/readers/read-topic.js';
import { createPipelineRuntime, type PipelineRuntime } from '../src/app/index.js';
import { connectRedis, getRunStatus, startBackfill } from '../src/pipeline/queue/index.js';
import { QUEUE_NAMES } from '../src/pipeline/contract/queue-names.js';
import { Queue } from 'bullmq';
import { loadConfig } from '../src/foundation/config/index.js';
import { RESOURCES, isResourceName, type ResourceName } from '../src/foundation/models/resources.js';
import { verifyResource } from '../src/app/verify/index.js';
import { readTopic } from '../src/output/kafka/readers/read-topic.js';
import { dlqTopicName, topicName } from '../src/foundation/models/topic-names.js';
import { GamedataError } from '../src/foundation/errors/index.js';
import {
  CHAOS_FAULTS,
  ROOT,
  cleanUpChaosRun,
  flag,
  formatDuplicateTraces,
  javaReadCommitted,
  privateStack,
  runChaosSchedule,
  runStorms,
  setUpChaosRun,
  sleep,
  stack,
  startWorkerFleet,
  traceDuplicates,
  type ChaosEvent,
  type PrivateRunOptions,
  type ChaosOutcome,
  type ChaosRunSetup,
  type DuplicateTrace,
  type StackEnv,
  type WorkerFleet,
} from './chaos-kit.js';

export type { ChaosEvent, DuplicateCopy, DuplicateTrace } from './chaos-kit.js';

export interface ChaosOptions extends PrivateRunOptions {
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
    faults: CHAOS_FAULTS,
    ...options,
  };
  const t0 = Date.now();
  const log = o.log;
  log(
    `private stack: ${o.brokers} broker(s) from port ${o.kafkaPort}, redis ${o.redisPort}, dir ${o.stackDir}`,
  );
  const svc = await privateStack(o);
  try {
    log(
      `stack up in ${((Date.now() - t0) / 1000).toFixed(0)} s: kafka ${svc.kafkaBrokers}, redis ${svc.redisUrl}`,
    );
    const setup = await setUpChaosRun(svc, { ...o, log });
    const fleet = startWorkerFleet({ ...o, env: setup.workerEnv, logFile: o.workerLogFile, log });
    const ran = await runBackfillUnderChaos(o, svc, setup, fleet);
    const verified = await verifyChaosRun(o, svc, setup, ran);
    const counters = await ran.planner.counters.get(ran.runId);
    await ran.control.quit();
    await ran.planner.close();
    // The private stack keeps its data between runs: leave nothing of this one behind.
    await cleanUpChaosRun(setup, svc, { ...o, log });
    log(`cleaned up ${Math.round((Date.now() - t0) / 1000)} s after the start`);
    return {
      scale: o.scale,
      verified: o.verify,
      resources: o.resources,
      brokers: o.brokers,
      workers: o.workers,
      concurrency: o.concurrency,
      delivery: loadConfig({ env: setup.workerEnv }).delivery,
      published: counters.published,
      kills: ran.chaos.kills,
      unplannedExits: fleet.unplannedExits(),
      takenOver: fleet.takenOver(),
      redisRestarts: ran.chaos.redisRestarts,
      brokerStops: ran.chaos.brokerStops,
      ...verified,
      wallSeconds: Math.round((Date.now() - t0) / 1000),
      runSeconds: Math.round(ran.runSeconds),
      heldSeconds: Math.round(ran.heldMs / 1000),
      events: ran.events,
    };
  } catch (error) {
    // A failed run (a stall, a verification error) stops its private stack too: nothing is left running after it.
    if (!o.keepStack) await stack(['down'], svc.env).catch(() => undefined);
    throw error;
  }
}

type ResolvedChaosOptions = Required<
  Omit<
    ChaosOptions,
    | 'simulator'
    | 'maxConcurrency'
    | 'partition'
    | 'compiled'
    | 'livenessMs'
    | 'workerLogFile'
    | 'holdRequestMs'
    | 'faults'
  >
> &
  Pick<ChaosOptions, 'simulator' | 'partition' | 'holdRequestMs'>;

interface BackfillUnderChaos {
  runId: string;
  runT0: number;
  runSeconds: number;
  heldMs: number;
  events: ChaosEvent[];
  chaos: ChaosOutcome;
  planner: PipelineRuntime;
  control: ReturnType<typeof connectRedis>;
}

/** The backfill, its watcher (progress, the hold), the storms and the chaos; resolves once the run completed. */
async function runBackfillUnderChaos(
  o: ResolvedChaosOptions,
  svc: StackEnv,
  setup: ChaosRunSetup,
  fleet: WorkerFleet,
): Promise<BackfillUnderChaos> {
  const { sim, settings } = setup;
  const log = o.log;
  const events: ChaosEvent[] = [];
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
      runs: planner.runs,
      users: planner.users,
      plan: { partition: o.partition ?? 'off' },
    },
  );
  plannedP.catch(() => undefined); // awaited below (by the watcher, and before Redis restarts)
  const bull = { connection: control, prefix: settings.queuePrefix };
  const watch = watchRun(o, sim, bull, plannedP, runT0);
  const event = (what: string): void => {
    events.push({ at: Math.round((Date.now() - runT0) / 1000), what, midRun: !watch.done() });
    log(
      `${Math.round((Date.now() - runT0) / 1000)} s: ${what}${watch.done() ? ' (after the run ended)' : ''}`,
    );
  };
  const storms = runStorms(sim, o, watch.done);
  const chaos = await runChaosSchedule(
    { ...o, brokerDown: 'stop' },
    {
      svc,
      fleet,
      done: watch.done,
      event,
      onKill: (kills) => watch.setChaosShare(kills / o.kills),
      // Not while planning: the planner (this process) enqueues the run's slices through Redis.
      beforeRedisRestart: () => plannedP,
    },
  );
  watch.chaosOver();
  await chaos.brokerBack;
  const { runId, failed, heldMs } = await watch.finished;
  const runSeconds = (Date.now() - runT0) / 1000;
  await fleet.stop();
  await storms;
  if (failed !== undefined || !watch.done()) {
    log(fleet.recentLog(40));
    throw new GamedataError(
      `run ${runId} ${failed === undefined ? 'did not finish in time' : `failed: ${failed}`}`,
    );
  }
  log(
    `run completed in ${runSeconds.toFixed(0)} s${o.verify ? '; verifying every topic against the truth' : ' (not verified: --no-verify)'}`,
  );
  return { runId, runT0, runSeconds, heldMs, events, chaos, planner, control };
}

/** The run's slices still pending, each with its attempts and last error (a long tail's last slices). */
async function pendingSlices(slicesQueue: Queue, run: string): Promise<string> {
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
}

/**
 * Follows the run until it completes, fails or times out: its shape every 10 s (the last slices named), and the hold
 * (`holdRequestMs`) while its share of slices done is ahead of the chaos.
 */
function watchRun(
  o: ResolvedChaosOptions,
  sim: Simulator,
  bull: { connection: ReturnType<typeof connectRedis>; prefix: string },
  plannedP: ReturnType<typeof startBackfill>,
  runT0: number,
): {
  done: () => boolean;
  setChaosShare: (share: number) => void;
  chaosOver: () => void;
  finished: Promise<{ runId: string; failed: string | undefined; heldMs: number }>;
} {
  const log = o.log;
  let done = false;
  let chaosShare = 0;
  let over = false;
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
  // The last slices of a run (a long tail reads differently when they wait out a backoff or run on).
  const slicesQueue = new Queue(QUEUE_NAMES.slices, bull);
  slicesQueue.on('error', () => undefined);
  const finished = (async () => {
    const planned = await plannedP.catch((error: unknown) => {
      done = true; // the chaos stops; the error is thrown where the watcher is awaited
      throw error;
    });
    const runId = planned.run.runId;
    log(
      `run ${runId}: ${planned.slices.length} slices planned in ${Math.round((Date.now() - runT0) / 1000)} s`,
    );
    let failed: string | undefined;
    let shownAt = 0;
    while (!done && Date.now() - runT0 < o.timeoutMs) {
      const s = await getRunStatus(runId, bull).catch(() => undefined);
      // The run's shape over time (a long tail of a few slices reads differently from a slow start).
      if (s !== undefined && Date.now() - shownAt >= 10_000) {
        shownAt = Date.now();
        log(
          `${Math.round((shownAt - runT0) / 1000)} s: ${s.slices.completed} slices done, ${s.slices.pending} pending${
            s.slices.pending > 0 && s.slices.pending <= 10
              ? `: ${await pendingSlices(slicesQueue, runId)}`
              : ''
          }`,
        );
      }
      if (s !== undefined && !over) {
        const share = s.slices.completed / Math.max(1, s.slices.completed + s.slices.pending);
        hold(share > 0.1 + 0.8 * chaosShare);
      }
      if (s?.state === 'completed') done = true;
      else if (s?.state === 'failed') {
        failed = s.failedReason ?? 'failed';
        // The run's reason names the child that failed; its own reason says why.
        const child = /child \S*?:gamedata-slices:(\S+) failed/.exec(failed)?.[1];
        const job = child === undefined ? undefined : await slicesQueue.getJob(child).catch(() => undefined);
        if (job)
          failed += ` (the slice: ${job.failedReason ?? '?'}; ${job.attemptsMade} attempt(s), stalled ${job.stalledCounter})`;
        done = true;
      }
      if (!done) await sleep(1000);
    }
    await slicesQueue.close();
    return { runId, failed, heldMs };
  })();
  return {
    done: () => done,
    setChaosShare: (share) => {
      chaosShare = share;
    },
    chaosOver: () => {
      over = true;
      hold(false);
    },
    finished,
  };
}

type VerifiedFigures = Pick<
  ChaosReport,
  | 'records'
  | 'missing'
  | 'duplicates'
  | 'unexpected'
  | 'undecodable'
  | 'dlq'
  | 'perResource'
  | 'javaOracle'
  | 'duplicateTraces'
  | 'dlqMissingIds'
>;

/** Every topic against the truth (nothing when `verify` is off), the duplicates traced, the DLQs by `_id`. */
async function verifyChaosRun(
  o: ResolvedChaosOptions,
  svc: StackEnv,
  setup: ChaosRunSetup,
  ran: BackfillUnderChaos,
): Promise<VerifiedFigures> {
  const { sim, settings, registry } = setup;
  const decoder = createRecordDecoder({ registry, topicPrefix: settings.topicPrefix });
  const out: VerifiedFigures = {
    records: 0,
    missing: 0,
    duplicates: 0,
    unexpected: 0,
    undecodable: 0,
    dlq: { messages: 0, malformed: 0, found: 0 },
    perResource: {},
    javaOracle: undefined,
    duplicateTraces: [],
    dlqMissingIds: {},
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
    out.perResource[resource] = {
      expected: r.expected,
      missing: r.missing,
      missingSample: r.missingSample,
      duplicates: r.duplicates,
      dlq: r.dlq.messages,
      malformed: r.dlq.expected,
      reader: r.reader,
    };
    out.records += r.expected;
    out.missing += r.missing;
    out.duplicates += r.duplicates;
    out.unexpected += r.unexpected;
    out.undecodable += r.undecodable;
    out.dlq.messages += r.dlq.messages;
    out.dlq.malformed += r.dlq.expected;
    out.dlq.found += r.dlq.found;
    const java = o.javaOracle
      ? await javaReadCommitted(svc.kafkaBrokers, topicName(settings.topicPrefix, resource))
      : undefined;
    const t = await traceDuplicates({
      resource,
      brokers: settings.kafkaBrokers,
      topicPrefix: settings.topicPrefix,
      decoder,
      runT0: ran.runT0,
      events: ran.events,
      java,
    });
    // One by one: a spread of 100 k traces overflows the call stack.
    for (const trace of t.traces) out.duplicateTraces.push(trace);
    o.log(`verified ${resource} in ${((Date.now() - verifyT0) / 1000).toFixed(1)} s`);
    if (java !== undefined) {
      out.javaOracle ??= {
        duplicates: 0,
        dlqFound: 0,
        committedCopiesOfKafkajsDuplicates: 0,
        javaOnly: 0,
        kafkajsOnly: 0,
      };
      out.javaOracle.duplicates += t.javaDuplicates;
      out.javaOracle.committedCopiesOfKafkajsDuplicates += t.committedCopies;
      out.javaOracle.javaOnly += t.javaOnly;
      out.javaOracle.kafkajsOnly += t.kafkajsOnly;
    }
    await checkDlqIds(o, svc, setup, resource, out);
  }
  return out;
}

/** The malformed records of `resource` whose `_id` no dead letter carries; the Java oracle's DLQ reading. */
async function checkDlqIds(
  o: ResolvedChaosOptions,
  svc: StackEnv,
  setup: ChaosRunSetup,
  resource: ResourceName,
  out: VerifiedFigures,
): Promise<void> {
  const { sim, settings } = setup;
  const dlqTopic = dlqTopicName(topicName(settings.topicPrefix, resource));
  const dlqKeys = new Set<string>();
  await readTopic({ brokers: settings.kafkaBrokers, topic: dlqTopic }, (m) => {
    if (m.key !== null) dlqKeys.add(m.key.toString());
  });
  const malformedIds = sim.malformed(resource).map((m) => m._id);
  const notThere = malformedIds.filter((id) => !dlqKeys.has(id));
  if (notThere.length > 0) out.dlqMissingIds[resource] = notThere;
  const javaDlq = o.javaOracle ? await javaReadCommitted(svc.kafkaBrokers, dlqTopic) : undefined;
  if (javaDlq !== undefined && out.javaOracle !== undefined) {
    const keys = new Set(javaDlq.values());
    out.javaOracle.dlqFound += malformedIds.filter((id) => keys.has(id)).length;
  }
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
    ...formatDuplicateTraces(r.duplicateTraces),
  ].join('\n');
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
