/**
 * Issue 32, "Full history at the real service's cost": a full-history transactions backfill through the whole
 * pipeline, as a user runs it (`gamedata worker`, then `gamedata backfill transactions --full-history --until <now>
 * --wait`), against the simulator with the real service's cost model (`--latency realistic`: 0.6 s a request, filtered
 * pages 0.27 s side by side, unfiltered feed pages 0.24 s + 0.09 s per hour of depth SERIALISED per key; see
 * tools/simulator/feed-lane.ts), once per plan the CLI offers, each into fresh topics, queues and Redis keys, each on a
 * fresh simulator. Prints per plan: wall time, requests, transaction calls, the key's serial feed seconds, requests
 * answered after their client had gone, the key's floors (requests at 500 a minute; serial feed seconds), the worker's
 * CPU seconds over the run (the same work in every latency mode), when the first filtered transaction page was answered
 * (no record exists before it: the wall time is at least that plus the worker's CPU) and `verify`
 * (record by record against the simulator's truth, in this process). Before each run, `backfill --dry-run` with the
 * same flags gives the plan's estimate (requests, pages, serial feed seconds); the table shows measured / estimated
 * (issue 32: the estimate is what an operator sees before spending the key, so it must hold within 25 %).
 *
 *   npx tsx bench/full-history.ts [--scale small|medium|large] [--seed 7] [--latency realistic] [--plans auto,countryId,off]
 *     [--concurrency 32] [--max-concurrency N] [--processes N|auto] [--delivery exactly-once|at-least-once]
 *     [--no-verify] [--trace] [--trace-every 10] [--redis-profile]
 *
 * Each run prints the box's CPU over the backfill by process (issue 51 item 4): the worker (its tree), Redis (`INFO
 * cpu`), the Kafka broker and the registry (/proc, found by their command lines), and this process (the simulator,
 * with the trace's polls), in seconds and µs per record of the truth. `--delivery` sets the workers'
 * `GAMEDATA_DELIVERY` (default: the product's, exactly-once).
 *
 * `--processes` runs `gamedata worker --processes <N|auto>` (a supervisor and its forks) instead of one worker
 * process; the worker's CPU is then the sum over the supervisor's process tree. Every run also prints the peaks it
 * reached (sampled every 2 s): the worker's RSS (the tree's sum), Redis' `used_memory`, the Kafka broker's RSS, and at
 * the end the run's topic's log bytes on the broker's disk (`KAFKA_LOG_DIR`, default `.stack/kafka/data`). Scale large
 * holds ~10 M truth rows in this process: run it with `node --max-old-space-size=12000 --import tsx bench/full-history.ts`.
 *
 * `--trace` prints every 10 s (`--trace-every`, seconds) of the run: the slices active and queued (BullMQ), completed, and the upstream's
 * requests and transaction calls in those 10 s (where the run's time goes: rounds, slots, or the key); at the end, the
 * walks that finished last and the slices of the very last one (queued, started, finished; range; pages, splits).
 * `--redis-profile` prints where Redis' time went by script and key family (`redis-profile.ts`: its slow log at 0 µs).
 * `BENCH_CPU_PROF=<dir>` (env) makes every CLI process (the worker too) write a V8 CPU profile there.
 *
 * Services: KAFKA_BROKERS / SCHEMA_REGISTRY_URL / REDIS_URL (`eval "$(scripts/stack.sh up)"`). Run it alone on the
 * machine: it measures wall time.
 */
import { startSimulator, type Simulator } from '../tools/simulator/index.js';
import { parseLatencySpec } from '../tools/simulator/options.js';
import {
  cpuSeconds,
  describeMachine,
  findProcess,
  processTree,
  rssBytes,
  treeCpuSeconds,
} from './machine.js';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { Queue } from 'bullmq';
import { QUEUE_NAMES } from '../src/pipeline/contract/queue-names.js';
import type { SliceJobData, SliceResult } from '../src/pipeline/planner/index.js';
import { benchEnv, flag, gamedata, mustGamedata, removeRunKeys, verifyTransactions } from './gamedata-cli.js';
import { describeUsage, redisUsage, usageBetween } from './redis-usage.js';
import { describeProfile, startRedisProfile } from './redis-profile.js';

const args = process.argv.slice(2);
const scale = flag('scale', 'small') as 'small' | 'medium' | 'large';
const seed = Number(flag('seed', '7'));
const latency = parseLatencySpec(flag('latency', 'realistic'));
const plans = flag('plans', 'auto,countryId,off').split(',');
const concurrency = flag('concurrency', '32');
const maxConcurrency = flag('max-concurrency', '');
const processes = flag('processes', '');
const delivery = flag('delivery', '');
const verify = !args.includes('--no-verify');
const trace = args.includes('--trace');
const redisProfile = args.includes('--redis-profile');
const traceEveryS = Number(flag('trace-every', '10'));
const KEY = 'bench-key';
const KEY_LIMIT_PER_MIN = 500;

interface Outcome {
  plan: string;
  wallS: number;
  /** The worker process's CPU seconds from the backfill's start to its end (/proc; 0 where unreadable). */
  workerCpuS: number;
  /** Redis' CPU seconds over the run (`INFO cpu`: everything that Redis served meanwhile). */
  redisCpuS: number;
  /** When the first filtered transaction page was answered, s from the backfill's start (NaN: none was). */
  firstPageS: number;
  requests: number;
  txCalls: number;
  feedS: number;
  abandoned: number;
  slowestAbandonedS: number;
  verify: string;
  line: string;
  estimate: { pages: number; requests: number; feedS: number; cpuS: number | undefined } | undefined;
}

/**
 * The totals of `backfill --dry-run`: `total: N pages, R requests, F s of serial feed: ...` and `worker CPU: about C
 * core-minutes: ...` (or `core-seconds`).
 */
function parseEstimate(out: string): Outcome['estimate'] {
  const m = /total: (\d+) pages, (\d+) requests, (\d+) s of serial feed/.exec(out);
  const cpu = /worker CPU: about ([\d.]+) core-(minutes|seconds)/.exec(out);
  return m === null
    ? undefined
    : {
        pages: Number(m[1]),
        requests: Number(m[2]),
        feedS: Number(m[3]),
        cpuS: cpu === null ? undefined : Number(cpu[1]) * (cpu[2] === 'minutes' ? 60 : 1),
      };
}

async function runPlan(plan: string, index: number): Promise<Outcome> {
  const sim: Simulator = await startSimulator({
    scale,
    seed,
    latency,
    apiKeys: [KEY],
  });
  const tag = `fh${Date.now().toString(36)}${index}`;
  const env: NodeJS.ProcessEnv = {
    ...benchEnv(sim.url, KEY, tag),
    ...(delivery === '' ? {} : { GAMEDATA_DELIVERY: delivery }),
  };
  await mustGamedata(['schemas', 'register'], env);
  await mustGamedata(['topics', 'create'], env);
  const worker = gamedata(
    [
      'worker',
      '--concurrency',
      concurrency,
      ...(maxConcurrency === '' ? [] : ['--max-concurrency', maxConcurrency]),
      ...(processes === '' ? [] : ['--processes', processes]),
    ],
    env,
  );
  try {
    const until = new Date(sim.now()).toISOString();
    const estimate = parseEstimate(
      await mustGamedata(
        ['backfill', 'transactions', '--full-history', '--until', until, '--partition', plan, '--dry-run'],
        env,
      ),
    );
    sim.resetStats();
    const workerPid = worker.child.pid ?? 0;
    const redisUrl = env['REDIS_URL'] ?? 'redis://127.0.0.1:16379';
    const kafkaPid = findProcess('kafka.Kafka');
    const cpuBefore = treeCpuSeconds(workerPid);
    const peaks = samplePeaks(workerPid, kafkaPid, redisUrl);
    const profile = redisProfile ? await startRedisProfile(redisUrl) : undefined;
    const redisBefore = await redisUsage(redisUrl);
    const box = boxCpu(kafkaPid);
    const started = performance.now();
    const tracer = trace ? traceRun(sim, tag, started) : undefined;
    const out = await mustGamedata(
      ['backfill', 'transactions', '--full-history', '--until', until, '--partition', plan, '--wait'],
      env,
    );
    const wallS = (performance.now() - started) / 1000;
    const workerCpuS = treeCpuSeconds(workerPid) - cpuBefore;
    const boxSpent = box.spent();
    const peak = await peaks.stop();
    console.log(
      `${plan}: peaks: worker RSS ${mib(peak.workerRss)} MiB (${peak.workerProcesses} processes), Redis used_memory ${mib(peak.redisUsed)} MiB (${mib(peak.redisStart)} at the start), Kafka broker RSS ${mib(peak.kafkaRss)} MiB; the run's topic ${mib(topicLogBytes(`${tag}.transactions`))} MiB on the broker's disk`,
    );
    const redisSpent = usageBetween(redisBefore, await redisUsage(redisUrl));
    const profiled = await profile?.stop();
    await tracer?.stop();
    const stats = sim.stats();
    let records = 0;
    for (const _ of sim.eachTruth('transactions')) records += 1;
    console.log(`${plan}: ${describeUsage(redisSpent, records)}`);
    if (profiled !== undefined) console.log(describeProfile(profiled, records));
    const us = (cpuS: number): string => `${cpuS.toFixed(1)} s (${((cpuS / records) * 1e6).toFixed(0)} µs)`;
    console.log(
      `${plan}: box CPU over the backfill, s (µs per record of ${records}): worker ${us(workerCpuS)}, Redis ${us(redisSpent.cpuS)}, Kafka broker ${us(boxSpent.kafkaS)}, registry ${us(boxSpent.registryS)}, simulator (this process) ${us(boxSpent.simulatorS)}; all but the simulator ${us(workerCpuS + redisSpent.cpuS + boxSpent.kafkaS + boxSpent.registryS)}`,
    );
    console.log(
      `${plan}: ${
        out
          .trim()
          .split('\n')
          .filter((l) => l.startsWith('run '))
          .pop() ?? ''
      } (${wallS.toFixed(1)} s with planning)`,
    );
    const verdict = verify
      ? (await verifyTransactions(tag, sim.eachTruth('transactions'))).line
      : 'not verified';
    return {
      plan,
      wallS,
      workerCpuS,
      redisCpuS: redisSpent.cpuS,
      firstPageS: (stats.firstFilteredTransactionMs ?? Number.NaN) / 1000,
      requests: stats.httpRequests,
      txCalls: stats.procedureCalls.byProcedure['transaction.getPaginatedTransactions'] ?? 0,
      feedS: stats.feedLane.busyMs / 1000,
      abandoned: stats.answeredAfterClientGone.requests,
      slowestAbandonedS: stats.answeredAfterClientGone.slowestMs / 1000,
      verify: verdict,
      estimate,
      line:
        out
          .trim()
          .split('\n')
          .filter((l) => l.startsWith('run '))
          .pop() ?? '',
    };
  } finally {
    worker.child.kill('SIGTERM');
    const { out } = await worker.done;
    // The worker's slot changes (printed even when quiet): how far the slot sizing grew the slots.
    const slots = out.split('\n').filter((l) => l.includes('slices at once'));
    console.log(`${plan}: ${slots.length} slot changes${slots.length > 0 ? ':' : ''}`);
    for (const l of slots.slice(-12)) console.log(`  ${l}`);
    await sim.close();
    await removeRunKeys(tag);
  }
}

/** CPU of the Kafka broker (`kafkaPid`), the registry and this process (the simulator) from now until `spent()`. */
function boxCpu(kafkaPid: number | undefined): {
  spent(): { kafkaS: number; registryS: number; simulatorS: number };
} {
  const registryPid = findProcess('quarkus.http.port') ?? findProcess('schema-registry');
  const of = (pid: number | undefined): number => (pid === undefined ? 0 : cpuSeconds(pid));
  const k0 = of(kafkaPid);
  const r0 = of(registryPid);
  const s0 = process.cpuUsage();
  return {
    spent() {
      const s = process.cpuUsage(s0);
      return {
        kafkaS: of(kafkaPid) - k0,
        registryS: of(registryPid) - r0,
        simulatorS: (s.user + s.system) / 1e6,
      };
    },
  };
}

const mib = (bytes: number): string => (bytes / 2 ** 20).toFixed(0);

interface Peaks {
  workerRss: number;
  workerProcesses: number;
  redisUsed: number;
  /** Redis' `used_memory` at the first sample (what other keys hold). */
  redisStart: number;
  kafkaRss: number;
}

/** Every 2 s until stopped: the worker tree's summed RSS, Redis' `used_memory`, the Kafka broker's RSS; the peak of each. */
function samplePeaks(
  workerPid: number,
  kafkaPid: number | undefined,
  redisUrl: string,
): { stop(): Promise<Peaks> } {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  const peak: Peaks = { workerRss: 0, workerProcesses: 0, redisUsed: 0, redisStart: -1, kafkaRss: 0 };
  const sample = async (): Promise<void> => {
    const tree = processTree(workerPid);
    const rss = tree.reduce((sum, p) => sum + rssBytes(p), 0);
    if (rss > peak.workerRss) peak.workerRss = rss;
    peak.workerProcesses = Math.max(peak.workerProcesses, tree.length);
    if (kafkaPid !== undefined) peak.kafkaRss = Math.max(peak.kafkaRss, rssBytes(kafkaPid));
    const used = /^used_memory:(\d+)/m.exec(await redis.info('memory'))?.[1];
    if (used !== undefined) peak.redisUsed = Math.max(peak.redisUsed, Number(used));
    if (used !== undefined && peak.redisStart < 0) peak.redisStart = Number(used);
  };
  void sample().catch(() => undefined);
  const timer = setInterval(() => void sample().catch(() => undefined), 2000);
  return {
    async stop() {
      clearInterval(timer);
      await sample().catch(() => undefined);
      redis.disconnect();
      return peak;
    },
  };
}

/** The bytes of `topic`'s partitions' segment logs on the broker's disk (not the indexes, preallocated at 10 MB each) (`KAFKA_LOG_DIR`, default `.stack/kafka/data`; 0 if not found). */
function topicLogBytes(topic: string): number {
  const dir = process.env['KAFKA_LOG_DIR'] ?? join(process.cwd(), '.stack/kafka/data');
  let bytes = 0;
  try {
    for (const part of readdirSync(dir))
      if (part.startsWith(`${topic}-`))
        for (const file of readdirSync(join(dir, part)))
          if (file.endsWith('.log')) bytes += statSync(join(dir, part, file)).size;
  } catch {
    return 0;
  }
  return bytes;
}

/** Every `--trace-every` s: slices active / queued / completed, and the upstream's requests and transaction calls since the last. */
function traceRun(sim: Simulator, tag: string, started: number): { stop(): Promise<void> } {
  const queue = new Queue(QUEUE_NAMES.slices, {
    connection: { url: process.env['REDIS_URL'] ?? '' },
    prefix: tag,
  });
  let last = { requests: 0, calls: 0 };
  let lastBy: Record<string, number> = {};
  const tick = async (): Promise<void> => {
    const c = await queue.getJobCounts('active', 'waiting', 'prioritized', 'delayed', 'completed');
    const st = sim.stats();
    const now = {
      requests: st.httpRequests,
      calls: st.procedureCalls.byProcedure['transaction.getPaginatedTransactions'] ?? 0,
    };
    console.log(
      `  t=${((performance.now() - started) / 1000).toFixed(traceEveryS < 10 ? 1 : 0)} s: active ${c['active']}, queued ${(c['waiting'] ?? 0) + (c['prioritized'] ?? 0) + (c['delayed'] ?? 0)}, completed ${c['completed']}; +${now.requests - last.requests} requests, +${now.calls - last.calls} tx calls`,
    );
    last = now;
    // Other procedures since the last tick (planning's listings and probes).
    const others = Object.entries(st.procedureCalls.byProcedure)
      .filter(([p, n]) => p !== 'transaction.getPaginatedTransactions' && n > (lastBy[p] ?? 0))
      .map(([p, n]) => `+${n - (lastBy[p] ?? 0)} ${p}`);
    if (others.length > 0) console.log(`    ${others.join(', ')}`);
    lastBy = { ...st.procedureCalls.byProcedure };
    // The run's last slices, named (what the end waits for: a slice that cannot split, or one that will not).
    if ((c['active'] ?? 0) > 0 && (c['active'] ?? 0) <= 4 && (c['waiting'] ?? 0) === 0)
      for (const job of await queue.getJobs(['active'])) {
        const d = job.data as SliceJobData;
        console.log(
          `    active: ${JSON.stringify(d.filters)} depth ${d.depth} [${new Date(d.start).toISOString()}, ${new Date(d.end).toISOString()})`,
        );
      }
  };
  const timer = setInterval(() => void tick().catch(() => undefined), traceEveryS * 1000);
  return {
    async stop() {
      clearInterval(timer);
      await printLongestWalks(queue, started);
      await queue.close();
    },
  };
}

/**
 * The walks (a walk's filters: a user, a country) that finished last, with the time their first slice started and
 * their last finished since the run began and how many slices (pieces) they had: what the run's end waited for.
 */
async function printLongestWalks(queue: Queue, started: number): Promise<void> {
  const origin = performance.timeOrigin + started;
  const walks = new Map<string, { first: number; last: number; slices: number }>();
  const jobs = await queue.getJobs(['completed'], 0, -1);
  for (const job of jobs) {
    const key = JSON.stringify((job.data as SliceJobData).filters);
    const w = walks.get(key) ?? { first: Number.POSITIVE_INFINITY, last: 0, slices: 0 };
    w.first = Math.min(w.first, job.processedOn ?? Number.POSITIVE_INFINITY);
    w.last = Math.max(w.last, job.finishedOn ?? 0);
    w.slices += 1;
    walks.set(key, w);
  }
  const latest = [...walks.entries()].sort((a, b) => b[1].last - a[1].last).slice(0, 5);
  console.log(
    '  the walks that finished last (their first slice started, their last finished, s since the run began):',
  );
  for (const [filters, w] of latest)
    console.log(
      `    ${filters}: ${((w.first - origin) / 1000).toFixed(1)} -> ${((w.last - origin) / 1000).toFixed(1)} s, ${w.slices} slice(s)`,
    );
  // The last walk's slices: when each was queued, started and finished, its range (hours before its run's end), pages.
  const last = latest[0];
  if (last === undefined) return;
  const until = jobs.reduce((m, j) => Math.max(m, (j.data as SliceJobData).end), 0);
  const at = (t: number | undefined): string => (t === undefined ? '-' : ((t - origin) / 1000).toFixed(1));
  const hours = (t: number): string => ((until - t) / 3_600_000).toFixed(0);
  console.log(`  its slices (queued / started / finished s; hours back; depth; pages, fetched, splits):`);
  for (const job of jobs
    .filter((j) => JSON.stringify((j.data as SliceJobData).filters) === last[0])
    .sort((a, b) => (a.processedOn ?? 0) - (b.processedOn ?? 0))) {
    const d = job.data as SliceJobData;
    const r = job.returnvalue as SliceResult | undefined;
    console.log(
      `    ${at(job.timestamp)} / ${at(job.processedOn)} / ${at(job.finishedOn)}: ${hours(d.end)}-${hours(d.start)} h, depth ${d.depth}; ${r?.pages ?? '-'} pages, ${r?.fetched ?? '-'} rows, ${r?.splits ?? '-'} splits`,
    );
  }
}

async function main(): Promise<void> {
  console.log(`machine: ${describeMachine()}; date ${new Date().toISOString()}`);
  console.log(
    `scale ${scale}, seed ${seed}, latency ${JSON.stringify(latency)}, ${processes === '' ? 'one worker' : `worker --processes ${processes}`} x ${concurrency}${maxConcurrency === '' ? '' : ` (max ${maxConcurrency})`}, plans ${plans.join(', ')}`,
  );
  const outcomes: Outcome[] = [];
  for (const [i, plan] of plans.entries()) {
    outcomes.push(await runPlan(plan, i));
  }
  const fastest = Math.min(...outcomes.map((o) => o.wallS));
  console.log(
    '\n| plan | wall s | x fastest | first filtered tx page s | worker CPU s | Redis CPU s (x worker) | requests | request floor s (500/min) | tx calls | serial feed s | answered after client gone (slowest s) | verify | dry run: tx pages / requests / feed s | measured / estimated: pages, feed s, key floor, worker CPU |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---|');
  for (const o of outcomes) {
    const e = o.estimate;
    // The key's floor: the larger of the requests at the key's rate and the serial feed seconds. Measured at full
    // batches (the calls over 50): a run the key does not bind sends emptier batches, which cost it nothing, and the
    // estimate counts full ones (what a run the key binds sends).
    const floor = (requests: number, feedS: number): number =>
      Math.max((requests / KEY_LIMIT_PER_MIN) * 60, feedS);
    const ratio = (m: number, est: number): string =>
      est > 0 ? (m / est).toFixed(2) : m > 0 ? 'inf' : '1.00';
    const ratios =
      e === undefined
        ? 'no estimate'
        : `${ratio(o.txCalls, e.pages)}, ${ratio(o.feedS, e.feedS)}, ${ratio(floor(Math.ceil(o.txCalls / 50), o.feedS), floor(e.requests, e.feedS))}, ${e.cpuS === undefined ? '-' : ratio(o.workerCpuS, e.cpuS)}`;
    console.log(
      `| ${o.plan} | ${o.wallS.toFixed(1)} | ${(o.wallS / fastest).toFixed(2)} | ${o.firstPageS.toFixed(1)} | ${o.workerCpuS.toFixed(1)} | ${o.redisCpuS.toFixed(1)} (${(o.redisCpuS / Math.max(o.workerCpuS, 1e-9)).toFixed(2)}) | ${o.requests} | ${((o.requests / KEY_LIMIT_PER_MIN) * 60).toFixed(1)} | ${o.txCalls} | ${o.feedS.toFixed(1)} | ${o.abandoned} (${o.slowestAbandonedS.toFixed(1)}) | ${o.verify} | ${e === undefined ? '-' : `${e.pages} / ${e.requests} / ${e.feedS}`} | ${ratios} |`,
    );
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
