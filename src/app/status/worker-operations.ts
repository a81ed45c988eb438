/**
 * Everything a worker process runs besides the slice and run workers: the `/metrics` endpoint with the pipeline
 * instrumented, the heartbeat, and the schedule worker (tail and cron ticks). `gamedata worker` and tests call it
 * the same way:
 *
 * @example
 * const ops = createWorkerOperations(settings, { metricsPort: 9464 });
 * const rt = await createPipelineRuntime(settings, ops.runtimeOptions);
 * const workers = startPipelineWorkers({ connection: bull, prefix: settings.queuePrefix }, ops.instrument(rt));
 * await ops.start({ runtime: rt, workers, connection: bull });
 * // ... on shutdown:
 * await ops.close(); await workers.close(); await rt.close();
 */
import { Queue, type ConnectionOptions } from 'bullmq';
import type { PipelineRuntime, PipelineRuntimeOptions } from '../index.js';
import type { PipelineWorkers, PipelineWorkerDeps } from '../../pipeline/queue/index.js';
import type { PipelineSettings } from '../../foundation/config/index.js';
import { createLogger } from '../../foundation/config/index.js';
import { QUEUE_NAMES } from '../../pipeline/contract/index.js';
import { MAX_EMPTY_FOLLOWS, type PageEventKind } from '../../upstream/client/index.js';
import {
  startScheduleWorker,
  type ScheduleWorker,
  type ScheduleWorkerOptions,
} from '../../pipeline/schedules/index.js';
import {
  createWorkerTelemetry,
  type WorkerTelemetry,
  type WorkerTelemetryOptions,
} from './worker-telemetry.js';

/** What each page event means, for its one log line. */
const PAGE_EVENT_TEXT: Record<PageEventKind, string> = {
  'empty-page-followed': 'the upstream sent an empty page with a cursor that moved; it was followed',
  'empty-pages-stopped': `the upstream sent ${MAX_EMPTY_FOLLOWS} empty pages in a row with moving cursors; the read stopped there`,
  'missing-cursor-continued':
    "the upstream sent a full page without a cursor; the read went on from its last row's bound",
  'missing-cursor-stopped':
    'the upstream sent a full page without a cursor and no usable last row; the read stopped there',
};

export interface WorkerOperationsOptions {
  /** `/metrics` port (`GAMEDATA_METRICS_PORT`, read by loadConfig): 0 = any free port, false = off. @default 9464 */
  metricsPort?: number | false;
  /** `GAMEDATA_METRICS_HOST` (read by loadConfig). @default '127.0.0.1' */
  metricsHost?: string;
  /** Run the schedule worker here (tail and cron ticks). @default true */
  schedules?: boolean;
  /** Options of the schedule worker (concurrency, targetRows, ...). */
  scheduleWorker?: Omit<ScheduleWorkerOptions, 'connection' | 'prefix' | 'redisPrefix'>;
  telemetry?: Omit<WorkerTelemetryOptions, 'topicPrefix' | 'redisPrefix' | 'metricsPort' | 'metricsHost'>;
}

export interface WorkerOperations {
  readonly telemetry: WorkerTelemetry;
  /** Pass to `createPipelineRuntime` (the client reports its HTTP exchanges). */
  readonly runtimeOptions: PipelineRuntimeOptions;
  instrument<D extends PipelineWorkerDeps>(deps: D): D;
  /** Starts the endpoint, heartbeat and schedule worker. Resolves to the `/metrics` URL (if on). */
  start(o: {
    runtime: PipelineRuntime;
    workers?: PipelineWorkers;
    connection: ConnectionOptions;
  }): Promise<string | undefined>;
  readonly schedules: ScheduleWorker | undefined;
  /** Stops the schedule worker, the heartbeat and the endpoint (before the runtime closes Redis). */
  close(): Promise<void>;
}

export function createWorkerOperations(
  settings: PipelineSettings,
  options: WorkerOperationsOptions = {},
): WorkerOperations {
  const telemetry = createWorkerTelemetry({
    ...options.telemetry,
    topicPrefix: settings.topicPrefix,
    redisPrefix: settings.redisPrefix,
    metricsPort: options.metricsPort ?? 9464,
    ...(options.metricsHost === undefined ? {} : { metricsHost: options.metricsHost }),
  });
  let schedules: ScheduleWorker | undefined;
  let slicesQueue: Queue | undefined;
  const evolvedLog = createLogger('publish.schema-evolution');
  const pageLog = createLogger('client.pages');
  const fenceLog = createLogger('publish.fencing');
  const pageEventsLogged = new Set<string>();
  return {
    telemetry,
    runtimeOptions: {
      client: { onRequest: (info) => telemetry.onRequest(info) },
      onDrift: (resource, drift) => telemetry.onDrift(resource, drift),
      // Issue 48: each abnormal page is counted; each kind is logged once per resource and process.
      onPageEvent: (resource, event) => {
        telemetry.onPageEvent(resource, event);
        const once = `${resource}\t${event.kind}`;
        if (pageEventsLogged.has(once)) return;
        pageEventsLogged.add(once);
        pageLog.warn(
          { resource, kind: event.kind, cursor: event.cursor },
          `${resource}: ${PAGE_EVENT_TEXT[event.kind]} (page read at ${event.cursor ?? "the slice's end bound"}); counted in gamedata_page_events_total, said once`,
        );
      },
      // Issue 47: a worker never fences its own live producer; if it ever does, it is counted and said.
      onSelfFence: (transactionalId, sliceKey) => {
        telemetry.onSelfFence();
        fenceLog.warn(
          { transactionalId, sliceKey },
          `exactly-once: fenced its own live producer ${transactionalId} (slice ${sliceKey}); counted in gamedata_self_fences_total`,
        );
      },
      // An `evolve` contract registered a field (issue 35): one log line, the subject and the schema id.
      onSchemaEvolved: (f) =>
        evolvedLog.info(
          { resource: f.resource, subject: f.subject, path: f.path, kind: f.kind, schemaId: f.id },
          `schema of ${f.resource} evolved: ${f.path} (${f.kind}) is a field of ${f.subject} from schema id ${f.id}`,
        ),
    },
    instrument: (deps) => telemetry.instrument(deps),
    get schedules() {
      return schedules;
    },
    async start({ runtime, workers, connection }) {
      slicesQueue = new Queue(QUEUE_NAMES.slices, { connection, prefix: settings.queuePrefix });
      slicesQueue.on('error', () => undefined); // the worker's service monitor reports Redis
      const url = await telemetry.start({
        slicesQueue,
        redis: runtime.redis,
        client: runtime.client,
        budget: runtime.budget,
        ...(workers === undefined ? {} : { slices: workers.slices }),
      });
      if (options.schedules ?? true) {
        schedules = startScheduleWorker(
          {
            ...options.scheduleWorker,
            connection,
            prefix: settings.queuePrefix,
            redisPrefix: settings.redisPrefix,
          },
          {
            redis: runtime.redis,
            planner: runtime.planner,
            counters: runtime.counters,
            runs: runtime.runs,
            users: runtime.users,
            budget: runtime.budget,
            tailLag: telemetry.metrics.tailLagSeconds,
            tailInterval: telemetry.metrics.tailInterval,
            tailGaps: telemetry.metrics.tailGaps,
          },
        );
      }
      return url;
    },
    async close() {
      await schedules?.close();
      await telemetry.close();
      await slicesQueue?.close().catch(() => undefined);
    },
  };
}
