/**
 * `gamedata tail <resource...> --every 30s`: registers incremental tails (BullMQ job schedulers) that every
 * `gamedata worker` fires: each run reads from the resource's watermark minus a lookback up to the newest record,
 * dedup drops what was already published, the watermark advances only when every slice completed, and two runs of
 * one resource never overlap. `--cron "0 3 * * *"` registers a scheduled full backfill instead (`--replay` to
 * publish everything again). `--list` shows the schedules, `--remove` deletes them, `--reset` forgets watermarks.
 * Settings: REDIS_URL, GAMEDATA_QUEUE_PREFIX, GAMEDATA_REDIS_PREFIX.
 */
import type { Command } from 'commander';
import { ConfigError } from '../../../foundation/errors/index.js';
import { connectRedis } from '../../../pipeline/queue/index.js';
import { formatDuration, parseDuration, readPipelineSettings } from '../../../foundation/config/index.js';
import { commandRedisLines } from '../connection-lines.js';
import { addressOf, requireReachable } from '../service-probes.js';
import { parseResources } from '../../../pipeline/planner/index.js';
import type { ResourceName } from '../../../foundation/models/index.js';
import {
  createScheduleRegistry,
  createTailStateStore,
  DEFAULT_TAIL_SCHEDULE,
  parseRescanShare,
  rescanParts,
  type ScheduleInfo,
  type ScheduleRegistry,
} from '../../../pipeline/schedules/index.js';

interface TailFlags {
  every: string;
  lookback: string;
  rescanEvery: string;
  rescanPeriod: string;
  rescanBudget: string;
  since?: string;
  fullHistory?: boolean;
  cron?: string;
  tz?: string;
  replay?: boolean;
  targetRows?: string;
  list?: boolean;
  remove?: boolean;
  reset?: boolean;
}

function describe(s: ScheduleInfo): string {
  const when =
    s.kind === 'tail' ? `every ${formatDuration(s.every ?? Number.NaN)}` : `cron "${s.pattern ?? '?'}"`;
  const d = s.data;
  const extra =
    d === undefined
      ? ''
      : s.kind === 'tail'
        ? `, lookback ${formatDuration(d.lookbackMs)}, ${(d.rescanParts ?? 0) > 0 ? `rescan spread over ${d.rescanParts} ticks (at most ${Math.round((d.rescanShare ?? 0.2) * 100)}% of the key while busy)` : 'no spread rescan'}${d.rescanEveryMs < 0 ? '' : d.rescanEveryMs === 0 ? ', full reread every run' : `, full reread every ${formatDuration(d.rescanEveryMs)}`}`
        : `${d.replay ? ', replay' : ''}${d.fullHistory ? ', full history' : ''}`;
  return `${s.id}: ${s.kind} ${s.resource} ${when}${extra}${s.next === undefined ? '' : `, next ${new Date(s.next).toISOString()}`}`;
}

export function register(program: Command): void {
  program
    .command('tail')
    .description(
      'keep topics fresh: incremental tails every N (or full backfills on a cron), fired by the workers',
    )
    .argument('[resource...]', 'articles, transactions, parties, users, elections, donations, or all')
    .option('--every <duration>', 'tail interval (500ms, 30s, 2m, 1h)', '30s')
    .option(
      '--lookback <duration>',
      'each run starts this far below the watermark (late arrivals)',
      formatDuration(DEFAULT_TAIL_SCHEDULE.lookbackMs),
    )
    .option(
      '--rescan-period <duration>',
      'changing resources (users, parties, articles, elections): reread everything once per period, one part per tick, to catch changes (off = no spread rescans)',
      '24h',
    )
    .option(
      '--rescan-budget <share>',
      "most of the API key's requests spread rescans may spend while the key is busy (20% or 0.2)",
      '20%',
    )
    .option(
      '--rescan-every <duration>',
      'legacy: a full reread replacing a tail run this often (0 = every run, never = off)',
      'never',
    )
    .option('--since <iso>', 'where a new tail starts (default: the earliest record)')
    .option('--full-history', "transactions: walk every user (history beyond the feed's 72 h)")
    .option('--cron <pattern>', 'schedule a full backfill on this cron pattern instead of a tail')
    .option('--tz <zone>', "time zone of --cron (default: the worker's)")
    .option('--replay', 'with --cron: publish what earlier runs published (once per run)')
    .option('--target-rows <n>', 'rows per planned slice', '5000')
    .option('--list', 'list the schedules')
    .option('--remove', 'remove the tails (with --cron: the cron backfills) of the resources')
    .option('--reset', 'forget the watermarks of the resources (the next run starts over from --since)')
    .action(runTail);
}

/** The tail command: list, remove or reset the resources' schedules, or register them. */
async function runTail(names: string[], flags: TailFlags): Promise<void> {
  const settings = readPipelineSettings({});
  await requireReachable({ redisUrl: settings.redisUrl });
  const redis = commandRedisLines('tail', addressOf(settings.redisUrl)).watch(
    connectRedis(settings.redisUrl),
  );
  const registry = createScheduleRegistry({
    connection: redis,
    prefix: settings.queuePrefix,
    ...(settings.retention === undefined ? {} : { retention: { maxAgeMs: settings.retention.maxAgeMs } }),
  });
  try {
    if (flags.list === true) {
      const all = await registry.list();
      if (all.length === 0) console.log('no schedules');
      for (const s of all) console.log(describe(s));
      return;
    }
    if (names.length === 0) throw new ConfigError('tail needs at least one resource (or --list)');
    const resources = parseResources(names);
    if (flags.remove === true) {
      for (const r of resources) {
        const removed = await registry.remove(flags.cron === undefined ? 'tail' : 'backfill', r);
        console.log(
          `${flags.cron === undefined ? 'tail' : 'backfill'}-${r}: ${removed ? 'removed' : 'not scheduled'}`,
        );
      }
      return;
    }
    if (flags.reset === true) {
      const state = createTailStateStore(redis, settings.redisPrefix);
      for (const r of resources) await state.reset(r);
      console.log(`watermarks forgotten: ${resources.join(', ')}`);
      return;
    }
    await upsertSchedules(registry, resources, flags);
  } finally {
    await registry.close();
    await redis.quit();
  }
}

/** Registers a tail (or with `--cron`, a scheduled backfill) of each resource, from the flags, checked. */
async function upsertSchedules(
  registry: ScheduleRegistry,
  resources: readonly ResourceName[],
  flags: TailFlags,
): Promise<void> {
  const targetRows = Number(flags.targetRows ?? '5000');
  if (!Number.isSafeInteger(targetRows) || targetRows < 1)
    throw new ConfigError(`--target-rows must be a positive integer, got ${String(flags.targetRows)}`);
  const since = flags.since === undefined ? undefined : Date.parse(flags.since);
  if (since !== undefined && Number.isNaN(since))
    throw new ConfigError(`--since must be an ISO-8601 date-time, got ${JSON.stringify(flags.since)}`);
  const rescanEveryMs =
    flags.rescanEvery === 'never' ? -1 : parseDuration('--rescan-every', flags.rescanEvery);
  const lookbackMs = parseDuration('--lookback', flags.lookback);
  const everyMs = flags.cron === undefined ? parseDuration('--every', flags.every) : undefined;
  const rescanShare = parseRescanShare('--rescan-budget', flags.rescanBudget);
  const parts =
    flags.rescanPeriod === 'off' || everyMs === undefined
      ? 0
      : rescanParts(parseDuration('--rescan-period', flags.rescanPeriod), everyMs);
  for (const resource of resources) {
    const base = {
      resource,
      lookbackMs,
      rescanEveryMs,
      rescanParts: parts,
      rescanShare,
      replay: flags.replay === true,
      fullHistory: flags.fullHistory === true,
      targetRows,
      ...(since === undefined ? {} : { since }),
    };
    const info =
      flags.cron !== undefined
        ? await registry.upsertBackfill({ ...base, kind: 'backfill' }, flags.cron, flags.tz)
        : await registry.upsertTail({ ...base, kind: 'tail' }, parseDuration('--every', flags.every));
    console.log(`scheduled ${describe(info)}`);
  }
  console.log(
    'schedules fire in the workers: keep at least one `gamedata worker` running; `gamedata status` shows lag',
  );
}
