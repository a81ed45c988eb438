/**
 * Tail chaos (issue 47, Build 6): tails of transactions and donations every 2 s on a LIVE simulator (records arriving,
 * upstream faults and 429 storms on) through three `gamedata worker` processes on the PRIVATE stack of bench/chaos.ts
 * (its machinery: bench/chaos-kit.ts), while a dozen SIGKILLs hit the workers, Redis is restarted (SHUTDOWN, AOF
 * reloaded) after a third of them and broker 2 of 3 is killed with SIGKILL (no controlled shutdown) after half, and
 * brought back.
 *
 * The truth: every transaction and donation the simulator created with a sort time (`createdAt`, the simulator's
 * clock) in [the tails' start, the chaos' end]. The tails are registered through the CLI (`gamedata tail
 * transactions donations --every 2s --since <the tails' start>`), so their first run starts exactly there and nothing
 * older is expected. After the last chaos event the tails keep running until each resource's watermark (the upper
 * bound of a run whose every slice completed) is past the chaos' end; then the schedules are removed, the runs in
 * flight finish, and the workers stop. Then each topic is read by the verification's read_committed reader
 * (`readTopic`) and compared by `(_id, version)` with the truth (`compareRecords`):
 * - every record of the window read exactly once (0 missing, 0 duplicates), none unexpected (nothing the upstream does
 *   not hold), none undecodable;
 * - the records outside the window that the tails also read (after the chaos' end; and below the tails' start, which
 *   every run after the first reaches through its 60 s lookback): never twice (not required to be all there);
 * - every malformed record of the window in its DLQ (by `_id`; a record malformed by losing its `_id` by content).
 * Any duplicate is traced to its copies as bench/chaos.ts does (partition, offset, producer id/epoch, slice, time, the
 * chaos events between); any missing record to its arrival time, the tail runs whose range held it, the records next
 * to it on the topic (their slices and copies), its Redis lock if one is left, and the chaos events around.
 *
 * Run: `SCHEMA_REGISTRY_URL=<a registry> npx tsx bench/tail-chaos.ts [--kills 12] [--kill-every-ms 6000]
 * [--rate 40] [--compiled] [--keep-stack] [--json]`; exits 0 only when exact. A script, not a CI test: ~3 min of wall
 * on the 2-core box (docs/BENCHMARKS.md), over the CI bar of ~2.5 min.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createRecordDecoder, type RecordDecoder } from '../src/output/encoding/record-decoder.js';
import { connectRedis, getRunStatus } from '../src/pipeline/queue/index.js';
import { loadConfig } from '../src/foundation/config/index.js';
import { RESOURCE_INFO, type ResourceName } from '../src/foundation/models/resources.js';
import { compareRecords, versionKey } from '../src/app/verify/compare-records.js';
import { readTopic } from '../src/output/kafka/readers/read-topic.js';
import { dlqTopicName, topicName } from '../src/foundation/models/topic-names.js';
import { createScheduleRegistry, createTailStateStore } from '../src/pipeline/schedules/index.js';
import type { SimulatorOptions } from '../tools/simulator/options.js';
import { GamedataError } from '../src/foundation/errors/index.js';
import {
  CHAOS_FAULTS,
  ROOT,
  cleanUpChaosRun,
  duplicateTraces,
  eventsBetween,
  flag,
  formatCopy,
  formatDuplicateTraces,
  numFlag,
  privateStack,
  readCopies,
  runChaosSchedule,
  runStorms,
  setUpChaosRun,
  sleep,
  stack,
  startWorkerFleet,
  type ChaosEvent,
  type PrivateRunOptions,
  type ChaosOutcome,
  type ChaosRunSetup,
  type DuplicateCopy,
  type DuplicateTrace,
  type StackEnv,
  type TopicCopies,
  type WorkerFleet,
} from './chaos-kit.js';

export const TAIL_CHAOS_RESOURCES = ['transactions', 'donations'] as const satisfies readonly ResourceName[];

export interface TailChaosOptions extends PrivateRunOptions {
  /** The simulator's world the live arrivals join. @default 'small' */
  scale?: 'small' | 'medium' | 'large';
  seed?: number;
  /** Kafka nodes of the private stack. @default 3 */
  brokers?: number;
  /** @default 3 */
  workers?: number;
  /** Slices in flight per worker. @default 8 */
  concurrency?: number;
  /** SIGKILLs of workers in all. @default 12 */
  kills?: number;
  /** @default 6000 */
  killEveryMs?: number;
  /** How long the killed broker stays down. @default 15000 */
  brokerDownMs?: number;
  /** How broker 2 goes down: SIGKILL (`kill`) or a controlled shutdown (`stop`). @default 'kill' */
  brokerDown?: 'kill' | 'stop';
  redisRestart?: boolean;
  brokerStop?: boolean;
  storms?: boolean;
  /** @default 20000 / 3000 */
  stormEveryMs?: number;
  stormMs?: number;
  /** The tails' interval (`gamedata tail --every`). @default 2000 */
  everyMs?: number;
  /** New records a second of the live simulator (90 % transactions, 5 % donations). @default 40 */
  ratePerSecond?: number;
  /** Upstream faults. @default bench/chaos.ts's, malformed records at 1 % (so the window's DLQ is not empty) */
  faults?: SimulatorOptions['faults'];
  /** How long the tails may take, after the chaos, to get past its end. @default 180000 */
  catchUpTimeoutMs?: number;
  compiled?: boolean;
  livenessMs?: number;
  workerLogFile?: string;
  log?: (line: string) => void;
}

/** One tail run as the schedule state showed it. */
export interface TailRunSeen {
  resource: ResourceName;
  runId: string;
  /** The run's range, upstream sort time (epoch ms); `from` undefined = from the earliest record. */
  from: number | undefined;
  to: number;
  /** Seconds after the tails' start that it was first seen (runs shorter than a poll are not seen); its outcome. */
  seenAt: number;
  outcome?: 'completed' | 'failed';
  error?: string;
}

export interface MissingTrace {
  resource: string;
  key: string;
  /** Its sort time (ISO) and when it arrived, in seconds after the tails' start. */
  sortTime: string;
  arrivedAt: number;
  /** The tail runs whose range held it. */
  runs: string[];
  /** The nearest records of the window on each side on the topic (older, newer) and their copies. */
  neighbours: string[];
  /** Redis keys naming its `_id` (a lock left behind, with its page key). */
  redis: string[];
  /** The chaos events from its arrival to its neighbours' copies. */
  events: string[];
}

export interface TailChaosResourceReport {
  /** The window's records (malformed ones excluded: they are expected in the DLQ). */
  expected: number;
  matched: number;
  missing: number;
  /** Extra copies of the window's records (and of anything unexpected). */
  duplicates: number;
  /** Topic records the truth does not hold at all. */
  unexpected: number;
  undecodable: number;
  /** Records older than the tails' start on the topic (each later run's lookback reaches below it), extra copies. */
  beforeWindow: { read: number; duplicates: number };
  /** Records after the chaos' end on the topic, and their extra copies. */
  afterWindow: { read: number; duplicates: number };
  consumed: number;
  dlq: { messages: number; expected: number; found: number; doubled: number; missingIds: string[] };
  /** Runs seen by the watcher's polls; completed, failed and skipped ticks as the schedule state counts them. */
  runs: { seen: number; completed: number; failed: number; skippedTicks: number };
  missingSample: string[];
  unexpectedSample: string[];
}

export interface TailChaosReport {
  exact: boolean;
  scale: string;
  brokers: number;
  workers: number;
  concurrency: number;
  delivery: string;
  everyMs: number;
  ratePerSecond: number;
  /** The window, upstream sort time (ISO), and its length in seconds of the simulator's clock. */
  window: { from: string; to: string; seconds: number };
  records: number;
  missing: number;
  duplicates: number;
  unexpected: number;
  kills: number;
  unplannedExits: number;
  takenOver: number;
  redisRestarts: number;
  brokerStops: number;
  /** Seconds from the chaos' end until every watermark was past it. */
  catchUpSeconds: number;
  /** Seconds from the tails' start to the workers' stop. */
  runSeconds: number;
  wallSeconds: number;
  perResource: Record<string, TailChaosResourceReport>;
  events: ChaosEvent[];
  duplicateTraces: DuplicateTrace[];
  missingTraces: MissingTrace[];
  /** Tail runs that failed (their error), as the schedule state recorded them. */
  failedRuns: TailRunSeen[];
}

type ResolvedTailChaosOptions = Required<
  Omit<TailChaosOptions, 'workerLogFile' | 'livenessMs' | 'compiled' | 'faults'>
> &
  Pick<TailChaosOptions, 'workerLogFile' | 'livenessMs' | 'compiled' | 'faults'>;

function resolveOptions(options: TailChaosOptions): ResolvedTailChaosOptions {
  return {
    scale: 'small',
    seed: 7,
    brokers: 3,
    workers: 3,
    concurrency: 8,
    kills: 12,
    killEveryMs: 6_000,
    brokerDownMs: 15_000,
    brokerDown: 'kill',
    redisRestart: true,
    brokerStop: true,
    storms: true,
    stormEveryMs: 20_000,
    stormMs: 3_000,
    everyMs: 2_000,
    ratePerSecond: 40,
    faults: { ...CHAOS_FAULTS, malformed: 0.01 },
    catchUpTimeoutMs: 180_000,
    kafkaPort: 23092,
    redisPort: 23379,
    registryPort: 23081,
    stackDir: `${ROOT}.stack/chaos`,
    keepStack: false,
    keepData: false,
    log: (line: string) => process.stderr.write(`[tail-chaos] ${line}\n`),
    ...options,
  };
}

export async function runTailChaos(options: TailChaosOptions = {}): Promise<TailChaosReport> {
  const o = resolveOptions(options);
  const t0 = Date.now();
  o.log(
    `private stack: ${o.brokers} broker(s) from port ${o.kafkaPort}, redis ${o.redisPort}, dir ${o.stackDir}`,
  );
  const svc = await privateStack(o);
  try {
    o.log(
      `stack up in ${((Date.now() - t0) / 1000).toFixed(0)} s: kafka ${svc.kafkaBrokers}, redis ${svc.redisUrl}`,
    );
    const setup = await setUpChaosRun(svc, {
      ...o,
      simulator: { live: { ratePerSecond: o.ratePerSecond, changeRatePerSecond: 0, speed: 1 } },
      tag: 't',
      log: o.log,
    });
    const fleet = startWorkerFleet({ ...o, env: setup.workerEnv, logFile: o.workerLogFile, log: o.log });
    const ran = await runTailsUnderChaos(o, svc, setup, fleet);
    const verified = await verifyTails(o, setup, ran);
    await ran.control.quit();
    await cleanUpChaosRun(setup, svc, { ...o, log: o.log });
    const total = (k: 'missing' | 'duplicates' | 'unexpected' | 'expected'): number =>
      Object.values(verified.perResource).reduce((n, r) => n + r[k], 0);
    const exact = Object.values(verified.perResource).every(
      (r) =>
        r.missing === 0 &&
        r.duplicates === 0 &&
        r.unexpected === 0 &&
        r.undecodable === 0 &&
        r.afterWindow.duplicates === 0 &&
        r.beforeWindow.duplicates === 0 &&
        r.dlq.found === r.dlq.expected,
    );
    return {
      exact,
      scale: o.scale,
      brokers: o.brokers,
      workers: o.workers,
      concurrency: o.concurrency,
      delivery: loadConfig({ env: setup.workerEnv }).delivery,
      everyMs: o.everyMs,
      ratePerSecond: o.ratePerSecond,
      window: {
        from: new Date(ran.since).toISOString(),
        to: new Date(ran.chaosEnd).toISOString(),
        seconds: Math.round((ran.chaosEnd - ran.since) / 1000),
      },
      records: total('expected'),
      missing: total('missing'),
      duplicates: total('duplicates'),
      unexpected: total('unexpected'),
      kills: ran.chaos.kills,
      unplannedExits: fleet.unplannedExits(),
      takenOver: fleet.takenOver(),
      redisRestarts: ran.chaos.redisRestarts,
      brokerStops: ran.chaos.brokerStops,
      catchUpSeconds: Math.round(ran.catchUpMs / 1000),
      runSeconds: Math.round(ran.runMs / 1000),
      wallSeconds: Math.round((Date.now() - t0) / 1000),
      perResource: verified.perResource,
      events: ran.events,
      duplicateTraces: verified.duplicateTraces,
      missingTraces: verified.missingTraces,
      failedRuns: [...ran.runs.values()].filter((r) => r.outcome === 'failed'),
    };
  } catch (error) {
    if (!o.keepStack) await stack(['down'], svc.env).catch(() => undefined);
    throw error;
  }
}

interface TailsUnderChaos {
  /** The tails' start (wall clock, epoch ms): the reports' seconds count from here. */
  tailsT0: number;
  /** The window, upstream sort time (epoch ms). */
  since: number;
  chaosEnd: number;
  catchUpMs: number;
  runMs: number;
  events: ChaosEvent[];
  chaos: ChaosOutcome;
  runs: Map<string, TailRunSeen>;
  skippedTicks: Record<string, number>;
  runCounts: Record<string, { completed: number; failed: number }>;
  control: ReturnType<typeof connectRedis>;
}

/** Tails registered through the CLI, the chaos over them, the catch-up past its end, the tails removed and settled. */
async function runTailsUnderChaos(
  o: ResolvedTailChaosOptions,
  svc: StackEnv,
  setup: ChaosRunSetup,
  fleet: WorkerFleet,
): Promise<TailsUnderChaos> {
  const { sim, settings } = setup;
  const control = connectRedis(settings.redisUrl);
  control.on('error', () => undefined); // Redis restarts on purpose; the connection comes back by itself
  const since = sim.now();
  const tailsT0 = Date.now();
  await registerTails(o, setup, since);
  const events: ChaosEvent[] = [];
  const at = (): number => Math.round((Date.now() - tailsT0) / 1000);
  const event = (what: string): void => {
    events.push({ at: at(), what, midRun: true });
    o.log(`${at()} s: ${what}`);
  };
  event(`tails registered (every ${o.everyMs} ms from ${new Date(since).toISOString()})`);
  const watcher = watchTails(o, control, settings.redisPrefix, tailsT0);
  let chaosDone = false;
  const storms = runStorms(sim, o, () => chaosDone);
  const chaos = await runChaosSchedule({ ...o }, { svc, fleet, done: () => false, event });
  await chaos.brokerBack;
  chaosDone = true;
  await storms;
  const chaosEnd = sim.now();
  event(`chaos over: the window ends at ${new Date(chaosEnd).toISOString()}`);
  const catchUpT0 = Date.now();
  await watcher.until(
    (s) => s.every((x) => (x.watermark ?? 0) > chaosEnd),
    o.catchUpTimeoutMs,
    'past the chaos',
  );
  const catchUpMs = Date.now() - catchUpT0;
  event(`every watermark past the chaos' end after ${(catchUpMs / 1000).toFixed(1)} s`);
  const registry = createScheduleRegistry({ connection: control, prefix: settings.queuePrefix });
  for (const r of TAIL_CHAOS_RESOURCES) await registry.remove('tail', r);
  await registry.close();
  // A tick that was planning when its schedule went finishes its run: wait for every run in flight to end.
  await sleep(o.everyMs + 1000);
  await settleActiveRuns(o, watcher, settings.queuePrefix, control);
  event('tails removed, their last runs ended');
  const runMs = Date.now() - tailsT0;
  await fleet.stop();
  watcher.stop();
  return {
    tailsT0,
    since,
    chaosEnd,
    catchUpMs,
    runMs,
    events,
    chaos,
    runs: watcher.runs,
    skippedTicks: watcher.skipped,
    runCounts: watcher.counts,
    control,
  };
}

/** `gamedata tail transactions donations --every <ms> --since <ISO>`, through the CLI the workers run. */
async function registerTails(
  o: ResolvedTailChaosOptions,
  setup: ChaosRunSetup,
  since: number,
): Promise<void> {
  const args = [
    ...(o.compiled === true ? ['bin/gamedata.mjs'] : ['--import', 'tsx', 'src/app/cli/main.ts']),
    'tail',
    ...TAIL_CHAOS_RESOURCES,
    '--every',
    `${o.everyMs}ms`,
    '--since',
    new Date(since).toISOString(),
  ];
  const output: string[] = [];
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn(process.execPath, args, {
      cwd: ROOT,
      env: setup.workerEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.on('data', (b: Buffer) => output.push(b.toString()));
    child.stderr.on('data', (b: Buffer) => output.push(b.toString()));
    child.once('error', reject);
    child.once('exit', resolve);
  });
  o.log(`gamedata tail: ${output.join('').trim().replaceAll('\n', ' | ')}`);
  if (code !== 0) throw new GamedataError(`gamedata tail exited ${String(code)}: ${output.join('')}`);
}

interface TailWatcher {
  runs: Map<string, TailRunSeen>;
  skipped: Record<string, number>;
  /** The schedule state's own counts of completed and failed runs. */
  counts: Record<string, { completed: number; failed: number }>;
  /** The latest state of each resource (watermark, active run). */
  latest(): { resource: ResourceName; watermark: number | undefined; active: string | undefined }[];
  until(
    test: (s: ReturnType<TailWatcher['latest']>) => boolean,
    timeoutMs: number,
    what: string,
  ): Promise<void>;
  stop(): void;
}

/** Polls the tails' schedule state every 250 ms: each run seen (range, outcome), the watermarks, the skipped ticks. */
function watchTails(
  o: ResolvedTailChaosOptions,
  control: ReturnType<typeof connectRedis>,
  redisPrefix: string,
  tailsT0: number,
): TailWatcher {
  const state = createTailStateStore(control, redisPrefix);
  const runs = new Map<string, TailRunSeen>();
  const skipped: Record<string, number> = {};
  const counts: Record<string, { completed: number; failed: number }> = {};
  let latest: ReturnType<TailWatcher['latest']> = TAIL_CHAOS_RESOURCES.map((resource) => ({
    resource,
    watermark: undefined,
    active: undefined,
  }));
  let stopped = false;
  const seconds = (): number => Math.round((Date.now() - tailsT0) / 100) / 10;
  const poll = async (): Promise<void> => {
    const states = await Promise.all(TAIL_CHAOS_RESOURCES.map((r) => state.get(r)));
    for (const s of states) {
      if (s.active !== undefined && !runs.has(s.active.runId))
        runs.set(s.active.runId, {
          resource: s.resource,
          runId: s.active.runId,
          from: s.active.from,
          to: s.active.to,
          seenAt: seconds(),
        });
      const last = s.lastRunId === undefined ? undefined : runs.get(s.lastRunId);
      if (last !== undefined && last.outcome === undefined && s.lastOutcome !== undefined) {
        last.outcome = s.lastOutcome;
        if (s.lastOutcome === 'failed') {
          last.error = s.lastError ?? '?';
          o.log(`${Math.round(seconds())} s: tail run ${last.runId} failed: ${last.error.slice(0, 200)}`);
        }
      }
      skipped[s.resource] = s.skippedTicks;
      counts[s.resource] = { completed: s.completedRuns, failed: s.failedRuns };
    }
    latest = states.map((s) => ({ resource: s.resource, watermark: s.watermark, active: s.active?.runId }));
  };
  void (async () => {
    while (!stopped) {
      await poll().catch(() => undefined); // Redis restarting: the next poll reads it
      await sleep(250);
    }
  })();
  return {
    runs,
    skipped,
    counts,
    latest: () => latest,
    async until(test, timeoutMs, what) {
      const deadline = Date.now() + timeoutMs;
      while (!test(latest)) {
        if (Date.now() > deadline)
          throw new GamedataError(
            `the tails did not get ${what} in ${timeoutMs} ms: ${JSON.stringify(latest)}`,
          );
        await sleep(250);
      }
    },
    stop: () => {
      stopped = true;
    },
  };
}

/** Waits until no run a tail started is still going (completed or failed in BullMQ). */
async function settleActiveRuns(
  o: ResolvedTailChaosOptions,
  watcher: TailWatcher,
  queuePrefix: string,
  control: ReturnType<typeof connectRedis>,
): Promise<void> {
  const deadline = Date.now() + o.catchUpTimeoutMs;
  for (;;) {
    const going: string[] = [];
    for (const run of watcher.runs.values()) {
      if (run.outcome !== undefined) continue;
      const s = await getRunStatus(run.runId, { connection: control, prefix: queuePrefix }).catch(
        () => undefined,
      );
      if (s?.state === 'completed' || s?.state === 'failed') {
        run.outcome ??= s.state;
        if (s.state === 'failed') run.error ??= s.failedReason ?? '?';
      } else if (s !== undefined) going.push(run.runId);
    }
    if (going.length === 0) return;
    if (Date.now() > deadline) throw new GamedataError(`tail runs still going: ${going.join(', ')}`);
    await sleep(500);
  }
}

interface VerifiedTails {
  perResource: Record<string, TailChaosResourceReport>;
  duplicateTraces: DuplicateTrace[];
  missingTraces: MissingTrace[];
}

async function verifyTails(
  o: ResolvedTailChaosOptions,
  setup: ChaosRunSetup,
  ran: TailsUnderChaos,
): Promise<VerifiedTails> {
  const decoder = createRecordDecoder({ registry: setup.registry, topicPrefix: setup.settings.topicPrefix });
  const out: VerifiedTails = { perResource: {}, duplicateTraces: [], missingTraces: [] };
  for (const resource of TAIL_CHAOS_RESOURCES) {
    const t = Date.now();
    const v = await verifyTailResource(setup, ran, resource, decoder);
    out.perResource[resource] = v.report;
    for (const d of v.duplicateTraces) out.duplicateTraces.push(d);
    for (const m of v.missingTraces) out.missingTraces.push(m);
    o.log(`verified ${resource} in ${((Date.now() - t) / 1000).toFixed(1)} s: ${JSON.stringify(v.report)}`);
  }
  return out;
}

/** The window of one resource against its topic and DLQ. */
async function verifyTailResource(
  setup: ChaosRunSetup,
  ran: TailsUnderChaos,
  resource: ResourceName,
  decoder: RecordDecoder,
): Promise<{
  report: TailChaosResourceReport;
  duplicateTraces: DuplicateTrace[];
  missingTraces: MissingTrace[];
}> {
  const { sim, settings } = setup;
  const sortField = RESOURCE_INFO[resource].sortField;
  const timeOf = (r: Record<string, unknown>): number => Date.parse(String(r[sortField]));
  const truth = sim.truth(resource);
  const window = truth.filter((r) => timeOf(r) >= ran.since && timeOf(r) <= ran.chaosEnd);
  // Outside the window: what the tails also read (after the chaos' end, and below the tails' start through each
  // later run's lookback); checked never twice, not required.
  const keysOf = (rs: Record<string, unknown>[]): Set<string> =>
    new Set(rs.map((r) => versionKey(resource, r)));
  const before = keysOf(truth.filter((r) => timeOf(r) < ran.since));
  const after = keysOf(truth.filter((r) => timeOf(r) > ran.chaosEnd));
  const windowIds = new Set(window.map((r) => String(r['_id'])));
  const malformed = sim.malformed(resource).filter((m) => windowIds.has(m._id));
  const malformedIds = new Set(malformed.map((m) => m._id));
  let consumed = 0;
  const copies = await readCopies({
    resource,
    brokers: settings.kafkaBrokers,
    topicPrefix: settings.topicPrefix,
    decoder,
    runT0: ran.tailsT0,
  });
  const undecodable = await countUndecodable(
    settings.kafkaBrokers,
    topicName(settings.topicPrefix, resource),
    copies,
    (n) => {
      consumed = n;
    },
  );
  const inWindowOrUnknown = [...copies.byKey].flatMap(([k, c]) =>
    after.has(k) || before.has(k) ? [] : c.map(() => k),
  );
  const cmp = compareRecords(
    inWindowOrUnknown,
    window.map((r) => versionKey(resource, r)),
    malformedIds,
  );
  const outside = (keys: Set<string>): { read: number; duplicates: number } => {
    const o = { read: 0, duplicates: 0 };
    for (const k of keys) {
      const n = copies.byKey.get(k)?.length ?? 0;
      if (n > 0) o.read += 1;
      if (n > 1) o.duplicates += n - 1;
    }
    return o;
  };
  const dlq = await checkWindowDlq(
    settings.kafkaBrokers,
    topicName(settings.topicPrefix, resource),
    window,
    malformed,
  );
  const runs = [...ran.runs.values()].filter((r) => r.resource === resource);
  const missingKeys = new Set(
    window
      .map((r) => versionKey(resource, r))
      .filter((k) => !malformedIds.has(k.split('@')[0] ?? k) && !copies.byKey.has(k)),
  );
  const missingTraces = await traceMissing(setup, ran, resource, window, missingKeys, copies, timeOf);
  return {
    report: {
      expected: cmp.expected,
      matched: cmp.matched,
      missing: cmp.missing,
      duplicates: cmp.duplicates,
      unexpected: cmp.unexpected,
      undecodable,
      beforeWindow: outside(before),
      afterWindow: outside(after),
      consumed,
      dlq,
      runs: {
        seen: runs.length,
        completed: ran.runCounts[resource]?.completed ?? 0,
        failed: ran.runCounts[resource]?.failed ?? 0,
        skippedTicks: ran.skippedTicks[resource] ?? 0,
      },
      missingSample: cmp.missingSample,
      unexpectedSample: cmp.unexpectedSample,
    },
    duplicateTraces: duplicateTraces(resource, copies.byKey, ran.events),
    missingTraces,
  };
}

/** The topic's messages that `readCopies` could not decode (its read again, counting every value). */
async function countUndecodable(
  brokers: string[],
  topic: string,
  copies: TopicCopies,
  consumed: (n: number) => void,
): Promise<number> {
  let values = 0;
  await readTopic({ brokers, topic }, (m) => {
    if (m.value !== null) values += 1;
  });
  consumed(values);
  return values - copies.keyOf.size;
}

/**
 * The window's malformed records in the DLQ: by key, or (a record malformed by losing its `_id` is dead-lettered
 * without a key) by its sort time in the dead letter's value (every live arrival has its own millisecond).
 */
async function checkWindowDlq(
  brokers: string[],
  topic: string,
  window: readonly Record<string, unknown>[],
  malformed: readonly { _id: string; kind: string }[],
): Promise<TailChaosResourceReport['dlq']> {
  const byKey = new Map<string, number>();
  const keylessTimes = new Map<string, number>();
  const messages = await readTopic({ brokers, topic: dlqTopicName(topic) }, (m) => {
    if (m.key !== null && m.key.length > 0)
      byKey.set(m.key.toString(), (byKey.get(m.key.toString()) ?? 0) + 1);
    else {
      let createdAt = '';
      try {
        createdAt = String((JSON.parse(m.value?.toString() ?? '{}') as Record<string, unknown>)['createdAt']);
      } catch {
        // not JSON: counted by number only
      }
      keylessTimes.set(createdAt, (keylessTimes.get(createdAt) ?? 0) + 1);
    }
  });
  const byId = new Map(window.map((r) => [String(r['_id']), r]));
  let found = 0;
  let doubled = 0;
  const missingIds: string[] = [];
  for (const m of malformed) {
    const n =
      m.kind === 'missing-id'
        ? (keylessTimes.get(String(byId.get(m._id)?.['createdAt'])) ?? 0)
        : (byKey.get(m._id) ?? 0);
    if (n > 0) found += 1;
    else missingIds.push(`${m._id} (${m.kind})`);
    if (n > 1) doubled += 1;
  }
  return { messages, expected: malformed.length, found, doubled, missingIds };
}

/** Each missing record (up to 20) traced: arrival, the runs that held it, its neighbours on the topic, Redis, events. */
async function traceMissing(
  setup: ChaosRunSetup,
  ran: TailsUnderChaos,
  resource: ResourceName,
  window: readonly Record<string, unknown>[],
  missingKeys: ReadonlySet<string>,
  copies: TopicCopies,
  timeOf: (r: Record<string, unknown>) => number,
): Promise<MissingTrace[]> {
  if (missingKeys.size === 0) return [];
  const oldestFirst = [...window].sort((a, b) => timeOf(a) - timeOf(b));
  const keys = oldestFirst.map((r) => versionKey(resource, r));
  const redis = connectRedis(setup.settings.redisUrl);
  redis.on('error', () => undefined);
  const out: MissingTrace[] = [];
  try {
    for (let i = 0; i < keys.length && out.length < 20; i++) {
      const key = keys[i] ?? '';
      if (!missingKeys.has(key)) continue;
      const record = oldestFirst[i] ?? {};
      const t = timeOf(record);
      const arrivedAt = Math.round((t - ran.since) / 100) / 10;
      const near = (step: number): { key: string; copies: DuplicateCopy[] } | undefined => {
        for (let j = i + step; j >= 0 && j < keys.length; j += step) {
          const c = copies.byKey.get(keys[j] ?? '');
          if (c !== undefined) return { key: keys[j] ?? '', copies: c };
        }
        return undefined;
      };
      const sides = [near(-1), near(1)];
      const lastCopy = Math.max(arrivedAt, ...sides.flatMap((s) => s?.copies.map((c) => c.at) ?? []));
      const id = String(record['_id']);
      const redisKeys = await scanKeys(redis, `${setup.settings.redisPrefix}*${id}*`);
      out.push({
        resource,
        key,
        sortTime: new Date(t).toISOString(),
        arrivedAt,
        runs: [...ran.runs.values()]
          .filter((r) => r.resource === resource && (r.from ?? 0) <= t && t < r.to)
          .map(
            (r) =>
              `${r.runId} seen ${r.seenAt}s ${r.outcome ?? 'unsettled'}${r.error === undefined ? '' : `: ${r.error.slice(0, 120)}`}`,
          ),
        neighbours: sides.map((s, k) =>
          s === undefined
            ? `${k === 0 ? 'older' : 'newer'}: none`
            : `${k === 0 ? 'older' : 'newer'} ${s.key}: ${s.copies.map(formatCopy).join(' ')}`,
        ),
        redis: await Promise.all(
          redisKeys.map(async (k) => `${k} = ${String(await redis.get(k).catch(() => '(not a string)'))}`),
        ),
        events: eventsBetween(ran.events, arrivedAt - 5, lastCopy + 5),
      });
    }
  } finally {
    await redis.quit();
  }
  return out;
}

async function scanKeys(redis: ReturnType<typeof connectRedis>, pattern: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    found.push(...keys);
  } while (cursor !== '0' && found.length < 20);
  return found;
}

export function formatTailChaosReport(r: TailChaosReport): string {
  return [
    `tail chaos ${r.exact ? 'EXACT' : 'NOT EXACT'} (${r.scale} + live ${r.ratePerSecond}/s; tails of ${TAIL_CHAOS_RESOURCES.join(', ')} every ${r.everyMs} ms; ` +
      `${r.brokers} broker(s), ${r.workers} workers x ${r.concurrency}, delivery ${r.delivery}): window ${r.window.from} .. ${r.window.to} (${r.window.seconds} s), ` +
      `${r.records} records; missing ${r.missing}, duplicates ${r.duplicates}, unexpected ${r.unexpected}; ` +
      `${r.kills} SIGKILLs (+${r.unplannedExits} unplanned exits, ${r.takenOver} slices taken over by liveness), ${r.redisRestarts} Redis restart(s), ${r.brokerStops} broker kill(s); ` +
      `caught up ${r.catchUpSeconds} s after the chaos; run ${r.runSeconds} s, wall ${r.wallSeconds} s`,
    `events: ${r.events.map((e) => `${e.at}s ${e.what}`).join('; ')}`,
    ...Object.entries(r.perResource).map(([k, v]) => `${k}: ${JSON.stringify(v)}`),
    ...r.failedRuns
      .slice(0, 10)
      .map((f) => `failed tail run ${f.runId} (seen ${f.seenAt}s): ${f.error ?? '?'}`),
    ...formatDuplicateTraces(r.duplicateTraces),
    ...r.missingTraces.map(
      (m) =>
        `missing ${m.resource} ${m.key} (${m.sortTime}, arrived ${m.arrivedAt}s): runs ${m.runs.join('; ') || 'none'} | ${m.neighbours.join(' | ')} | redis ${m.redis.join('; ') || 'none'} | events ${m.events.join('; ')}`,
    ),
  ].join('\n');
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const n = (name: string, key: keyof TailChaosOptions): Partial<TailChaosOptions> =>
    numFlag(name) === undefined ? {} : { [key]: numFlag(name) };
  const opts: TailChaosOptions = {
    ...n('kills', 'kills'),
    ...n('kill-every-ms', 'killEveryMs'),
    ...n('broker-down-ms', 'brokerDownMs'),
    ...n('workers', 'workers'),
    ...n('concurrency', 'concurrency'),
    ...n('brokers', 'brokers'),
    ...n('rate', 'ratePerSecond'),
    ...n('every-ms', 'everyMs'),
    ...n('seed', 'seed'),
    ...n('kafka-port', 'kafkaPort'),
    ...n('redis-port', 'redisPort'),
    ...(flag('stack-dir') === undefined ? {} : { stackDir: flag('stack-dir') as string }),
    ...(flag('broker-down') === undefined ? {} : { brokerDown: flag('broker-down') as 'kill' | 'stop' }),
    ...(flag('worker-log') === undefined ? {} : { workerLogFile: flag('worker-log') as string }),
    ...(process.argv.includes('--compiled') ? { compiled: true } : {}),
    ...(process.argv.includes('--keep-stack') ? { keepStack: true } : {}),
    ...(process.argv.includes('--keep-data') ? { keepData: true } : {}),
    ...(process.argv.includes('--no-redis-restart') ? { redisRestart: false } : {}),
    ...(process.argv.includes('--no-broker-stop') ? { brokerStop: false } : {}),
    ...(process.argv.includes('--no-storms') ? { storms: false } : {}),
  };
  runTailChaos(opts).then(
    (report) => {
      process.stdout.write(
        `${process.argv.includes('--json') ? JSON.stringify(report) : formatTailChaosReport(report)}\n`,
      );
      process.exit(report.exact ? 0 : 1);
    },
    (error: unknown) => {
      process.stderr.write(
        `tail-chaos: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
      );
      process.exit(1);
    },
  );
}
