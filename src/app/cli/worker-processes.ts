/**
 * `gamedata worker --processes N|auto`: a supervisor that runs N worker processes (each `gamedata worker`, forked
 * from the same CLI entry) under one command. The children share the queue (BullMQ spreads the slices) and Redis
 * (dedup, counters, the upstream budget); each serves /metrics on its own port (base + index, or 0, or off).
 *
 * Restart policy: a child that exits while the supervisor is not stopping is restarted after a backoff
 * (`restartBackoffMs`, doubling per consecutive crash, at most `maxBackoffMs`); a child that ran `stableAfterMs`
 * has its crash count reset. After `maxRestarts` consecutive crashes of one child the supervisor gives up: it stops
 * the others and exits 1. SIGTERM/SIGINT are forwarded (as SIGTERM: each child drains) and the supervisor waits for
 * every child, killing (SIGKILL) those still running after `stopTimeoutMs`. Exit status: 0 when every child
 * stopped cleanly on request; 1 when the supervisor gave up or a child's last exit was not clean.
 */
import { fork } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { ConfigError } from '../../foundation/errors/index.js';
import { backoffDelay, DEFAULT_RETRY_POLICY } from '../../foundation/retry/index.js';

/** One child process, as the supervisor sees it (a `ChildProcess` fits; tests pass recording fakes). */
export interface WorkerChild {
  readonly pid?: number | undefined;
  kill(signal: NodeJS.Signals): boolean;
  once(event: 'exit', listener: (code: number | null, signal: NodeJS.Signals | null) => void): unknown;
}

export interface WorkerProcessesOptions {
  /** How many worker processes run at once. */
  processes: number;
  /** Restarts of one child in a row (without a stable run between) before the supervisor gives up. @default 5 */
  maxRestarts?: number;
  /** Wait before the first restart of a crashed child; doubles per consecutive crash. @default 1000 */
  restartBackoffMs?: number;
  /** Longest wait before a restart. @default 30000 */
  maxBackoffMs?: number;
  /** A child that ran this long has its consecutive-crash count reset. @default 60000 */
  stableAfterMs?: number;
  /** After a stop is asked for, children still running this long are killed (SIGKILL). @default 120000 */
  stopTimeoutMs?: number;
  /**
   * Each child's V8 old-space limit (`--max-old-space-size`), unless the Node flags or NODE_OPTIONS already set
   * one. Without a limit V8 on a large machine lets the heap grow to ~225 MB RSS per worker at scale medium
   * (garbage, not retained data). @default 256
   */
  maxOldSpaceMb?: number;
  /**
   * Each child's V8 heap growing factor as a percentage over 1 (`--heap-growing-percent`), unless the Node flags
   * set one. Under a limit below 2 GB V8 lets the old space grow only 1.3-1.4x its live size before the next major
   * GC; the worker's live heap is small (~30-40 MB) and its garbage short-lived, so at that factor a quarter of its
   * CPU was major GC. 200 (3x) keeps the limit and takes most of that back: 95-108 -> 63-76 µs of worker CPU per
   * record at scale small (docs/benchmarks/diary.md "The worker's heap"). @default 200
   */
  heapGrowingPercent?: number;
}

export const DEFAULT_WORKER_PROCESSES_OPTIONS = {
  maxRestarts: 5,
  restartBackoffMs: 1000,
  maxBackoffMs: 30_000,
  stableAfterMs: 60_000,
  stopTimeoutMs: 120_000,
  maxOldSpaceMb: 256,
  heapGrowingPercent: 200,
} as const satisfies Omit<Required<WorkerProcessesOptions>, 'processes'>;

export interface WorkerProcessesDeps {
  /** Starts child `index` (0-based). */
  spawn(index: number): WorkerChild;
  /** Calls `listener` on SIGTERM/SIGINT. */
  onSignal(listener: (signal: NodeJS.Signals) => void): void;
  log(line: string): void;
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
}

/** `--processes` value: `auto` = `os.availableParallelism()`, else a positive integer. */
export function resolveProcessCount(value: string, parallelism: number = availableParallelism()): number {
  if (value === 'auto') return Math.max(1, parallelism);
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 1)
    throw new ConfigError(`--processes must be a positive integer or auto, got ${JSON.stringify(value)}`);
  return n;
}

/**
 * The `--metrics-port` value of child `index` given the resolved setting: off stays off, 0 (any free port) stays 0,
 * a port P (default 9464) becomes P + index.
 */
export function childMetricsPort(port: number | false | undefined, index: number): string {
  if (port === false) return 'off';
  if (port === 0) return '0';
  return String((port ?? 9464) + index);
}

/** Runs the children until a signal (or until the supervisor gives up); resolves to the exit status. */
export function superviseWorkerProcesses(
  options: WorkerProcessesOptions,
  deps: WorkerProcessesDeps,
): Promise<number> {
  const o = { ...DEFAULT_WORKER_PROCESSES_OPTIONS, ...options };
  // the one retry policy's backoff, without jitter: restartBackoffMs doubling per crash in a row, at most maxBackoffMs
  const restartPolicy = {
    ...DEFAULT_RETRY_POLICY,
    initialMs: o.restartBackoffMs,
    maxMs: o.maxBackoffMs,
    factor: 2,
    jitter: 0,
  };
  const running = new Map<number, WorkerChild>();
  const crashes = new Array<number>(o.processes).fill(0);
  let stopping = false;
  let failed = false;
  let finish: (code: number) => void = () => undefined;
  const done = new Promise<number>((resolve) => (finish = resolve));

  const maybeFinish = (): void => {
    if (stopping && running.size === 0) finish(failed ? 1 : 0);
  };

  const stopAll = (why: string): void => {
    if (stopping) return;
    stopping = true;
    deps.log(`worker processes: ${why}: stopping ${running.size}`);
    for (const child of running.values()) child.kill('SIGTERM');
    deps.setTimeout(() => {
      for (const child of running.values()) {
        deps.log(`worker processes: pid ${child.pid} still running after ${o.stopTimeoutMs} ms: killed`);
        child.kill('SIGKILL');
      }
    }, o.stopTimeoutMs);
    maybeFinish();
  };

  const start = (index: number): void => {
    const child = deps.spawn(index);
    const startedAt = deps.now();
    running.set(index, child);
    child.once('exit', (code, signal) => {
      running.delete(index);
      const how = signal === null ? `code ${code}` : `signal ${signal}`;
      if (stopping) {
        if (code !== 0) {
          failed = true;
          deps.log(`worker processes: child ${index} (pid ${child.pid}) exited with ${how} while stopping`);
        }
        maybeFinish();
        return;
      }
      if (deps.now() - startedAt >= o.stableAfterMs) crashes[index] = 0;
      const n = (crashes[index] ?? 0) + 1;
      crashes[index] = n;
      if (n > o.maxRestarts) {
        failed = true;
        stopAll(
          `child ${index} (pid ${child.pid}) exited with ${how}, ${n - 1} restarts in a row: giving up`,
        );
        return;
      }
      const wait = backoffDelay(restartPolicy, n);
      deps.log(
        `worker processes: child ${index} (pid ${child.pid}) exited with ${how}: restart ${n}/${o.maxRestarts} in ${wait} ms`,
      );
      deps.setTimeout(() => {
        if (!stopping) start(index);
      }, wait);
    });
  };

  deps.onSignal((signal) => stopAll(signal));
  for (let i = 0; i < o.processes; i++) start(i);
  return done;
}

/**
 * The Node flags of a child: the supervisor's own, plus the heap limit and growing factor unless the flags or
 * NODE_OPTIONS already choose them.
 */
export function childExecArgv(
  execArgv: readonly string[],
  nodeOptions: string | undefined,
  options: Pick<WorkerProcessesOptions, 'maxOldSpaceMb' | 'heapGrowingPercent'>,
): string[] {
  const flags = [...execArgv, nodeOptions ?? ''].join(' ');
  const maxOldSpaceMb = options.maxOldSpaceMb ?? DEFAULT_WORKER_PROCESSES_OPTIONS.maxOldSpaceMb;
  const heapGrowingPercent =
    options.heapGrowingPercent ?? DEFAULT_WORKER_PROCESSES_OPTIONS.heapGrowingPercent;
  return [
    ...execArgv,
    ...(/--max-old-space-size/.test(flags) ? [] : [`--max-old-space-size=${maxOldSpaceMb}`]),
    ...(/--heap-growing-percent/.test(flags) ? [] : [`--heap-growing-percent=${heapGrowingPercent}`]),
  ];
}

/**
 * Forks `processes` copies of this CLI's `worker` command (same entry, same Node flags) with `childArgs(index)`,
 * supervises them and resolves to the exit status (the caller exits with it: a stop timer may still be pending).
 * Each child gets an IPC channel and drains when it closes, so the children do not outlive a killed supervisor.
 */
export function runWorkerProcesses(
  options: WorkerProcessesOptions & { childArgs: (index: number) => string[] },
): Promise<number> {
  const entry = process.argv[1];
  if (entry === undefined)
    throw new ConfigError('worker processes: cannot tell the CLI entry (process.argv[1])');
  const execArgv = childExecArgv(process.execArgv, process.env['NODE_OPTIONS'], options);
  return superviseWorkerProcesses(options, {
    spawn: (index) =>
      fork(entry, options.childArgs(index), {
        execArgv,
        env: process.env,
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      }),
    onSignal: (listener) => {
      process.on('SIGTERM', () => listener('SIGTERM'));
      process.on('SIGINT', () => listener('SIGINT'));
    },
    log: (line) => console.error(line),
    now: () => Date.now(),
    setTimeout: (fn, ms) => setTimeout(fn, ms),
  });
}
