/**
 * The running part of a worker: BullMQ's slice and run workers on their own Redis connection, paused while a service
 * is down, and the worker's lines (progress, take-overs, slot changes, errors the monitor does not already report).
 */
import type { PipelineSettings } from '../../foundation/config/index.js';
import { formatDuration } from '../../foundation/config/index.js';
import type { PipelineRuntime } from '../index.js';
import type { ConcurrencyChange } from '../../pipeline/queue/index.js';
import { isConnectionError } from './connection-error.js';
import { maskSecrets } from './mask-secrets.js';
import type { ServiceMonitor } from './service-monitor.js';
import type { WorkerFlags } from './worker-flags.js';
import type { StopSignals } from './worker-signals.js';
import type { WorkerPipeline } from './worker-watch.js';

/** The services the monitor watches: all are checked again when a slice saw a connection fail. */
const WATCHED = ['kafka', 'schema-registry', 'redis', 'upstream'] as const;

/** See `refused` in {@link startWorkerSlices}. */
const REFUSAL_LINE_AFTER_MS = 15_000;

/** The line a change of the worker's slots prints. */
export function concurrencyLine(c: ConcurrencyChange): string {
  const head = `worker: ${c.to} slices at once (was ${c.from})`;
  const busy = c.busy === undefined ? '' : `, CPU ${Math.round(c.busy * 100)} % busy`;
  switch (c.reason) {
    case 'short':
      return `${head}: the key binds and POSTs leave with ${c.demand?.calls ?? '?'} of ${c.demand?.maxBatch ?? '?'} calls${busy}`;
    case 'spare':
      return `${head}: the key has requests to spare and ${c.demand?.queued ?? '?'} slices wait${busy}`;
    case 'chains':
      return `${head}: ${c.demand?.queued ?? '?'} slices wait and the key's full POSTs go below its rate (${c.demand?.chains ?? '?'} chains would spend it)${busy}`;
    case 'full':
      return `${head}: every slot is taken, ${c.demand?.queued ?? '?'} slices wait and the key has requests to spare${busy}`;
    case 'free':
      return c.demand === undefined
        ? `${head}: no batch sent lately`
        : `${head}: the key does not bind and no slice waits for a slot`;
    default:
      return head;
  }
}

export interface WorkerSlicesOptions {
  settings: PipelineSettings;
  flags: WorkerFlags;
  runtime: PipelineRuntime;
  pipeline: WorkerPipeline;
  monitor: ServiceMonitor;
  stop: StopSignals;
}

/** Starts the workers and the operations (schedules, telemetry); `close()` drains them and their connection. */
export async function startWorkerSlices(o: WorkerSlicesOptions): Promise<{ close(): Promise<void> }> {
  const { settings, flags, runtime, monitor } = o;
  const { connectRedis, startPipelineWorkers, ops } = o.pipeline;
  // Connection errors are reported by the monitor, once per change of state (not once per retry).
  runtime.redis.on('error', () => undefined);
  // BullMQ workers get their own connection (blocking commands); the runtime's serves dedup and counters.
  const bull = connectRedis(settings.redisUrl);
  bull.on('error', () => undefined);
  // A slice refused for this process's credentials (handed back by the slice worker): the probes authenticate the
  // same way, so the monitor ends the worker with one line. Only if it has not within REFUSAL_LINE_AFTER_MS (a
  // refusal the probes do not see) is the slice's own reason printed, once.
  let refusalLine: ReturnType<typeof setTimeout> | undefined;
  const refused = (e: Error): void => {
    for (const service of WATCHED) monitor.recheck(service);
    refusalLine ??= setTimeout(() => {
      if (!o.stop.stopping.signal.aborted) console.error(maskSecrets(`worker: ${e.name}: ${e.message}`));
    }, REFUSAL_LINE_AFTER_MS);
    refusalLine.unref();
  };
  const workers = startPipelineWorkers(
    {
      connection: bull,
      prefix: settings.queuePrefix,
      concurrency: flags.concurrency,
      ...(flags.maxConcurrency === undefined ? {} : { maxConcurrency: flags.maxConcurrency }),
      lockDuration: flags.lockDurationMs,
      stalledInterval: flags.stalledIntervalMs,
      livenessTimeoutMs: flags.livenessTimeoutMs,
      // Rare (a worker died), so printed even with --quiet.
      onTakeover: (ids, dead) =>
        console.error(
          `worker: took over ${ids.length} slice${ids.length === 1 ? '' : 's'} of ${dead.join(', ')} (no heartbeat for ${formatDuration(flags.livenessTimeoutMs)})`,
        ),
      onError: (e, where) => {
        if (where === 'credentials') {
          refused(e);
          return;
        }
        if (!monitor.isReady() || isConnectionError(e)) {
          // The monitor says it (or will, after this recheck).
          for (const service of WATCHED) monitor.recheck(service);
          return;
        }
        console.error(maskSecrets(`worker: ${where}: ${e.name}: ${e.message}`));
      },
      // Issue 47: orphaned exactly-once locks (a run abandoned mid-page) are swept every 10 min; rare, so said.
      onLocksSwept: (r) =>
        console.error(
          `worker: swept ${r.committed + r.released} orphaned dedup lock(s) (${r.committed} of pages that committed, marked seen; ${r.released} released)`,
        ),
      // Issue 48: each fenced hand-back is counted (an alert watches them); past the bound the slice fails.
      onFencedHandBack: () => o.pipeline.ops.telemetry.metrics.sliceFenced.inc(),
      // A slice that failed while a service is down is handed back (no attempt spent): the probes decide, now.
      servicesDown: async () => !(await monitor.checkNow()),
      // Rare, and it fails the run: printed even with --quiet, and even while a service is down.
      onSliceFailed: (id, e, attempts) =>
        console.error(
          maskSecrets(
            `worker: slice ${id} failed for good after ${attempts} attempt${attempts === 1 ? '' : 's'}: ${e.message}`,
          ),
        ),
      // Rare (a change of state of the key's budget), so printed even with --quiet.
      onConcurrency: (c) => console.error(concurrencyLine(c)),
      onProgress: (ev) => {
        if (flags.quiet && ev.kind === 'slice') return;
        const r = ev.result;
        const c = 'counters' in r ? r.counters : r;
        console.error(
          `${ev.kind} ${ev.id}: fetched ${c.fetched}, published ${c.published}, deduplicated ${c.deduplicated}, dead-lettered ${c.deadLettered}`,
        );
      },
    },
    ops.instrument(runtime),
  );
  // No new slices while a service is down (each would fail and spend one of its attempts).
  const follow = (ready: boolean): void => {
    if (o.stop.stopping.signal.aborted) return;
    (ready ? workers.slices.resume() : workers.slices.pause(true)).catch(() => undefined);
  };
  monitor.onReadyChange(follow);
  if (!monitor.isReady()) follow(false);
  const metricsUrl = await ops.start({ runtime, workers, connection: bull });
  console.error(
    `worker: pid ${process.pid}, concurrency ${flags.concurrency}, queue prefix ${settings.queuePrefix}, metrics ${metricsUrl ?? 'off'}`,
  );
  return {
    async close() {
      clearTimeout(refusalLine);
      await ops.close();
      await workers.close();
      await bull.quit();
    },
  };
}
