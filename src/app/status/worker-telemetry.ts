/**
 * Metrics of a worker process without touching the pipeline's code: the pipeline's injected dependencies are
 * wrapped (counters -> record counters, publisher -> produce latency), the client reports each HTTP exchange, the
 * BullMQ slice worker's events give slice durations, and a heartbeat in Redis
 * (`<redisPrefix>:workers`, one field per process) tells `status` where every worker's `/metrics` is and what
 * rate-limit headroom it last saw.
 */
import { hostname } from 'node:os';
import type { Queue, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import type { PageDrift } from '../../pipeline/drift/index.js';
import type { PageEvent, Client, ClientStats } from '../../upstream/client/index.js';
import type { SharedBudget } from '../../upstream/budget/index.js';
import { proceduresPerRequest, type BudgetSnapshot } from '../../upstream/budget/index.js';
import type { PipelineWorkerDeps } from '../../pipeline/queue/index.js';
import type { RunCounterValues, SliceJobData, SliceResult } from '../../pipeline/planner/index.js';
import {
  createPipelineMetrics,
  startMetricsServer,
  type MetricsServer,
  type PipelineMetrics,
} from '../../foundation/metrics/index.js';
import { topicName } from '../../foundation/models/index.js';
import { readLatestPartition, setPartitionGauges } from './partition-status.js';

/** What a worker writes into its heartbeat, read back by `status`. */
export interface WorkerHeartbeat {
  id: string;
  host: string;
  pid: number;
  /** `http://host:port/metrics`, when the endpoint is on. */
  metricsUrl?: string;
  startedAt: number;
  /** Last heartbeat (epoch ms). */
  at: number;
  /** The upstream rate limit as the worker's client last saw it (`ratelimit-*` headers). */
  rateLimit?: { limit?: number; remaining?: number; resetAt?: number };
}

export interface WorkerTelemetryOptions {
  /** Topic prefix (labels of the produce latency). @default 'gamedata' */
  topicPrefix?: string;
  /** Prefix of the heartbeat key (`GAMEDATA_REDIS_PREFIX`). @default 'gamedata' */
  redisPrefix?: string;
  /**
   * Port of `/metrics`: a number (0 = any free port), or `false` for no endpoint. When the port is taken (several
   * workers on one machine) a free one is used; every worker's URL is in its heartbeat. @default 9464
   */
  metricsPort?: number | false;
  /** @default '127.0.0.1' (use 0.0.0.0 to let a Prometheus on another machine scrape) */
  metricsHost?: string;
  /** How often the heartbeat and the client-derived gauges are refreshed. @default 5000 */
  heartbeatMs?: number;
  /** A heartbeat older than this is a dead worker (status ignores it). @default 30000 */
  heartbeatTtlMs?: number;
  /** Metrics registry to fill (tests). @default a new one */
  metrics?: PipelineMetrics;
}

export const DEFAULT_WORKER_TELEMETRY_OPTIONS = {
  topicPrefix: 'gamedata',
  redisPrefix: 'gamedata',
  metricsPort: 9464,
  metricsHost: '127.0.0.1',
  heartbeatMs: 5000,
  heartbeatTtlMs: 30_000,
} as const;

/** Most drift paths one process labels per resource (the store keeps its own bound). */
const DRIFT_LABEL_PATHS = 300;

export interface WorkerTelemetry {
  readonly metrics: PipelineMetrics;
  readonly id: string;
  /** Pass as the client's `onRequest` (HTTP requests by status, batch sizes). */
  onRequest(info: { procedures: number; status: number | undefined; ms: number }): void;
  /** Pass as the runtime's `onDrift`: a page's schema drift counted in `gamedata_schema_drift_total`. */
  onDrift(resource: string, drift: PageDrift): void;
  /** Pass as the runtime's `onPageEvent`: counted in `gamedata_page_events_total`. */
  onPageEvent(resource: string, event: PageEvent): void;
  /** Pass as the runtime's `onSelfFence`: counted in `gamedata_self_fences_total`. */
  onSelfFence(): void;
  /** The pipeline's dependencies, wrapped so every page counts into the metrics. */
  instrument<D extends PipelineWorkerDeps>(deps: D): D;
  /**
   * Starts the endpoint and the heartbeat, and follows the slice worker's events.
   * @returns the `/metrics` URL (undefined when the endpoint is off).
   */
  start(o: {
    redis: Redis;
    client?: Pick<Client, 'stats'>;
    /** The key's shared budget: its snapshot feeds the `gamedata_budget_*` gauges at each heartbeat. */
    budget?: Pick<SharedBudget, 'snapshot' | 'isLeader'> | undefined;
    slices?: Worker<SliceJobData, SliceResult>;
    /** The slice queue: its job counts feed `gamedata_slices_queued` at each heartbeat. */
    slicesQueue?: Pick<Queue, 'getJobCounts'>;
  }): Promise<string | undefined>;
  close(): Promise<void>;
}

/** Key of the heartbeat hash. */
export function heartbeatKey(redisPrefix: string): string {
  return `${redisPrefix}:workers`;
}

export function createWorkerTelemetry(options: WorkerTelemetryOptions = {}): WorkerTelemetry {
  const o = { ...DEFAULT_WORKER_TELEMETRY_OPTIONS, ...options };
  const metrics =
    options.metrics ?? createPipelineMetrics({ defaultLabels: { worker: `${hostname()}-${process.pid}` } });
  const id = `${hostname()}-${process.pid}-${Date.now().toString(36)}`;
  const startedAt = Date.now();
  let server: MetricsServer | undefined;
  let timer: NodeJS.Timeout | undefined;
  let redis: Redis | undefined;
  const countClientStats = clientStatsCounter(metrics);
  const driftPaths = new Map<string, Set<string>>();

  const telemetry: WorkerTelemetry = {
    metrics,
    id,
    onDrift(resource, drift) {
      for (const entry of drift.entries) {
        // The label set stays bounded: a process labels at most DRIFT_LABEL_PATHS paths per resource.
        const seen = driftPaths.get(resource) ?? new Set<string>();
        driftPaths.set(resource, seen);
        const id = `${entry.kind}\t${entry.path}`;
        if (!seen.has(id) && seen.size < DRIFT_LABEL_PATHS) seen.add(id);
        const path = seen.has(id) ? entry.path : '(other)';
        metrics.schemaDrift.inc({ resource, path, kind: entry.kind }, entry.count);
      }
    },
    onPageEvent(resource, event) {
      metrics.pageEvents.inc({ resource, kind: event.kind });
    },
    onSelfFence() {
      metrics.selfFences.inc();
    },
    onRequest(info) {
      metrics.httpRequests.inc({ status: String(info.status ?? 0) });
      metrics.batchSize.observe(info.procedures);
    },
    instrument(deps) {
      return instrumentPipelineDeps(deps, metrics, o.topicPrefix);
    },
    async start(s) {
      redis = s.redis;
      if (s.slices !== undefined) observeSliceDurations(s.slices, metrics);
      if (o.metricsPort !== false) server = await listenMetrics(metrics, o.metricsPort, o.metricsHost);
      const beat = async (): Promise<void> => {
        const stats = s.client?.stats();
        const rl = stats?.rateLimit;
        if (rl?.remaining !== undefined) metrics.rateLimitRemaining.set(rl.remaining);
        if (stats !== undefined) countClientStats(stats);
        // The deployment's slice queue by state (every worker reports the same figures: alert on their max).
        const queued = await s.slicesQueue
          ?.getJobCounts('waiting', 'prioritized', 'delayed', 'active', 'failed')
          .catch(() => undefined);
        for (const [state, n] of Object.entries(queued ?? {})) metrics.slicesQueued.set({ state }, n);
        // A Redis hiccup reading the budget must not cost the heartbeat.
        const b = await s.budget?.snapshot().catch(() => undefined);
        if (s.budget !== undefined && b !== undefined) setBudgetGauges(metrics, b, s.budget.isLeader());
        // The newest partition proof (a few state reads; a Redis hiccup must not cost the heartbeat).
        const proof = await readLatestPartition(s.redis, o.redisPrefix).catch(() => undefined);
        if (proof !== undefined) setPartitionGauges(metrics, proof.partition);
        const hb = heartbeatOf(id, startedAt, server?.url, rl);
        await s.redis.hset(heartbeatKey(o.redisPrefix), id, JSON.stringify(hb));
      };
      await beat();
      timer = setInterval(() => {
        beat().catch(() => undefined);
      }, o.heartbeatMs);
      timer.unref();
      return server?.url;
    },
    async close() {
      if (timer !== undefined) clearInterval(timer);
      await redis?.hdel(heartbeatKey(o.redisPrefix), id).catch(() => undefined);
      await server?.close();
    },
  };
  return telemetry;
}

/** Counts the client's rounds and cache lookups into the counters, at each heartbeat. */
function clientStatsCounter(metrics: PipelineMetrics): (stats: ClientStats) => void {
  let lastCache = { fresh: 0, stale: 0, misses: 0 };
  let lastRounds = 0;
  return (stats) => {
    // Rounds (sequential waves of calls) beside the requests: the client counts since its start.
    metrics.upstreamRounds.inc(Math.max(0, stats.rounds - lastRounds));
    lastRounds = stats.rounds;
    const cache = stats.cache;
    if (cache !== undefined) {
      // The client counts since its start; the counters take the difference since the last beat.
      metrics.cacheLookups.inc(
        { operation: 'all', result: 'hit' },
        Math.max(0, cache.fresh - lastCache.fresh),
      );
      metrics.cacheLookups.inc(
        { operation: 'all', result: 'stale' },
        Math.max(0, cache.stale - lastCache.stale),
      );
      metrics.cacheLookups.inc(
        { operation: 'all', result: 'miss' },
        Math.max(0, cache.misses - lastCache.misses),
      );
      lastCache = { fresh: cache.fresh, stale: cache.stale, misses: cache.misses };
    }
  };
}

/** This process's heartbeat as of now: where its `/metrics` is and the rate limit its client last saw. */
function heartbeatOf(
  id: string,
  startedAt: number,
  metricsUrl: string | undefined,
  rl: ClientStats['rateLimit'],
): WorkerHeartbeat {
  return {
    id,
    host: hostname(),
    pid: process.pid,
    ...(metricsUrl === undefined ? {} : { metricsUrl }),
    startedAt,
    at: Date.now(),
    ...(rl === undefined
      ? {}
      : {
          rateLimit: {
            ...(rl.limit === undefined ? {} : { limit: rl.limit }),
            ...(rl.remaining === undefined ? {} : { remaining: rl.remaining }),
            ...(rl.resetAt === undefined ? {} : { resetAt: rl.resetAt }),
          },
        }),
  };
}

/** The pipeline's dependencies, wrapped: counters -> record counters, publisher -> produce latency. */
function instrumentPipelineDeps<D extends PipelineWorkerDeps>(
  deps: D,
  metrics: PipelineMetrics,
  topicPrefix: string,
): D {
  const counters = deps.counters;
  const publisher = deps.publisher;
  // Slices count once per page (at-least-once) or per commit (exactly-once), after the acks and dedup marks.
  const count = (delta: Partial<RunCounterValues>, resource: string | undefined): void => {
    const labels = { resource: resource ?? 'unknown' };
    metrics.recordsFetched.inc(labels, delta.fetched ?? 0);
    metrics.recordsPublished.inc(labels, delta.published ?? 0);
    metrics.recordsDeduplicated.inc(labels, delta.deduplicated ?? 0);
    if ((delta.deadLettered ?? 0) > 0)
      metrics.recordsDeadLettered.inc({ ...labels, reason: 'invalid' }, delta.deadLettered ?? 0);
    metrics.pages.inc(labels);
    metrics.checkpoints.inc(labels);
  };
  const addThrough = counters.addThrough?.bind(counters);
  return {
    ...deps,
    counters: {
      ...counters,
      get: counters.get.bind(counters),
      setState: counters.setState.bind(counters),
      ...(addThrough === undefined
        ? {}
        : {
            async addThrough(runId, sliceId, cumulative, resource) {
              const added = await addThrough(runId, sliceId, cumulative, resource);
              count(added, resource);
              return added;
            },
          }),
      async add(runId, delta, resource) {
        await counters.add(runId, delta, resource);
        count(delta, resource);
      },
    },
    publisher: {
      async publishPage(input) {
        const end = metrics.produceLatency.startTimer({
          topic: topicName(topicPrefix, input.resource),
        });
        const r = await publisher.publishPage(input);
        end();
        return r;
      },
    },
  };
}

/** Slice durations by outcome, from the slice worker's events (a delayed slice is not a failure). */
function observeSliceDurations(slices: Worker<SliceJobData, SliceResult>, metrics: PipelineMetrics): void {
  slices.on('completed', (job) => {
    if (job.processedOn !== undefined && job.finishedOn !== undefined) {
      metrics.sliceDuration.observe(
        { resource: job.data.resource, outcome: 'completed' },
        (job.finishedOn - job.processedOn) / 1000,
      );
    }
  });
  slices.on('failed', (job, error) => {
    if (job === undefined || error.name === 'DelayedError') return;
    if (job.processedOn !== undefined)
      metrics.sliceDuration.observe(
        { resource: job.data.resource, outcome: 'failed' },
        (Date.now() - job.processedOn) / 1000,
      );
  });
}

/** `/metrics` on `port`, or on any free port when that one is taken (several workers on one machine). */
async function listenMetrics(metrics: PipelineMetrics, port: number, host: string): Promise<MetricsServer> {
  try {
    return await startMetricsServer(metrics, { port, host });
  } catch (error) {
    // Several workers on one machine: the second one takes any free port (its URL is in the heartbeat).
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    return startMetricsServer(metrics, { port: 0, host });
  }
}

/** The `gamedata_budget_*` gauges from the key's shared budget snapshot. */
function setBudgetGauges(metrics: PipelineMetrics, b: BudgetSnapshot, isLeader: boolean): void {
  const g = metrics.budget;
  if (b.limit !== undefined) g.limit.set(b.limit);
  if (b.remaining !== undefined) g.remaining.set(b.remaining);
  g.requests.set(b.requests);
  g.procedures.set(b.slots);
  g.proceduresPerRequest.set(proceduresPerRequest(b));
  g.rateLimited.set(b.status429);
  for (const [priority, n] of Object.entries(b.waiting)) g.waiting.set({ priority }, n);
  g.fetcher.set(isLeader ? 1 : 0);
}

/** Reads the live workers' heartbeats (dropping, and deleting, those older than `ttlMs`). */
export async function readHeartbeats(
  redis: Redis,
  redisPrefix = 'gamedata',
  ttlMs = 30_000,
  now = Date.now(),
): Promise<WorkerHeartbeat[]> {
  const all = await redis.hgetall(heartbeatKey(redisPrefix));
  const live: WorkerHeartbeat[] = [];
  for (const [field, raw] of Object.entries(all)) {
    try {
      const hb = JSON.parse(raw) as WorkerHeartbeat;
      if (now - hb.at <= ttlMs) live.push(hb);
      else await redis.hdel(heartbeatKey(redisPrefix), field);
    } catch {
      await redis.hdel(heartbeatKey(redisPrefix), field);
    }
  }
  return live.sort((a, b) => a.id.localeCompare(b.id));
}
