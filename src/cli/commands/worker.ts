/**
 * `gamedata worker [--concurrency N]`: processes slice jobs (and completes runs) until SIGTERM/SIGINT, then drains:
 * running slices stop after the page in hand is published and checkpointed, the workers close, then Kafka and
 * Redis. All slices of the process share one batching client. `--processes N|auto` runs N such processes under one
 * supervisor (src/cli/worker-processes.ts: signals forwarded, crashed children restarted with backoff, /metrics on
 * port + index).
 * Settings: GAMEDATA_API_URL, GAMEDATA_API_KEY, KAFKA_BROKERS, SCHEMA_REGISTRY_URL, REDIS_URL, GAMEDATA_TOPIC_PREFIX.
 */
import { hostname } from 'node:os';
import type { Command } from 'commander';
import { AbortedError, ConfigError, GamedataError, ServiceError } from '../../errors.js';
import type { PipelineRuntime } from '../../jobs/index.js';
import { exitIfStillRunning } from '../exit-if-still-running.js';
import { formatDuration, loadConfig, parseDuration, readPipelineSettings } from '../../config/index.js';
import {
  createPipelineMetrics,
  startMetricsServer,
  type MetricsServer,
  type PipelineMetrics,
  type Readiness,
} from '../../metrics/index.js';
import type { WorkerOperations } from '../../status/index.js';
import { maskSecrets } from '../mask-secrets.js';
import { createServiceMonitor } from '../service-monitor.js';
import { workerServiceProbes } from '../service-probes.js';
import { childMetricsPort, resolveProcessCount, runWorkerProcesses } from '../worker-processes.js';

/** A positive duration flag (`10s`, `5m`, `1d`, `500ms`), or undefined when not given. */
function durationFlag(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const ms = parseDuration(name, value);
  if (ms <= 0)
    throw new ConfigError(
      `${name} must be a positive duration such as 10s, 5m or 1h, got ${JSON.stringify(value)}`,
    );
  return ms;
}

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

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

/** Runs `work`; false when it did not finish within `ms` (it is left running: the caller exits). */
async function within(ms: number, work: () => Promise<void>): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  const done = work().then(
    () => true,
    () => true,
  );
  const result = await Promise.race([done, late]);
  clearTimeout(timer);
  return result;
}

/** A lost or refused connection (the monitor reports those), as opposed to an error worth a line of its own. */
function isConnectionError(error: Error): boolean {
  return /ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|EHOSTUNREACH|ENOTFOUND|Connection is closed|unreachable|Stream isn't writeable/i.test(
    `${(error as NodeJS.ErrnoException).code ?? ''} ${error.message}`,
  );
}

/** This command's argv without `--processes` and `--metrics-port` (the supervisor gives each child its own). */
function childArgv(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if (a === '--processes' || a === '--metrics-port') i++;
    else if (!a.startsWith('--processes=') && !a.startsWith('--metrics-port=')) out.push(a);
  }
  return out;
}

export function register(program: Command): void {
  program
    .command('worker')
    .description('process backfill slices: fetch -> dedup -> Avro -> Kafka -> ack -> mark seen -> checkpoint')
    .option(
      '--concurrency <n>',
      'slices processed at once by this process (enough page reads to fill 50-call batches on the shared budget)',
      '32',
    )
    .option('--quiet', 'no per-slice lines')
    .option(
      '--lock-duration <ms>',
      "slice lock lifetime; a killed worker's slices resume after about this long",
      '30000',
    )
    .option('--stalled-interval <ms>', 'how often orphaned slices are looked for', '15000')
    .option(
      '--liveness-timeout <ms>',
      'a worker whose heartbeat stops this long (killed) loses its slices to the others at once, before their locks expire (0 = off)',
      '10000',
    )
    .option(
      '--metrics-port <port>',
      '/metrics port (0 = any free port, off = none; env GAMEDATA_METRICS_PORT)',
    )
    .option('--no-schedules', 'do not fire tail / cron schedule ticks in this process')
    .option(
      '--give-up-after <duration>',
      'exit 1 when Kafka, the registry or Redis stays unreachable this long (env GAMEDATA_GIVE_UP_AFTER; default 5m)',
    )
    .option(
      '--drain-timeout <duration>',
      'after SIGTERM/SIGINT, exit even if draining takes longer (env GAMEDATA_DRAIN_TIMEOUT; default 30s)',
    )
    .option(
      '--processes <n|auto>',
      'run N worker processes (auto = one per core), each with --concurrency slices and /metrics on port + index',
    )
    .action(
      async (flags: {
        concurrency: string;
        quiet?: boolean;
        lockDuration: string;
        stalledInterval: string;
        livenessTimeout: string;
        metricsPort?: string;
        schedules: boolean;
        processes?: string;
        giveUpAfter?: string;
        drainTimeout?: string;
      }) => {
        const lockDuration = Number(flags.lockDuration);
        const stalledInterval = Number(flags.stalledInterval);
        if (!Number.isSafeInteger(lockDuration) || lockDuration < 1000)
          throw new ConfigError(`--lock-duration must be an integer >= 1000 ms, got ${flags.lockDuration}`);
        if (!Number.isSafeInteger(stalledInterval) || stalledInterval < 500)
          throw new ConfigError(
            `--stalled-interval must be an integer >= 500 ms, got ${flags.stalledInterval}`,
          );
        const livenessTimeoutMs = Number(flags.livenessTimeout);
        if (!Number.isSafeInteger(livenessTimeoutMs) || (livenessTimeoutMs !== 0 && livenessTimeoutMs < 500))
          throw new ConfigError(
            `--liveness-timeout must be 0 (off) or an integer >= 500 ms, got ${flags.livenessTimeout}`,
          );
        const concurrency = Number(flags.concurrency);
        if (!Number.isSafeInteger(concurrency) || concurrency < 1) {
          throw new ConfigError(
            `--concurrency must be a positive integer, got ${JSON.stringify(flags.concurrency)}`,
          );
        }
        const giveUpFlag = durationFlag('--give-up-after', flags.giveUpAfter);
        const drainFlag = durationFlag('--drain-timeout', flags.drainTimeout);
        // Every setting through loadConfig (src/config); flags win over GAMEDATA_METRICS_PORT,
        // GAMEDATA_GIVE_UP_AFTER and GAMEDATA_DRAIN_TIMEOUT.
        const overrides = {
          metricsPort: flags.metricsPort,
          giveUpAfterMs: giveUpFlag,
          drainTimeoutMs: drainFlag,
        };
        const settings = readPipelineSettings(undefined, process.env, overrides);
        const { giveUpAfterMs, drainTimeoutMs } = loadConfig({ overrides });
        if (flags.processes !== undefined) {
          const processes = resolveProcessCount(flags.processes);
          const args = childArgv(process.argv.slice(2));
          console.error(`worker processes: starting ${processes}`);
          process.exit(
            await runWorkerProcesses({
              processes,
              childArgs: (i) => [...args, '--metrics-port', childMetricsPort(settings.metricsPort, i)],
            }),
          );
        }

        // SIGTERM/SIGINT (or the supervisor gone) -> drain; a second signal exits at once.
        const stopping = new AbortController();
        const onSignal = (signal: string): void => {
          if (stopping.signal.aborted) {
            console.error(`worker: ${signal} again: exiting without draining`);
            process.exit(1);
          }
          console.error(`worker: ${signal}: draining`);
          stopping.abort();
        };
        process.on('SIGTERM', () => onSignal('SIGTERM'));
        process.on('SIGINT', () => onSignal('SIGINT'));
        // A child of `--processes`: drain when the supervisor's IPC channel closes (it was killed).
        // Only the first notice counts: the channel also closes when this worker disconnects it, once drained.
        const onDisconnect = (): void => {
          if (!stopping.signal.aborted) onSignal('supervisor gone');
        };
        if (process.connected) process.once('disconnect', onDisconnect);

        // Kafka, the registry and Redis watched from the start (issue 17: a worker never hangs): one line per
        // change of state, slices paused while one is down, exit 1 after --give-up-after of one being down.
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
            : await startProbeServer(metrics, settings.metricsPort ?? 9464, metricsHost, () =>
                monitor.readiness(),
              );
        monitor.start();
        // The pipeline (kafkajs, BullMQ, the client, the encoders) loads once the services answer: a worker that
        // waits, or gives up, does not spend its first seconds loading what it cannot use yet.
        const loadPipeline = async () => {
          const [jobs, status] = await Promise.all([
            import('../../jobs/index.js'),
            import('../../status/index.js'),
          ]);
          const operations: WorkerOperations = status.createWorkerOperations(settings, {
            metricsPort: probeServer?.port ?? false,
            metricsHost,
            schedules: flags.schedules,
            telemetry: { metrics },
          });
          return { ...jobs, ops: operations };
        };
        let pipeline: Awaited<ReturnType<typeof loadPipeline>> | undefined;

        const closeEarly = async (): Promise<void> => {
          await monitor.close();
          await probeServer?.close();
        };
        let rt: PipelineRuntime | undefined;
        let connectFailures = 0;
        let firstConnectFailure = 0;
        try {
          while (rt === undefined && (await monitor.waitUntilReady(stopping.signal))) {
            try {
              pipeline ??= await loadPipeline();
              rt = await pipeline.createPipelineRuntime(settings, pipeline.ops.runtimeOptions);
            } catch (error) {
              const e = GamedataError.from(error);
              if (!(e instanceof ServiceError) || !e.retriable) throw e;
              // Reachable to the probe but the producer could not start (a broker still starting): retry.
              if (connectFailures++ === 0) firstConnectFailure = Date.now();
              if (Date.now() - firstConnectFailure >= giveUpAfterMs) throw e;
              monitor.recheck('kafka');
              await sleep(Math.min(5_000, 250 * 2 ** connectFailures), stopping.signal);
            }
          }
        } catch (error) {
          await closeEarly();
          throw error;
        }
        if (rt === undefined) {
          // Stopped (signal or give-up) before the services were reachable: nothing to drain.
          await closeEarly();
          if (gaveUp !== undefined) throw gaveUp;
          console.error('worker: closed');
          process.off('disconnect', onDisconnect);
          if (process.connected) process.disconnect();
          return;
        }
        const runtime = rt;
        const { connectRedis, startPipelineWorkers, ops } = pipeline as NonNullable<typeof pipeline>;
        // Connection errors are reported by the monitor, once per change of state (not once per retry).
        runtime.redis.on('error', () => undefined);
        // BullMQ workers get their own connection (blocking commands); the runtime's serves dedup and counters.
        const bull = connectRedis(settings.redisUrl);
        bull.on('error', () => undefined);
        const workers = startPipelineWorkers(
          {
            connection: bull,
            prefix: settings.queuePrefix,
            concurrency,
            lockDuration,
            stalledInterval,
            livenessTimeoutMs,
            // Rare (a worker died), so printed even with --quiet.
            onTakeover: (ids, dead) =>
              console.error(
                `worker: took over ${ids.length} slice${ids.length === 1 ? '' : 's'} of ${dead.join(', ')} (no heartbeat for ${formatDuration(livenessTimeoutMs)})`,
              ),
            onError: (e, where) => {
              if (!monitor.isReady() || isConnectionError(e)) {
                // The monitor says it (or will, after this recheck).
                for (const service of ['kafka', 'schema-registry', 'redis'] as const)
                  monitor.recheck(service);
                return;
              }
              console.error(maskSecrets(`worker: ${where}: ${e.name}: ${e.message}`));
            },
            // Rare (a change of state of the key's budget), so printed even with --quiet.
            onConcurrency: (c) =>
              console.error(
                c.reason === 'short'
                  ? `worker: ${c.to} slices at once (was ${c.from}): the key binds and POSTs leave with ${c.demand?.calls ?? '?'} of ${c.demand?.maxBatch ?? '?'} calls`
                  : `worker: ${c.to} slices at once (was ${c.from})${c.reason === 'free' ? ': the key no longer binds' : ''}`,
              ),
            onProgress: (ev) => {
              if (flags.quiet === true && ev.kind === 'slice') return;
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
          if (stopping.signal.aborted) return;
          (ready ? workers.slices.resume() : workers.slices.pause(true)).catch(() => undefined);
        };
        monitor.onReadyChange(follow);
        if (!monitor.isReady()) follow(false);
        const metricsUrl = await ops.start({ runtime, workers, connection: bull });
        console.error(
          `worker: pid ${process.pid}, concurrency ${concurrency}, queue prefix ${settings.queuePrefix}, metrics ${metricsUrl ?? 'off'}`,
        );
        if (!stopping.signal.aborted)
          await new Promise<void>((resolve) =>
            stopping.signal.addEventListener('abort', () => resolve(), { once: true }),
          );
        // Drain within --drain-timeout: running slices checkpoint their page, then everything closes.
        const drained = await within(drainTimeoutMs, async () => {
          await monitor.close();
          await ops.close();
          await workers.close();
          await bull.quit();
          await runtime.close();
          await probeServer?.close();
        });
        if (gaveUp !== undefined) throw gaveUp;
        if (!drained)
          throw new AbortedError(
            `worker: drain did not finish within ${formatDuration(drainTimeoutMs)} (--drain-timeout); exiting`,
          );
        console.error('worker: closed');
        // Nothing is left to do: if a library left a timer or socket open, say what and exit after 5 s.
        exitIfStillRunning(5_000, 'worker');
        // A child of `--processes`: close the IPC channel too, or it keeps this process alive.
        process.off('disconnect', onDisconnect);
        if (process.connected) process.disconnect();
      },
    );
}
