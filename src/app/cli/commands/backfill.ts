/**
 * `gamedata backfill <resource...> [--since ISO] [--until ISO] [--filter key=value]... [--full-history]
 * [--partition off|countryId] [--replay] [--wait]`: plans the run (density probes, walks) and enqueues it as one BullMQ flow; workers (`gamedata worker`)
 * do the reading. With `--wait` it follows the run to its end and exits non-zero if it failed.
 * Settings: GAMEDATA_API_URL, GAMEDATA_API_KEY, REDIS_URL, GAMEDATA_QUEUE_PREFIX, GAMEDATA_REDIS_PREFIX.
 */
import { availableParallelism } from 'node:os';
import type { Command } from 'commander';
import { ConfigError } from '../../../foundation/errors/index.js';
import { createPipelineRuntime, type PipelineRuntime } from '../../index.js';
import { startBackfill } from '../../../pipeline/queue/index.js';
import { checkRunId } from '../../../pipeline/contract/index.js';
import { readPipelineSettings, type PipelineSettings } from '../../../foundation/config/index.js';
import { commandRedisLines } from '../connection-lines.js';
import { addressOf, requireReachable } from '../service-probes.js';
import { waitForRunWithProgress } from '../../status/index.js';
import {
  estimatePlanCost,
  sampleWalkPages,
  formatPlanCost,
  parseFilters,
  parseResources,
  planBackfill,
  AUTO_PARTITION_ABOVE_ROWS,
  WORKER_CPU_MICROS_PER_RECORD,
  type BackfillRequest,
  type PlanBackfillOptions,
  type PlannerSource,
} from '../../../pipeline/planner/index.js';

interface BackfillFlags {
  since?: string;
  until?: string;
  filter: string[];
  fullHistory?: boolean;
  replay?: boolean;
  wait?: boolean;
  targetRows?: string;
  planFor: string;
  runId?: string;
  priority: string;
  partition: string;
  dryRun?: boolean;
  cpuPerRecord?: string;
}

function parseTime(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const ms = Date.parse(value);
  if (Number.isNaN(ms))
    throw new ConfigError(`${flag} must be an ISO-8601 date-time, got ${JSON.stringify(value)}`);
  return ms;
}

/** The flags that shape the plan, checked. @throws ConfigError naming the flag and the value. */
function parsePlanFlags(flags: BackfillFlags): {
  targetRows: number;
  planFor: 'auto' | 'rounds' | 'requests';
  priority: 'backfill' | 'rescan';
  cpuPerRecord: number | undefined;
  partition: 'countryId' | 'off';
  partitionAboveRows: number;
} {
  const targetRows = Number(flags.targetRows ?? '5000');
  if (!Number.isSafeInteger(targetRows) || targetRows < 1)
    throw new ConfigError(`--target-rows must be a positive integer, got ${String(flags.targetRows)}`);
  if (flags.planFor !== 'auto' && flags.planFor !== 'rounds' && flags.planFor !== 'requests')
    throw new ConfigError(
      `--plan-for must be auto, rounds or requests, got ${JSON.stringify(flags.planFor)}`,
    );
  if (flags.priority !== 'backfill' && flags.priority !== 'rescan')
    throw new ConfigError(`--priority must be backfill or rescan, got ${JSON.stringify(flags.priority)}`);
  const cpuPerRecord = flags.cpuPerRecord === undefined ? undefined : Number(flags.cpuPerRecord);
  if (cpuPerRecord !== undefined && !(Number.isFinite(cpuPerRecord) && cpuPerRecord > 0))
    throw new ConfigError(
      `--cpu-per-record must be a positive number of µs, got ${JSON.stringify(flags.cpuPerRecord)}`,
    );
  if (cpuPerRecord !== undefined && flags.dryRun !== true)
    throw new ConfigError('--cpu-per-record prices a --dry-run: add --dry-run, or leave it out');
  if (flags.partition !== 'off' && flags.partition !== 'countryId' && flags.partition !== 'auto')
    throw new ConfigError(
      `--partition must be auto, countryId or off, got ${JSON.stringify(flags.partition)}`,
    );
  return {
    targetRows,
    planFor: flags.planFor,
    priority: flags.priority,
    cpuPerRecord,
    partition: flags.partition === 'off' ? 'off' : 'countryId',
    partitionAboveRows: flags.partition === 'auto' ? AUTO_PARTITION_ABOVE_ROWS : 0,
  };
}

/**
 * `--dry-run`: plans the run without enqueueing it and prints what it will cost the key. The walks the plan cannot
 * price (per user, quiet partition walks) are priced by samples: this estimate's own probe pages, never the run's.
 */
async function printDryRun(
  request: BackfillRequest,
  planner: PlannerSource,
  plan: PlanBackfillOptions & { partition: 'countryId' | 'off' },
  cpuMicrosPerRecord: number | undefined,
): Promise<void> {
  const dry = await planBackfill(request, planner, plan);
  const p = dry.run.partition;
  if (p !== undefined)
    console.log(
      `partition by ${p.key}: ${p.provenTypes.length} types proven on ${((p.window.end - p.window.start) / 3_600_000).toFixed(1)} h, ${p.unprovenTypes.length} walked per user${p.used === false ? ' (not used: the plan falls back)' : ''}`,
    );
  const sampled = await sampleWalkPages(dry.slices, (r, f) => planner.probe(r, f), {
    windowRows: dry.planning.walkWindowRows,
    key: plan.partition,
  });
  console.log(
    formatPlanCost(
      estimatePlanCost(dry, {
        sampled,
        machineCores: availableParallelism(),
        ...(cpuMicrosPerRecord === undefined ? {} : { cpuMicrosPerRecord }),
      }),
    ),
  );
}

export function register(program: Command): void {
  program
    .command('backfill')
    .description('plan a backfill of resources into Kafka and enqueue it (run + slice jobs) for the workers')
    .argument('<resource...>', 'articles, transactions, parties, users, elections, donations, or all')
    .option(
      '--since <iso>',
      'oldest time to read (default: the earliest record; 72 h for the unfiltered transaction feed)',
    )
    .option('--until <iso>', 'newest time, exclusive (default: now)')
    .option(
      '--filter <key=value>',
      'listing filter (repeatable)',
      (v: string, acc: string[]) => [...acc, v],
      [] as string[],
    )
    .option('--full-history', 'transactions: walk every user (the unfiltered feed reaches only 72 h)')
    .option(
      '--partition <key>',
      'full-history transactions: countryId = walk per country the types a proof on the newest hours of the feed shows ' +
        'that each row lies in exactly one walk (each trade read once), per user the rest; off = per user only; ' +
        `auto = countryId when the feed's rate puts ${AUTO_PARTITION_ABOVE_ROWS} rows or more in its 71 h (where reading ` +
        'each trade once saves more of the key than the proof costs), else off. Transactions over the feed window ' +
        'deeper than an hour are read per country unless off',
      'auto',
    )
    .option('--replay', 'publish records earlier runs already published (still once within this run)')
    .option('--wait', 'follow the run until it completes; exit 1 if it fails')
    .option(
      '--dry-run',
      "plan only: print per resource the slices, pages, requests and serial feed seconds the run would cost the key, its time on one key, and the worker CPU of its records with the worker processes that keep pace (planning's own probes and proof are spent); enqueue nothing",
    )
    .option(
      '--cpu-per-record <us>',
      `with --dry-run: the worker CPU a record costs on your workers' machines, µs (bench/pipeline.ts measures it; default ${WORKER_CPU_MICROS_PER_RECORD}, this project's 2-core box)`,
    )
    .option('--target-rows <n>', 'rows per planned slice (where the plan is for requests)', '5000')
    .option(
      '--plan-for <goal>',
      'what the plan minimises: rounds = slices of one page each, all read in one round; requests = slices of ' +
        "--target-rows (fewer, larger slices, each read page after page: a longer run); auto = requests while the key's " +
        'budget binds, else rounds',
      'auto',
    )
    .option(
      '--run-id <id>',
      "fix the run id: letters, digits, '.', '_', '-' (default: derived from resources and time)",
    )
    .option(
      '--priority <p>',
      "the run's priority on the API key's shared budget: backfill, or rescan (yields to every backfill and tail)",
      'backfill',
    )
    .action(runBackfill);
}

/** The backfill: plan the run and enqueue it (or print its cost with `--dry-run`); with `--wait`, follow it. */
async function runBackfill(names: string[], flags: BackfillFlags): Promise<void> {
  const resources = parseResources(names);
  const { targetRows, planFor, priority, cpuPerRecord, partition, partitionAboveRows } =
    parsePlanFlags(flags);
  if (flags.runId !== undefined) checkRunId(flags.runId, '--run-id');
  const settings = readPipelineSettings({ api: true });
  await requireReachable({ redisUrl: settings.redisUrl });
  const rt = await createPipelineRuntime(settings, { kafka: false });
  // A Redis restart under --wait: one line when it goes, one when it is back (the run is followed on).
  commandRedisLines('backfill', addressOf(settings.redisUrl)).watch(rt.redis);
  try {
    const since = parseTime('--since', flags.since);
    const until = parseTime('--until', flags.until);
    const request = {
      resources,
      filters: parseFilters(flags.filter),
      fullHistory: flags.fullHistory === true,
      replay: flags.replay === true,
      ...(since === undefined ? {} : { since }),
      ...(until === undefined ? {} : { until }),
      ...(flags.runId === undefined ? {} : { runId: flags.runId }),
    };
    const plan = { targetRows, plan: planFor, partition, partitionAboveRows } as const;
    if (flags.dryRun === true) {
      await printDryRun(request, rt.planner, plan, cpuPerRecord);
      return;
    }
    const planned = await startBackfill(request, {
      connection: rt.redis,
      prefix: settings.queuePrefix,
      planner: rt.planner,
      counters: rt.counters,
      runs: rt.runs,
      users: rt.users,
      plan,
      priority,
    });
    console.log(`run ${planned.run.runId}: ${planned.slices.length} slices over ${resources.join(', ')}`);
    if (flags.wait !== true) return;
    await followRun(rt, settings, planned.run.runId);
  } finally {
    await rt.close();
  }
}

/** `--wait`: follows the run to its end with live progress, then prints its counters and rate. */
async function followRun(rt: PipelineRuntime, settings: PipelineSettings, runId: string): Promise<void> {
  const started = Date.now();
  // Live progress (issue 7): bars with records/s and ETA on a terminal, one line per change otherwise.
  const result = await waitForRunWithProgress(runId, {
    redis: rt.redis,
    queuePrefix: settings.queuePrefix,
    redisPrefix: settings.redisPrefix,
    pollMs: 1000,
  });
  const secs = (Date.now() - started) / 1000;
  const c = result.counters;
  console.log(
    `run ${result.runId} completed in ${secs.toFixed(1)} s: fetched ${c.fetched}, published ${c.published}, ` +
      `deduplicated ${c.deduplicated}, dead-lettered ${c.deadLettered} (${(c.published / Math.max(secs, 0.001)).toFixed(0)} records/s)`,
  );
  const u = result.users;
  if (u !== undefined && (u.unlistedUsers > 0 || u.discoveredUsers > 0))
    console.warn(
      `warning: ${u.unlistedUsers} user listing item(s) had no _id; ${u.discoveredUsers} user(s) not in the listings were walked because a trade revealed them` +
        (u.discoveredUsers < u.unlistedUsers
          ? ' (fewer than unlisted: some of those users may never have traded with a walked user)'
          : ''),
    );
}
