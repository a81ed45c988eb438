/**
 * `gamedata worker [--concurrency N]`: processes slice jobs (and completes runs) until SIGTERM/SIGINT, then drains:
 * running slices stop after the page in hand is published and checkpointed, the workers close, then Kafka and
 * Redis. All slices of the process share one batching client. `--processes N|auto` runs N such processes under one
 * supervisor (src/app/cli/worker-processes.ts: signals forwarded, crashed children restarted with backoff, /metrics on
 * port + index).
 * Settings: GAMEDATA_API_URL, GAMEDATA_API_KEY, KAFKA_BROKERS, SCHEMA_REGISTRY_URL, REDIS_URL, GAMEDATA_TOPIC_PREFIX.
 *
 * The parts: flags (`../worker-flags.ts`, pure), stop signals (`../worker-signals.ts`), the services watched and
 * the probe endpoint (`../worker-watch.ts`), the life (`pipeline/queue/worker-lifecycle.ts`: wait -> connect with retry ->
 * drain) and the slice workers with their lines (`../worker-slices.ts`).
 */
import type { Command } from 'commander';
import { AbortedError } from '../../../foundation/errors/index.js';
import { connectWithRetry, drainWithin, waitForStop } from '../../../pipeline/queue/index.js';
import { formatDuration, loadConfig, readPipelineSettings } from '../../../foundation/config/index.js';
import { exitIfStillRunning } from '../exit-if-still-running.js';
import { childArgv, parseWorkerFlags } from '../worker-flags.js';
import type { WorkerFlagValues } from '../worker-flags.js';
import { childMetricsPort, resolveProcessCount, runWorkerProcesses } from '../worker-processes.js';
import { listenForStop } from '../worker-signals.js';
import { startWorkerSlices } from '../worker-slices.js';
import { loadWorkerPipeline, watchServices } from '../worker-watch.js';
import type { WorkerPipeline } from '../worker-watch.js';

export function register(program: Command): void {
  program
    .command('worker')
    .description('process backfill slices: fetch -> dedup -> Avro -> Kafka -> ack -> mark seen -> checkpoint')
    .option(
      '--concurrency <n>',
      'slices processed at once by this process (enough page reads to fill 50-call batches on the shared budget)',
      '32',
    )
    .option(
      '--max-concurrency <n>',
      'slices this process may grow to while the key has requests to spare or its batches leave short (default: the larger of --concurrency and 512)',
    )
    .option('--quiet', 'no per-slice lines')
    .option(
      '--lock-duration <duration>',
      "slice lock lifetime (30s, 500ms, 2m; a bare number is ms); a killed worker's slices resume after about this long",
      '30000',
    )
    .option(
      '--stalled-interval <duration>',
      'how often orphaned slices are looked for (a bare number is ms)',
      '15000',
    )
    .option(
      '--liveness-timeout <duration>',
      'a worker whose heartbeat stops this long (killed) loses its slices to the others at once, before their locks expire (0 = off; a bare number is ms)',
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
    .action(runWorker);
}

/** The worker: supervise `--processes`, or wait for the services, connect, run the slices until stopped, drain. */
async function runWorker(values: WorkerFlagValues): Promise<void> {
  const flags = parseWorkerFlags(values);
  // Every setting through loadConfig (src/foundation/config); flags win over GAMEDATA_METRICS_PORT,
  // GAMEDATA_GIVE_UP_AFTER and GAMEDATA_DRAIN_TIMEOUT.
  const overrides = {
    metricsPort: flags.metricsPort,
    giveUpAfterMs: flags.giveUpAfterMs,
    drainTimeoutMs: flags.drainTimeoutMs,
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
  const stop = listenForStop();
  const watch = await watchServices(settings, giveUpAfterMs, stop.stopping);
  let pipeline: WorkerPipeline | undefined;
  const runtime = await connectWithRetry({
    signal: stop.stopping.signal,
    waitUntilReady: (signal) => watch.monitor.waitUntilReady(signal),
    connect: async () => {
      pipeline ??= await loadWorkerPipeline(settings, watch, flags.schedules);
      return pipeline.createPipelineRuntime(settings, pipeline.ops.runtimeOptions);
    },
    giveUpAfterMs,
    // Reachable to the probe but the producer could not start (a broker still starting): retry.
    onRetry: () => watch.monitor.recheck('kafka'),
  }).catch(async (error: unknown) => {
    await watch.close();
    throw error;
  });
  if (runtime === undefined || pipeline === undefined) {
    // Stopped (signal or give-up) before the services were reachable: nothing to drain.
    await watch.close();
    const gaveUp = watch.gaveUp();
    if (gaveUp !== undefined) throw gaveUp;
    console.error('worker: closed');
    stop.disconnect();
    return;
  }
  const slices = await startWorkerSlices({
    settings,
    flags,
    runtime,
    pipeline,
    monitor: watch.monitor,
    stop,
  });
  await waitForStop(stop.stopping.signal);
  // Drain within --drain-timeout: running slices checkpoint their page, then everything closes.
  const drained = await drainWithin(drainTimeoutMs, [
    () => watch.monitor.close(),
    () => slices.close(),
    () => runtime.close(),
    async () => watch.probeServer?.close(),
  ]);
  const gaveUp = watch.gaveUp();
  if (gaveUp !== undefined) throw gaveUp;
  if (!drained)
    throw new AbortedError(
      `worker: drain did not finish within ${formatDuration(drainTimeoutMs)} (--drain-timeout); exiting`,
    );
  console.error('worker: closed');
  // Nothing is left to do: if a library left a timer or socket open, say what and exit after 5 s.
  exitIfStillRunning(5_000, 'worker');
  // A child of `--processes`: close the IPC channel too, or it keeps this process alive.
  stop.disconnect();
}
