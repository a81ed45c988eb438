/**
 * The figures of `gamedata status`: runs (the run index and rollups in Redis: totals of every run ever, the newest
 * runs in detail), slices by BullMQ state, records fetched/published/deduplicated/dead-lettered (the rollup), the schedules and their tail lag,
 * the live workers (heartbeats) with their `/metrics` URLs, and the upstream rate-limit headroom they last saw.
 */
import { Queue, type ConnectionOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import {
  createRunCounters,
  getRunStatus,
  createRangeGaps,
  type RangeGap,
} from '../../pipeline/queue/index.js';
import { QUEUE_NAMES, DEFAULT_QUEUE_PREFIX } from '../../pipeline/contract/index.js';
import type { PartitionSummary, RunCounterValues } from '../../pipeline/contract/index.js';
import { parsePartition } from './partition-status.js';
import { parseKeyTime, type RunKeyTime } from '../../pipeline/planner/index.js';
import type { ResourceName } from '../../foundation/models/index.js';
import {
  createScheduleRegistry,
  type ScheduleInfo,
  createTailStateStore,
  tailLagSeconds,
} from '../../pipeline/schedules/index.js';
import { DEFAULT_SCRAPE_HOSTS, recordCountersFromMetrics, scrapeMetrics } from './scrape-metrics.js';
import { readHeartbeats, type WorkerHeartbeat } from './worker-telemetry.js';
import {
  budgetKeysOfBase,
  findBudgetBases,
  proceduresPerRequest,
  readBudgetSnapshot,
  type BudgetSnapshot,
} from '../../upstream/budget/index.js';
import { createRedisDriftStore, type ResourceDrift } from '../../pipeline/drift/index.js';
import { readEvolvedFields } from '../../pipeline/publish/index.js';

/** One API key's shared budget (src/upstream/budget), deployment-wide. */
export interface BudgetStatus extends BudgetSnapshot {
  /** The key's digest (never the key). */
  key: string;
  /** `slots / requests` (50 = every POST full). */
  proceduresPerRequest: number;
  /** `remaining / limit`. */
  headroom: number | undefined;
}

export interface RunSummary {
  runId: string;
  /** `running`, `completed` or `failed` (as the run worker recorded it). */
  state: string;
  resources: string[];
  /** Slices planned up front (splits add more). */
  planned: number;
  /** Set for runs still going: slices completed and still to do, BullMQ's view. */
  slices?: { completed: number; pending: number };
  /** When the state last changed (epoch ms). */
  at: number;
  reason?: string;
  counters: RunCounterValues;
  /** Full-history transactions planned from a partition proof: what the proof found (issue 23). */
  partition?: PartitionSummary;
  /** What the plan was estimated to cost the key when the run started (issue 32). */
  keyTime?: RunKeyTime;
}

export interface TailStatus {
  resource: ResourceName;
  /** ISO time (upstream sort time) below which everything is published. */
  watermark: string | undefined;
  /** Seconds since the run that set the watermark was planned: how stale the topic may be. */
  lagSeconds: number | undefined;
  activeRunId: string | undefined;
  lastOutcome: string | undefined;
  lastError: string | undefined;
  completedRuns: number;
  failedRuns: number;
  skippedTicks: number;
  schedules: ScheduleInfo[];
}

export interface StatusReport {
  at: string;
  runs: { total: number; running: number; completed: number; failed: number; recent: RunSummary[] };
  /** Slice jobs by BullMQ state. */
  slices: { waiting: number; active: number; delayed: number; completed: number; failed: number };
  /** Sums of every run's counters. */
  records: RunCounterValues;
  byResource: Partial<Record<ResourceName, RunCounterValues>>;
  tails: TailStatus[];
  /**
   * The ranges tails could not read (issue 48, `range-gaps.ts`): a slice failed for good, the tail moved on. Each
   * stays until a later run reads its range whole (e.g. `backfill <resource> --since <start> --until <end>`).
   */
  gaps: RangeGap[];
  schedules: ScheduleInfo[];
  workers: WorkerHeartbeat[];
  /**
   * Schema drift per resource (`<redisPrefix>:drift:<resource>`): only resources with some are listed; `evolved` names
   * the paths an `evolve` contract registered as fields (issue 35), with the subject and schema id.
   */
  drift: (ResourceDrift & { evolved?: Record<string, { subject: string; id: number }> })[];
  /**
   * The live workers' `/metrics`, summed (each worker counts since its own start, so this equals `records` only
   * while no worker restarted since the runs began). Undefined when not scraped.
   */
  metrics?: {
    scraped: number;
    unreachable: string[];
    records: RunCounterValues;
    pages: number;
    httpRequests: number;
  };
  upstream: {
    /** The shared budget of each API key the workers used (keys under `<redisPrefix>:budget:`). */
    budgets: BudgetStatus[];
    /** The lowest `ratelimit-remaining` any live worker saw, of `limit`; `headroom` = remaining / limit. */
    rateLimit: {
      limit: number | undefined;
      remaining: number | undefined;
      headroom: number | undefined;
      resetAt: string | undefined;
    };
  };
}

export interface CollectStatusOptions {
  /** Any Redis connection (reads only). */
  redis: Redis;
  /** BullMQ connection (the same Redis). @default redis */
  connection?: ConnectionOptions;
  /** BullMQ prefix. @default 'gamedata-bull' */
  queuePrefix?: string;
  /** Prefix of counters, schedule state and heartbeats. @default 'gamedata' */
  redisPrefix?: string;
  /** How many of the newest runs to list. @default 10 */
  recentRuns?: number;
  /** Scrape the live workers' `/metrics` endpoints. @default true */
  scrape?: boolean;
  /**
   * Hosts whose `/metrics` may be scraped (the URLs come from Redis: see `isScrapeAllowed`).
   * @default loopback only (`DEFAULT_SCRAPE_HOSTS`)
   */
  scrapeHosts?: readonly string[];
  now?: () => number;
}

export const DEFAULT_COLLECT_STATUS_OPTIONS = {
  queuePrefix: DEFAULT_QUEUE_PREFIX,
  redisPrefix: 'gamedata',
  recentRuns: 10,
  scrape: true,
  scrapeHosts: DEFAULT_SCRAPE_HOSTS,
} as const;

/** Collects the status. Reads only, except that heartbeats of workers silent for 30 s are dropped. */
export async function collectStatus(options: CollectStatusOptions): Promise<StatusReport> {
  const o = { ...DEFAULT_COLLECT_STATUS_OPTIONS, ...options };
  const now = (options.now ?? Date.now)();
  const { redis } = o;
  const connection = options.connection ?? redis;
  const bull = { connection, prefix: o.queuePrefix };
  const counters = createRunCounters(redis, o.redisPrefix);

  // Runs: totals and counts by state from the rollups (every run ever, trimmed ones included), the newest runs
  // from the index; a handful of reads however many runs there were.
  const [totals, stateCounts, newest] = await Promise.all([
    counters.totals(),
    counters.stateCounts(),
    counters.listRuns(o.recentRuns),
  ]);
  const { byResource, ...records } = totals;
  const recent = await summariseRecentRuns(counters, newest, o.recentRuns, bull);
  const { jobCounts, schedules } = await readSliceCountsAndSchedules(connection, o.queuePrefix);
  const tailStates = await createTailStateStore(redis, o.redisPrefix).list();
  const tails = tailStatuses(tailStates, schedules, now);
  const gaps = await createRangeGaps(redis, o.redisPrefix).list();
  const workers = await readHeartbeats(redis, o.redisPrefix, 30_000, now);
  const drift = await Promise.all(
    (await createRedisDriftStore(redis, { prefix: o.redisPrefix }).read()).map(async (d) => {
      const evolved = await readEvolvedFields(redis, o.redisPrefix, d.resource);
      return evolved.size === 0
        ? d
        : {
            ...d,
            evolved: Object.fromEntries([...evolved].map(([p, e]) => [p, { subject: e.subject, id: e.id }])),
          };
    }),
  );
  const rateLimit = tightestRateLimit(workers);
  const budgets = await readBudgets(redis, `${o.redisPrefix}:budget:`, now);
  const urls = workers.map((w) => w.metricsUrl).filter((u): u is string => u !== undefined);
  const metrics = o.scrape && urls.length > 0 ? await scrapeWorkers(urls, o.scrapeHosts) : undefined;

  return {
    at: new Date(now).toISOString(),
    runs: {
      total: Object.values(stateCounts).reduce((sum, n) => sum + n, 0),
      running: stateCounts['running'] ?? 0,
      completed: stateCounts['completed'] ?? 0,
      failed: stateCounts['failed'] ?? 0,
      recent,
    },
    slices: {
      waiting:
        (jobCounts['waiting'] ?? 0) + (jobCounts['prioritized'] ?? 0) + (jobCounts['waiting-children'] ?? 0),
      active: jobCounts['active'] ?? 0,
      delayed: jobCounts['delayed'] ?? 0,
      completed: jobCounts['completed'] ?? 0,
      failed: jobCounts['failed'] ?? 0,
    },
    records,
    byResource,
    tails,
    gaps,
    schedules,
    workers,
    drift,
    ...(metrics === undefined ? {} : { metrics }),
    upstream: { budgets, rateLimit },
  };
}

/** The newest runs with their counters, newest first; running ones with their slice counts from BullMQ. */
async function summariseRecentRuns(
  counters: ReturnType<typeof createRunCounters>,
  newest: Awaited<ReturnType<ReturnType<typeof createRunCounters>['listRuns']>>,
  recentRuns: number,
  bull: { connection: ConnectionOptions | Redis; prefix: string },
): Promise<RunSummary[]> {
  const runs: RunSummary[] = await Promise.all(
    newest.map(async ({ runId, state }) => {
      const { byResource: _perResource, ...total } = await counters.get(runId);
      return {
        runId,
        state: state['state'] ?? 'unknown',
        resources: (state['resources'] ?? '').split(',').filter((x) => x !== ''),
        planned: Number(state['slices'] ?? 0),
        at: Number(state['at'] ?? 0),
        ...(state['reason'] === undefined ? {} : { reason: state['reason'] }),
        counters: total,
        ...((p) => (p === undefined ? {} : { partition: p }))(parsePartition(state)),
        ...((t) => (t === undefined ? {} : { keyTime: t }))(parseKeyTime(state)),
      };
    }),
  );
  runs.sort((a, b) => b.at - a.at || b.runId.localeCompare(a.runId));
  const recent = runs.slice(0, recentRuns);
  for (const r of recent) {
    if (r.state !== 'running') continue;
    const s = await getRunStatus(r.runId, bull);
    if (s !== undefined) r.slices = s.slices;
  }
  return recent;
}

/** The slice queue's job counts by state and the registered schedules. */
async function readSliceCountsAndSchedules(
  connection: ConnectionOptions | Redis,
  queuePrefix: string,
): Promise<{ jobCounts: Record<string, number>; schedules: ScheduleInfo[] }> {
  const slicesQueue = new Queue(QUEUE_NAMES.slices, { connection, prefix: queuePrefix });
  // Connection errors are the caller's client's to report (`status --watch` says them once per change of state).
  slicesQueue.on('error', () => undefined);
  const registry = createScheduleRegistry({ connection, prefix: queuePrefix });
  try {
    const [jobCounts, schedules] = await Promise.all([
      slicesQueue.getJobCounts(
        'waiting',
        'active',
        'delayed',
        'completed',
        'failed',
        'prioritized',
        'waiting-children',
      ),
      registry.list(),
    ]);
    return { jobCounts, schedules };
  } finally {
    await slicesQueue.close();
    await registry.close();
  }
}

/** Pure: one line per resource that has tail state or a schedule, by name. */
function tailStatuses(
  tailStates: Awaited<ReturnType<ReturnType<typeof createTailStateStore>['list']>>,
  schedules: ScheduleInfo[],
  now: number,
): TailStatus[] {
  const scheduled = new Set(schedules.map((s) => s.resource));
  return [...new Set([...tailStates.map((t) => t.resource), ...scheduled])].sort().map((resource) => {
    const t = tailStates.find((x) => x.resource === resource);
    return {
      resource,
      watermark: t?.watermark === undefined ? undefined : new Date(t.watermark).toISOString(),
      lagSeconds: t === undefined ? undefined : tailLagSeconds(t, now),
      activeRunId: t?.active?.runId,
      lastOutcome: t?.lastOutcome,
      lastError: t?.lastError === '' ? undefined : t?.lastError,
      completedRuns: t?.completedRuns ?? 0,
      failedRuns: t?.failedRuns ?? 0,
      skippedTicks: t?.skippedTicks ?? 0,
      schedules: schedules.filter((s) => s.resource === resource),
    };
  });
}

/** Pure: the upstream's rate limit as the worker with the fewest requests left last saw it. */
function tightestRateLimit(workers: WorkerHeartbeat[]): StatusReport['upstream']['rateLimit'] {
  let limit: number | undefined;
  let remaining: number | undefined;
  let resetAt: number | undefined;
  for (const w of workers) {
    const rl = w.rateLimit;
    if (rl?.remaining === undefined) continue;
    if (remaining === undefined || rl.remaining < remaining) {
      remaining = rl.remaining;
      limit = rl.limit;
      resetAt = rl.resetAt;
    }
  }
  return {
    limit,
    remaining,
    headroom: limit === undefined || remaining === undefined || limit === 0 ? undefined : remaining / limit,
    resetAt: resetAt === undefined ? undefined : new Date(resetAt).toISOString(),
  };
}

/** Every shared budget under `budgetPrefix` (one per API key), with its headroom. */
async function readBudgets(redis: Redis, budgetPrefix: string, now: number): Promise<BudgetStatus[]> {
  return Promise.all(
    (await findBudgetBases(redis, budgetPrefix)).map(async (base) => {
      const b = await readBudgetSnapshot(redis, budgetKeysOfBase(base), now);
      return {
        key: base.slice(budgetPrefix.length),
        ...b,
        proceduresPerRequest: proceduresPerRequest(b),
        headroom:
          b.limit === undefined || b.remaining === undefined || b.limit === 0
            ? undefined
            : b.remaining / b.limit,
      };
    }),
  );
}

/** The workers' /metrics, summed. */
async function scrapeWorkers(
  urls: string[],
  scrapeHosts: CollectStatusOptions['scrapeHosts'],
): Promise<NonNullable<StatusReport['metrics']>> {
  const scraped = await scrapeMetrics(urls, undefined, scrapeHosts);
  return {
    scraped: scraped.scraped,
    unreachable: scraped.unreachable,
    records: recordCountersFromMetrics(scraped.sums),
    pages: scraped.sums.get('gamedata_pages_total') ?? 0,
    httpRequests: scraped.sums.get('gamedata_http_requests_total') ?? 0,
  };
}
