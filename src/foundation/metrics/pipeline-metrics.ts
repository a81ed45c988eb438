/**
 * Prometheus metrics of a worker process, named after Kafka Connect's source-task metrics in spirit
 * (see docs/operations.md for the mapping):
 *
 * | Kafka Connect (source task)          | gamedata                                   |
 * |--------------------------------------|--------------------------------------------|
 * | source-record-poll-total             | gamedata_records_fetched_total             |
 * | source-record-write-total            | gamedata_records_published_total           |
 * | (SMT filtered records)               | gamedata_records_deduplicated_total        |
 * | deadletterqueue-produce-requests     | gamedata_records_dead_lettered_total       |
 * | poll-batch-avg-time-ms               | gamedata_slice_duration_seconds            |
 * | (producer request-latency-avg)       | gamedata_produce_latency_seconds           |
 * | offset-commit-completion-total       | gamedata_checkpoints_total                 |
 *
 * Plus upstream and cache figures Connect has no name for: pages, HTTP requests by status, batch sizes,
 * cache hits/stale/misses, tail lag and interval, the slice queue by state, readiness and each
 * service's reachability (what the alert rules in ops/prometheus/ use), and the API key's shared budget (`gamedata_budget_*`: limit, remaining,
 * requests, procedures, procedures per request, 429s, calls waiting per priority, whether this process fetches), and
 * what the newest partition proof found (`gamedata_partition_rows`, `gamedata_partition_types`).
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface PipelineMetrics {
  readonly registry: Registry;
  readonly recordsFetched: Counter<'resource'>;
  readonly recordsPublished: Counter<'resource'>;
  readonly recordsDeduplicated: Counter<'resource'>;
  readonly recordsDeadLettered: Counter<'resource' | 'reason'>;
  readonly pages: Counter<'resource'>;
  readonly checkpoints: Counter<'resource'>;
  readonly httpRequests: Counter<'status'>;
  /** Sequential waves of upstream calls (the client's `stats().rounds`), beside the requests. */
  readonly upstreamRounds: Counter;
  readonly batchSize: Histogram;
  readonly sliceDuration: Histogram<'resource' | 'outcome'>;
  readonly produceLatency: Histogram<'topic'>;
  readonly cacheLookups: Counter<'operation' | 'result'>;
  /**
   * Schema drift (issue 35): records encoded with a field the catalogue does not know (`new_field`) or a value of
   * another type (`type_changed`), by resource and field path (array indices as `[]`; at most a few hundred paths
   * per resource per process, the rest as `path="(other)"`).
   */
  readonly schemaDrift: Counter<'resource' | 'path' | 'kind'>;
  readonly tailLagSeconds: Gauge<'resource'>;
  /** The tail's interval (`--every`), for alerts relative to it. */
  readonly tailInterval: Gauge<'resource'>;
  /** Ranges a tail could not read, recorded as gaps and not closed yet (issue 48), by resource; deployment-wide. */
  readonly tailGaps: Gauge<'resource'>;
  readonly rateLimitRemaining: Gauge;
  /** Slices of the deployment's queue by state (waiting, prioritized, delayed, active, failed), at each heartbeat. */
  readonly slicesQueued: Gauge<'state'>;
  /** 1 while every service the worker needs answered its last check (what `/readyz` says). */
  readonly workerReady: Gauge;
  /** 1 while the service answered its last check, by service (kafka, schema-registry, redis). */
  readonly serviceUp: Gauge<'service'>;
  /** Slices handed back as fenced (issue 48): another owner took them. */
  readonly sliceFenced: Counter;
  readonly selfFences: Counter;
  /** Pages a slice read went on from, or stopped at, abnormally (issue 48, `page-check.ts`), by resource and kind. */
  readonly pageEvents: Counter<'resource' | 'kind'>;
  /** The API key's shared budget, deployment-wide (read from Redis at each heartbeat). */
  readonly budget: {
    readonly limit: Gauge;
    readonly remaining: Gauge;
    readonly requests: Gauge;
    readonly procedures: Gauge;
    readonly proceduresPerRequest: Gauge;
    readonly rateLimited: Gauge;
    readonly waiting: Gauge<'priority'>;
    readonly fetcher: Gauge;
  };
  /**
   * What the newest partition proof found (issue 23; read from Redis at each heartbeat): feed rows of its window by
   * outcome, and each type proven (walked per partition) or not (walked per user).
   */
  readonly partition: {
    readonly rows: Gauge<'outcome'>;
    readonly types: Gauge<'type' | 'proven'>;
  };
  /** The exposition text (`text/plain; version=0.0.4`). */
  render(): Promise<string>;
}

export interface PipelineMetricsOptions {
  /** Also collect Node's process metrics (CPU, memory, event-loop lag). @default true */
  processMetrics?: boolean;
  /** Labels added to every series, e.g. `{ worker: hostname }`. @default {} */
  defaultLabels?: Record<string, string>;
}

/** Creates one metrics registry per process (or per test). */
export function createPipelineMetrics(options: PipelineMetricsOptions = {}): PipelineMetrics {
  const registry = new Registry();
  registry.setDefaultLabels(options.defaultLabels ?? {});
  if (options.processMetrics ?? true)
    collectDefaultMetrics({ register: registry, prefix: 'gamedata_process_' });
  const registers = [registry];
  return {
    registry,
    recordsFetched: new Counter({
      name: 'gamedata_records_fetched_total',
      help: 'Records read from the upstream (Connect: source-record-poll-total).',
      labelNames: ['resource'],
      registers,
    }),
    recordsPublished: new Counter({
      name: 'gamedata_records_published_total',
      help: 'Records acknowledged by Kafka (Connect: source-record-write-total).',
      labelNames: ['resource'],
      registers,
    }),
    recordsDeduplicated: new Counter({
      name: 'gamedata_records_deduplicated_total',
      help: 'Records dropped because the same (_id[, version]) was already published.',
      labelNames: ['resource'],
      registers,
    }),
    recordsDeadLettered: new Counter({
      name: 'gamedata_records_dead_lettered_total',
      help: 'Records sent to <topic>.dlq because they could not be encoded.',
      labelNames: ['resource', 'reason'],
      registers,
    }),
    pages: new Counter({
      name: 'gamedata_pages_total',
      help: 'Listing pages read from the upstream.',
      labelNames: ['resource'],
      registers,
    }),
    checkpoints: new Counter({
      name: 'gamedata_checkpoints_total',
      help: 'Slice cursors checkpointed after their records were acknowledged (Connect: offset-commit-completion-total).',
      labelNames: ['resource'],
      registers,
    }),
    httpRequests: new Counter({
      name: 'gamedata_http_requests_total',
      help: 'HTTP requests to the upstream by status (0 = network error).',
      labelNames: ['status'],
      registers,
    }),
    upstreamRounds: new Counter({
      name: 'gamedata_upstream_rounds_total',
      help: 'Sequential waves of upstream calls: a call made while no call of the process is in flight starts one (time ~ rounds when the budget does not bind, ~ requests when it does).',
      registers,
    }),
    batchSize: new Histogram({
      name: 'gamedata_batch_size',
      help: 'Procedures per upstream HTTP request.',
      buckets: [1, 2, 5, 10, 20, 30, 40, 50],
      registers,
    }),
    sliceDuration: new Histogram({
      name: 'gamedata_slice_duration_seconds',
      help: 'Wall time of one slice job.',
      labelNames: ['resource', 'outcome'],
      buckets: [0.1, 0.5, 1, 5, 15, 60, 300, 1800],
      registers,
    }),
    produceLatency: new Histogram({
      name: 'gamedata_produce_latency_seconds',
      help: 'From send to acks=all for one page of records.',
      labelNames: ['topic'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    }),
    sliceFenced: new Counter({
      name: 'gamedata_slice_fenced_total',
      help: 'Slices handed back because another owner fenced them (no attempt spent); past maxFencedHandBacks a slice fails.',
      registers,
    }),
    selfFences: new Counter({
      name: 'gamedata_self_fences_total',
      help: 'Fences that hit a live producer of the fencing process itself (exactly-once; 0 is the guarantee, docs/guarantees.md).',
      registers,
    }),
    pageEvents: new Counter({
      name: 'gamedata_page_events_total',
      help: 'Pages a slice read went on from or stopped at abnormally: empty-page-followed, empty-pages-stopped, missing-cursor-continued, missing-cursor-stopped.',
      labelNames: ['resource', 'kind'],
      registers,
    }),
    schemaDrift: new Counter({
      name: 'gamedata_schema_drift_total',
      help: 'Records encoded with a field the catalogue does not know (new_field) or a value of another type (type_changed), by resource and field path.',
      labelNames: ['resource', 'path', 'kind'],
      registers,
    }),
    cacheLookups: new Counter({
      name: 'gamedata_cache_lookups_total',
      help: 'SWR cache lookups by result: hit (fresh), stale (served while revalidating), miss.',
      labelNames: ['operation', 'result'],
      registers,
    }),
    tailLagSeconds: new Gauge({
      name: 'gamedata_tail_lag_seconds',
      help: 'Seconds between now and the watermark of the resource tail.',
      labelNames: ['resource'],
      registers,
    }),
    tailInterval: new Gauge({
      name: 'gamedata_tail_interval_seconds',
      help: 'The interval of the resource tail (gamedata tail --every).',
      labelNames: ['resource'],
      registers,
    }),
    tailGaps: new Gauge({
      name: 'gamedata_tail_gaps',
      help: 'Ranges of the resource a tail could not read, recorded as gaps and not yet read whole by a later run.',
      labelNames: ['resource'],
      registers,
    }),
    slicesQueued: new Gauge({
      name: 'gamedata_slices_queued',
      help: "Slices in the deployment's queue by state (waiting, prioritized, delayed, active, failed), read at each heartbeat.",
      labelNames: ['state'],
      registers,
    }),
    workerReady: new Gauge({
      name: 'gamedata_worker_ready',
      help: '1 while every service the worker needs answered its last check (as /readyz), else 0.',
      registers,
    }),
    serviceUp: new Gauge({
      name: 'gamedata_service_up',
      help: '1 while the service answered its last check, else 0, by service (kafka, schema-registry, redis).',
      labelNames: ['service'],
      registers,
    }),
    rateLimitRemaining: new Gauge({
      name: 'gamedata_upstream_ratelimit_remaining',
      help: 'The last ratelimit-remaining header seen from the upstream.',
      registers,
    }),
    budget: {
      limit: new Gauge({
        name: 'gamedata_budget_limit',
        help: "The API key's request limit per window (ratelimit-limit as the shared budget's fetcher last saw it).",
        registers,
      }),
      remaining: new Gauge({
        name: 'gamedata_budget_remaining',
        help: 'Requests left in the current window (the shared budget: every worker on the key).',
        registers,
      }),
      requests: new Gauge({
        name: 'gamedata_budget_requests',
        help: 'Upstream requests sent on the key by every worker since its budget keys were created.',
        registers,
      }),
      procedures: new Gauge({
        name: 'gamedata_budget_procedures',
        help: 'Procedures carried by those requests (identical calls share one).',
        registers,
      }),
      proceduresPerRequest: new Gauge({
        name: 'gamedata_budget_procedures_per_request',
        help: 'Procedures per request on the key so far (50 = every POST full).',
        registers,
      }),
      rateLimited: new Gauge({
        name: 'gamedata_budget_rate_limited',
        help: 'Requests on the key answered 429 since its budget keys were created.',
        registers,
      }),
      waiting: new Gauge({
        name: 'gamedata_budget_waiting_calls',
        help: 'Calls waiting in the shared budget, by priority (feed-tail, resource-tail, backfill, rescan).',
        labelNames: ['priority'],
        registers,
      }),
      fetcher: new Gauge({
        name: 'gamedata_budget_fetcher',
        help: "1 while this process is the key's elected fetcher.",
        registers,
      }),
    },
    partition: {
      rows: new Gauge({
        name: 'gamedata_partition_rows',
        help: "The newest partition proof's feed rows by outcome: covered (in one walk), uncovered (in none), repeated (in several); foreign: walk rows the feed lacked.",
        labelNames: ['outcome'],
        registers,
      }),
      types: new Gauge({
        name: 'gamedata_partition_types',
        help: 'The newest partition proof: 1 per transaction type, proven="true" (walked per partition) or "false" (walked per user).',
        labelNames: ['type', 'proven'],
        registers,
      }),
    },
    render: () => registry.metrics(),
  };
}
