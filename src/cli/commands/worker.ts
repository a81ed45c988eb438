/**
 * `gamedata worker [--concurrency N]`: processes slice jobs (and completes runs) until SIGTERM/SIGINT, then drains:
 * running slices stop after the page in hand is published and checkpointed, the workers close, then Kafka and
 * Redis. All slices of the process share one batching client. `--processes N|auto` runs N such processes under one
 * supervisor (src/cli/worker-processes.ts: signals forwarded, crashed children restarted with backoff, /metrics on
 * port + index).
 * Settings: GAMEDATA_API_URL, GAMEDATA_API_KEY, KAFKA_BROKERS, SCHEMA_REGISTRY_URL, REDIS_URL, GAMEDATA_TOPIC_PREFIX.
 */
import type { Command } from 'commander';
import { ConfigError } from '../../errors.js';
import { connectRedis, createPipelineRuntime, startPipelineWorkers } from '../../jobs/index.js';
import { readPipelineSettings } from '../../config/index.js';
import { createWorkerOperations } from '../../status/index.js';
import { childMetricsPort, resolveProcessCount, runWorkerProcesses } from '../worker-processes.js';

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
    .option('--concurrency <n>', 'slices processed at once by this process (enough page reads to fill 50-call batches on the shared budget)', '32')
    .option('--quiet', 'no per-slice lines')
    .option(
      '--lock-duration <ms>',
      "slice lock lifetime; a killed worker's slices resume after about this long",
      '30000',
    )
    .option('--stalled-interval <ms>', 'how often orphaned slices are looked for', '15000')
    .option(
      '--metrics-port <port>',
      '/metrics port (0 = any free port, off = none; env GAMEDATA_METRICS_PORT)',
    )
    .option('--no-schedules', 'do not fire tail / cron schedule ticks in this process')
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
        metricsPort?: string;
        schedules: boolean;
        processes?: string;
      }) => {
        const lockDuration = Number(flags.lockDuration);
        const stalledInterval = Number(flags.stalledInterval);
        if (!Number.isSafeInteger(lockDuration) || lockDuration < 1000)
          throw new ConfigError(`--lock-duration must be an integer >= 1000 ms, got ${flags.lockDuration}`);
        if (!Number.isSafeInteger(stalledInterval) || stalledInterval < 500)
          throw new ConfigError(
            `--stalled-interval must be an integer >= 500 ms, got ${flags.stalledInterval}`,
          );
        const concurrency = Number(flags.concurrency);
        if (!Number.isSafeInteger(concurrency) || concurrency < 1) {
          throw new ConfigError(
            `--concurrency must be a positive integer, got ${JSON.stringify(flags.concurrency)}`,
          );
        }
        // Every setting through loadConfig (src/config); --metrics-port wins over GAMEDATA_METRICS_PORT.
        const settings = readPipelineSettings(undefined, process.env, { metricsPort: flags.metricsPort });
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
        // Operations (issue 7): /metrics, heartbeat for `status`, and the schedule worker firing tails.
        const ops = createWorkerOperations(settings, {
          ...(settings.metricsPort === undefined ? {} : { metricsPort: settings.metricsPort }),
          ...(settings.metricsHost === undefined ? {} : { metricsHost: settings.metricsHost }),
          schedules: flags.schedules,
        });
        const rt = await createPipelineRuntime(settings, ops.runtimeOptions);
        // BullMQ workers get their own connection (blocking commands); the runtime's serves dedup and counters.
        const bull = connectRedis(settings.redisUrl);
        const workers = startPipelineWorkers(
          {
            connection: bull,
            prefix: settings.queuePrefix,
            concurrency,
            lockDuration,
            stalledInterval,
            onError: (e, where) => console.error(`worker: ${where}: ${e.name}: ${e.message}`),
            onProgress: (ev) => {
              if (flags.quiet === true && ev.kind === 'slice') return;
              const r = ev.result;
              const c = 'counters' in r ? r.counters : r;
              console.error(
                `${ev.kind} ${ev.id}: fetched ${c.fetched}, published ${c.published}, deduplicated ${c.deduplicated}, dead-lettered ${c.deadLettered}`,
              );
            },
          },
          ops.instrument(rt),
        );
        const metricsUrl = await ops.start({ runtime: rt, workers, connection: bull });
        console.error(
          `worker: pid ${process.pid}, concurrency ${concurrency}, queue prefix ${settings.queuePrefix}, metrics ${metricsUrl ?? 'off'}`,
        );
        await new Promise<void>((resolve) => {
          const stop = (signal: string): void => {
            console.error(`worker: ${signal}: draining`);
            resolve();
          };
          process.once('SIGTERM', () => stop('SIGTERM'));
          process.once('SIGINT', () => stop('SIGINT'));
          // A child of `--processes`: drain when the supervisor's IPC channel closes (it was killed).
          if (process.connected) process.once('disconnect', () => stop('supervisor gone'));
        });
        await ops.close();
        await workers.close();
        await bull.quit();
        await rt.close();
        console.error('worker: closed');
        // A child of `--processes`: close the IPC channel too, or it keeps this process alive.
        if (process.connected) process.disconnect();
      },
    );
}
