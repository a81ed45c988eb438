/**
 * The BullMQ worker of the schedules queue: each tick job runs {@link processTick} with the real planner, flow
 * and Redis state. Every `gamedata worker` runs one, so schedules keep firing as long as any worker lives, and a
 * restart after all workers stopped picks the schedule up where its watermark was.
 */
import type { RunRegistry } from '../dedup/index.js';
import { Worker, type ConnectionOptions, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { getRunStatus } from '../queue/backfill-flow.js';
import { startBackfill } from '../queue/start-backfill.js';
import type { RunCounters } from '../queue/run-counters.js';
import type { UserDirectory } from '../slice/user-discovery.js';
import { DEFAULT_QUEUE_PREFIX } from '../contract/queue-names.js';
import { RESOURCES, type ResourceName } from '../../foundation/models/index.js';
import { createRangeGaps, type RangeGaps } from '../queue/range-gaps.js';
import type { PlannerSource } from '../planner/plan-backfill.js';
import { runWithPriority } from '../../upstream/budget/index.js';
import { maskDeep, maskError, ownSecrets, type Secrets } from '../../foundation/config/index.js';
import { createScheduleRegistry } from './schedule-registry.js';
import {
  processTick,
  tickPriority,
  type ProcessTickOptions,
  type ScheduleTickData,
  type TickDeps,
  type TickOutcome,
} from './process-tick.js';
import { SCHEDULE_QUEUE } from './schedule-names.js';
import { processRescan, type RescanDeps, type RescanOutcome } from './process-rescan.js';
import { createRescanStateStore } from './rescan-state.js';
import type { SharedBudget } from '../../upstream/budget/index.js';
import { createTailStateStore, type TailState, type TailStateStore } from './tail-state.js';

/** A bound far beyond any record: the first page below it is the newest records. */
const FAR_FUTURE_MS = Date.UTC(9999, 0, 1);

export interface ScheduleWorkerOptions {
  /** Redis connection for the BullMQ worker (`maxRetriesPerRequest: null`). */
  connection: ConnectionOptions;
  /** BullMQ key prefix. @default 'gamedata-bull' */
  prefix?: string;
  /** Prefix of the state keys (`GAMEDATA_REDIS_PREFIX`). @default 'gamedata' */
  redisPrefix?: string;
  /** Ticks of different resources processed at once. @default 6 */
  concurrency?: number;
  /** Rows per planned slice. @default 5000 */
  targetRows?: number;
  /** How often the tail-lag gauge is refreshed between ticks. @default 5000 */
  lagRefreshMs?: number;
  tick?: Omit<ProcessTickOptions, 'now'>;
  onTick?: (outcome: TickOutcome) => void;
  onError?: (error: Error, context: string) => void;
  /**
   * Masked in a tick's error before BullMQ stores it, in its outcome (a settled run's reason) and in a tail's
   * `lastError`. @default the secrets of this process's settings (`ownSecrets()`)
   */
  secrets?: Secrets;
}

export const DEFAULT_SCHEDULE_WORKER_OPTIONS = {
  prefix: DEFAULT_QUEUE_PREFIX,
  redisPrefix: 'gamedata',
  concurrency: 6,
  targetRows: 5000,
  lagRefreshMs: 5000,
} as const;

export interface ScheduleWorkerDeps {
  /** Redis for the schedule state (any connection). */
  redis: Redis;
  planner: PlannerSource;
  counters: Pick<RunCounters, 'setState'>;
  /** The runs of each resource (`dedup/lone-runs.ts`): each tail's run is registered before it is enqueued. */
  runs?: Pick<RunRegistry, 'register'> | undefined;
  /** The runs' user sets (seeded at planning for full-history transaction runs). */
  users?: Pick<UserDirectory, 'seed' | 'add' | 'unknown'>;
  /** The key's shared budget: spread rescans are capped at their share of its requests. */
  budget?: Pick<SharedBudget, 'snapshot'> | undefined;
  /** Called after each tick's rescan step (spread rescans of changing resources). */
  onRescan?: (resource: ResourceName, outcome: RescanOutcome) => void;
  /** Receives the tail lag per resource (seconds since the watermark's run was planned). */
  tailLag?: { set(labels: { resource: string }, value: number): void };
  /** Receives each tail's interval in seconds (`--every`), refreshed with the lag: alerts compare the two. */
  tailInterval?: { set(labels: { resource: string }, value: number): void };
  /** Receives the open gaps per resource (issue 48, `range-gaps.ts`), refreshed with the lag; 0 for none. */
  tailGaps?: { set(labels: { resource: string }, value: number): void };
}

export interface ScheduleWorker {
  readonly worker: Worker<ScheduleTickData, TickOutcome>;
  readonly state: TailStateStore;
  close(): Promise<void>;
}

/** The newest sort time of a resource across its walks (users: every country). */
export async function probeHead(planner: PlannerSource, resource: ResourceName): Promise<number | undefined> {
  const walks: Record<string, string>[] =
    resource === 'users' ? (await planner.countryIds()).map((countryId) => ({ countryId })) : [{}];
  const heads = await Promise.all(
    walks.map(async (f) => (await planner.probe(resource, f)(FAR_FUTURE_MS, 1))[0]),
  );
  let max: number | undefined;
  for (const h of heads) if (h !== undefined && (max === undefined || h > max)) max = h;
  return max;
}

/** Seconds between now and the planning time of the run that set the watermark; undefined without one. */
export function tailLagSeconds(state: TailState, now: number): number | undefined {
  return state.watermarkAt === undefined ? undefined : Math.max(0, (now - state.watermarkAt) / 1000);
}

/** Refreshes the tails' gauges: open gaps, lag, interval (between ticks and after each). */
function createGaugeRefresh(
  deps: ScheduleWorkerDeps,
  state: TailStateStore,
  gaps: RangeGaps,
  registry: ReturnType<typeof createScheduleRegistry> | undefined,
): () => Promise<void> {
  return async () => {
    if (deps.tailGaps !== undefined) {
      const counts = await gaps.counts();
      for (const resource of RESOURCES) deps.tailGaps.set({ resource }, counts[resource] ?? 0);
    }
    if (deps.tailLag === undefined) return;
    const now = Date.now();
    for (const s of await state.list()) {
      const lag = tailLagSeconds(s, now);
      if (lag !== undefined) deps.tailLag.set({ resource: s.resource }, lag);
    }
    if (registry === undefined || deps.tailInterval === undefined) return;
    for (const s of await registry.list())
      if (s.kind === 'tail' && s.every !== undefined)
        deps.tailInterval.set({ resource: s.resource }, s.every / 1000);
  };
}

export function startScheduleWorker(
  options: ScheduleWorkerOptions,
  deps: ScheduleWorkerDeps,
): ScheduleWorker {
  const o = { ...DEFAULT_SCHEDULE_WORKER_OPTIONS, ...options };
  const onError = o.onError ?? (() => undefined);
  const secrets = o.secrets ?? ownSecrets();
  const state = createTailStateStore(deps.redis, o.redisPrefix, secrets);
  const bull = { connection: o.connection, prefix: o.prefix };
  const tickDeps: TickDeps = {
    state,
    runStatus: (runId) => getRunStatus(runId, bull),
    head: (resource) => probeHead(deps.planner, resource),
    async startRun(request) {
      const planned = await startBackfill(request, {
        ...bull,
        ...{ planner: deps.planner, counters: deps.counters, runs: deps.runs },
        ...(deps.users === undefined ? {} : { users: deps.users }),
        // A transactions catch-up deeper than an hour (a tail after an outage) reads per country when the proof holds
        // for every type, not through the feed's deep pages, which the service serialises per key (issue 32).
        plan: { targetRows: o.targetRows, partition: 'countryId' },
        priority: request.priority,
        gapOnFailure: request.gapOnFailure === true,
      });
      return { slices: planned.slices.length };
    },
  };
  const rescanDeps: RescanDeps = {
    rescans: createRescanStateStore(deps.redis, o.redisPrefix),
    runStatus: (runId) => tickDeps.runStatus(runId),
    startRun: (request) => tickDeps.startRun(request),
    watermark: async (resource) => (await state.get(resource)).watermark,
    ...(deps.budget === undefined
      ? {}
      : {
          spend: async () => {
            const b = await deps.budget?.snapshot();
            return b === undefined
              ? undefined
              : {
                  requests: b.requests,
                  rescanRequests: b.requestsByPriority.rescan,
                  limit: b.limit,
                  remaining: b.remaining,
                };
          },
        }),
  };
  const registry =
    deps.tailInterval === undefined
      ? undefined
      : createScheduleRegistry({ connection: o.connection, prefix: o.prefix });
  const refreshLag = createGaugeRefresh(
    deps,
    state,
    createRangeGaps(deps.redis, o.redisPrefix, secrets),
    registry,
  );
  const worker = new Worker<ScheduleTickData, TickOutcome>(
    SCHEDULE_QUEUE,
    async (job: Job<ScheduleTickData, TickOutcome>) => {
      // BullMQ stores the outcome (`returnvalue`) and an error's text: both masked first.
      try {
        // The head probe runs at the tail's priority; the run's planning and slices at the run's (startRun).
        const outcome = maskDeep(
          await runWithPriority(tickPriority(job.data.kind, job.data.resource), () =>
            processTick(job.data, tickDeps, o.tick ?? {}),
          ),
          secrets,
        );
        const rescan = await runWithPriority('rescan', () => processRescan(job.data, rescanDeps));
        deps.onRescan?.(job.data.resource, rescan);
        o.onTick?.(outcome);
        await refreshLag().catch((e: unknown) => onError(e as Error, 'tail-lag'));
        return outcome;
      } catch (error) {
        throw maskError(error, secrets);
      }
    },
    { ...bull, concurrency: o.concurrency },
  );
  worker.on('error', (e) => onError(e, 'schedule-worker'));
  worker.on('failed', (job, e) =>
    onError(e, `schedule tick ${job?.name ?? '?'} ${job?.data.resource ?? '?'}`),
  );
  const timer = setInterval(() => {
    refreshLag().catch((e: unknown) => onError(e as Error, 'tail-lag'));
  }, o.lagRefreshMs);
  timer.unref();
  return {
    worker,
    state,
    async close() {
      clearInterval(timer);
      await worker.close();
      await registry?.close();
    },
  };
}
