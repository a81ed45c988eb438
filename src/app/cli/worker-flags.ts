/**
 * The `worker` command's flags, parsed (pure): numbers and durations checked once, each bad value a ConfigError
 * naming the flag, the rule and the value. `--lock-duration`, `--stalled-interval` and `--liveness-timeout` take the
 * project's one duration syntax (`30s`, `500ms`, `2m`; config/duration.ts), and a bare number is milliseconds as
 * before (`30000`).
 */
import { ConfigError } from '../../foundation/errors/index.js';
import { parseDuration } from '../../foundation/config/index.js';

/** The flags as commander hands them over. */
export interface WorkerFlagValues {
  concurrency: string;
  maxConcurrency?: string;
  quiet?: boolean;
  lockDuration: string;
  stalledInterval: string;
  livenessTimeout: string;
  metricsPort?: string;
  schedules: boolean;
  processes?: string;
  giveUpAfter?: string;
  drainTimeout?: string;
}

/** The flags, checked. */
export interface WorkerFlags {
  concurrency: number;
  /** Undefined: the worker's default (`max(concurrency, DEFAULT_MAX_CONCURRENCY)`). */
  maxConcurrency: number | undefined;
  quiet: boolean;
  lockDurationMs: number;
  stalledIntervalMs: number;
  /** 0 = off. */
  livenessTimeoutMs: number;
  metricsPort: string | undefined;
  schedules: boolean;
  processes: string | undefined;
  giveUpAfterMs: number | undefined;
  drainTimeoutMs: number | undefined;
}

/** A positive duration flag (`10s`, `5m`, `1d`, `500ms`), or undefined when not given. */
export function durationFlag(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const ms = parseDuration(name, value);
  if (ms <= 0)
    throw new ConfigError(
      `${name} must be a positive duration such as 10s, 5m or 1h, got ${JSON.stringify(value)}`,
    );
  return ms;
}

/** A duration flag of at least `min` ms (`0` allowed too when `zeroIsOff`). */
function boundedDuration(name: string, value: string, min: number, zeroIsOff = false): number {
  const ms = parseDuration(name, value);
  if (ms < min && !(zeroIsOff && ms === 0))
    throw new ConfigError(
      `${name} must be ${zeroIsOff ? '0 (off) or ' : ''}a duration >= ${min} ms (e.g. ${min}ms or ${min / 1000}s; a bare number is ms), got ${JSON.stringify(value)}`,
    );
  return ms;
}

/**
 * @throws ConfigError naming the flag, the rule and the value received
 * @example parseWorkerFlags({ concurrency: '32', lockDuration: '30s', stalledInterval: '15000', livenessTimeout: '10s', schedules: true })
 */
export function parseWorkerFlags(flags: WorkerFlagValues): WorkerFlags {
  const lockDurationMs = boundedDuration('--lock-duration', flags.lockDuration, 1000);
  const stalledIntervalMs = boundedDuration('--stalled-interval', flags.stalledInterval, 500);
  const livenessTimeoutMs = boundedDuration('--liveness-timeout', flags.livenessTimeout, 500, true);
  const concurrency = Number(flags.concurrency);
  if (!Number.isSafeInteger(concurrency) || concurrency < 1)
    throw new ConfigError(
      `--concurrency must be a positive integer, got ${JSON.stringify(flags.concurrency)}`,
    );
  const maxConcurrency = flags.maxConcurrency === undefined ? undefined : Number(flags.maxConcurrency);
  if (maxConcurrency !== undefined && (!Number.isSafeInteger(maxConcurrency) || maxConcurrency < concurrency))
    throw new ConfigError(
      `--max-concurrency must be an integer >= --concurrency (${concurrency}), got ${JSON.stringify(flags.maxConcurrency)}`,
    );
  return {
    concurrency,
    maxConcurrency,
    quiet: flags.quiet === true,
    lockDurationMs,
    stalledIntervalMs,
    livenessTimeoutMs,
    metricsPort: flags.metricsPort,
    schedules: flags.schedules,
    processes: flags.processes,
    giveUpAfterMs: durationFlag('--give-up-after', flags.giveUpAfter),
    drainTimeoutMs: durationFlag('--drain-timeout', flags.drainTimeout),
  };
}

/** This command's argv without `--processes` and `--metrics-port` (the supervisor gives each child its own). */
export function childArgv(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if (a === '--processes' || a === '--metrics-port') i++;
    else if (!a.startsWith('--processes=') && !a.startsWith('--metrics-port=')) out.push(a);
  }
  return out;
}
