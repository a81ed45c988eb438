/**
 * The worker's services watched from the start (issue 17: a worker never hangs): Kafka, the registry and Redis, one
 * line per change of state, exit 1 after `--give-up-after` of one being down; `/healthz`, `/readyz` and `/metrics`
 * answer while the worker waits. And the pipeline loaded once the services answer (`loadWorkerPipeline`).
 */
import { hostname } from 'node:os';
import type { PipelineSettings } from '../../foundation/config/index.js';
import { formatDuration } from '../../foundation/config/index.js';
import { ConfigError } from '../../foundation/errors/index.js';
import type { ServiceError } from '../../foundation/errors/index.js';
import {
  createPipelineMetrics,
  startMetricsServer,
  type MetricsServer,
  type PipelineMetrics,
  type Readiness,
} from '../../foundation/metrics/index.js';
import type { WorkerOperations } from '../status/index.js';
import { maskSecrets } from './mask-secrets.js';
import { createServiceMonitor } from './service-monitor.js';
import type { ServiceMonitor } from './service-monitor.js';
import { workerServiceProbes } from './service-probes.js';

/** The endpoint, on `port` or (taken: several workers on one machine) any free port. */
async function startProbeServer(
  metrics: PipelineMetrics,
  port: number,
  host: string,
  readiness: () => Readiness,
): Promise<MetricsServer> {
  try {
    try {
      return await startMetricsServer(metrics, { port, host, readiness });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
      return await startMetricsServer(metrics, { port: 0, host, readiness });
    }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new ConfigError(
      `cannot serve /metrics on ${host}:${port} (${code}); check GAMEDATA_METRICS_HOST / --metrics-port`,
    );
  }
}

export interface ServiceWatch {
  monitor: ServiceMonitor;
  metrics: PipelineMetrics;
  metricsHost: string;
  probeServer: MetricsServer | undefined;
  /** The monitor's give-up, once it gave up (it also aborted `stopping`). */
  gaveUp(): ServiceError | undefined;
  /** Closes the monitor and the endpoint (a worker that stops before it connected). */
  close(): Promise<void>;
}

/** Starts watching; a give-up aborts `stopping`. */
export async function watchServices(
  settings: PipelineSettings,
  giveUpAfterMs: number,
  stopping: AbortController,
): Promise<ServiceWatch> {
  let gaveUp: ServiceError | undefined;
  const monitor = createServiceMonitor(workerServiceProbes(settings), {
    giveUpAfterMs,
    giveUpLabel: formatDuration(giveUpAfterMs),
    // Down from the start: the deadline counts from launch (module loading included).
    downSince: Date.now() - process.uptime() * 1000,
    onChange: (line) => console.error(maskSecrets(`worker: ${line}`)),
    onGiveUp: (error) => {
      gaveUp = error;
      stopping.abort();
    },
  });
  // /healthz and /readyz answer while the worker waits for its services; /metrics is the same endpoint.
  const metrics = createPipelineMetrics({ defaultLabels: { worker: `${hostname()}-${process.pid}` } });
  // Loopback unless asked otherwise (= DEFAULT_WORKER_TELEMETRY_OPTIONS.metricsHost).
  const metricsHost = settings.metricsHost ?? '127.0.0.1';
  const probeServer =
    settings.metricsPort === false
      ? undefined
      : await startProbeServer(metrics, settings.metricsPort ?? 9464, metricsHost, () => monitor.readiness());
  monitor.start();
  return {
    monitor,
    metrics,
    metricsHost,
    probeServer,
    gaveUp: () => gaveUp,
    async close() {
      await monitor.close();
      await probeServer?.close();
    },
  };
}

/**
 * The pipeline (kafkajs, BullMQ, the client, the encoders), loaded once the services answer: a worker that waits, or
 * gives up, does not spend its first seconds loading what it cannot use yet.
 */
export async function loadWorkerPipeline(
  settings: PipelineSettings,
  watch: ServiceWatch,
  schedules: boolean,
) {
  const [slice, queue, app, status] = await Promise.all([
    import('../../pipeline/slice/index.js'),
    import('../../pipeline/queue/index.js'),
    import('../index.js'),
    import('../status/index.js'),
  ]);
  const operations: WorkerOperations = status.createWorkerOperations(settings, {
    metricsPort: watch.probeServer?.port ?? false,
    metricsHost: watch.metricsHost,
    schedules,
    telemetry: { metrics: watch.metrics },
  });
  return { ...slice, ...queue, ...app, ops: operations };
}

export type WorkerPipeline = Awaited<ReturnType<typeof loadWorkerPipeline>>;
