/**
 * The BullMQ side of the pipeline: a slice worker (children) and a run worker (parents), sharing one set of
 * dependencies, so every slice of the process rides the same batching client and Kafka producer.
 */
import type { RunRegistry } from '../dedup/index.js';
import { setMaxListeners } from 'node:events';
import { DelayedError, Queue, UnrecoverableError, Worker, type ConnectionOptions, type Job } from 'bullmq';
import type { SharedBudget } from '../../upstream/budget/index.js';
import { keyHasSpare, runWithPriority, type CallPriority } from '../../upstream/budget/index.js';
import {
  AbortedError,
  ConfigError,
  GamedataError,
  SliceFencedError,
  SliceInterruptedError,
} from '../../foundation/errors/index.js';
import {
  maskError,
  maskWith,
  ownSecrets,
  type Secrets,
  isCredentialRefusal,
} from '../../foundation/config/index.js';
import type {
  RunCounterValues,
  RunJobData,
  RunResult,
  SliceJobData,
  SliceResult,
} from '../contract/job-types.js';
import {
  DEFAULT_PROCESS_SLICE_OPTIONS,
  isRetriableSliceError,
  type ProcessSliceDeps,
  type ProcessSliceOptions,
} from '../slice/slice-contract.js';
import { processSliceAtLeastOnce } from '../slice/process-slice-at-least-once.js';
import { startIdleSlots } from './idle-slots.js';
import { processSliceExactlyOnce } from '../slice/process-slice-exactly-once.js';
import { DEFAULT_QUEUE_PREFIX, JOB_NAMES, QUEUE_NAMES } from '../contract/queue-names.js';
import type { RunCounters } from './run-counters.js';
import { childSliceJobs } from './backfill-flow.js';
import type { RangeGaps } from './range-gaps.js';
import { settleRunGaps } from './run-gaps.js';
import { planningHoldFailure } from './planning-hold.js';
import { discoversUsers, withUserDiscovery, type UserDirectory } from '../slice/user-discovery.js';
import { startSlotSizing, type ConcurrencyChange } from './slot-sizing.js';
import { createSliceRuns } from './slice-runs.js';
import { installBullmqHooks, requireBullmqRelease } from './bullmq-hooks.js';
import { startWorkerLiveness, type LivenessRedis } from './worker-liveness.js';
import { startCpuBusy } from './cpu-busy.js';
import { startLockSweeper } from './lock-sweeper.js';
import type { LockSweepReport } from '../dedup/index.js';

export interface PipelineWorkerOptions {
  /** Redis connection for BullMQ (ioredis options or instance; needs `maxRetriesPerRequest: null`). */
  connection: ConnectionOptions;
  /** BullMQ key prefix. @default 'gamedata-bull' */
  prefix?: string;
  /**
   * Slices processed at once by this process. Each slice has one page read waiting at a time, so this bounds the
   * calls a process offers the shared budget: 4 processes x 32 keep more than 50 waiting, so the key's fetcher fills
   * its batches (measured in bench/budget-acceptance.ts: 8 -> 2.06x ceil(P/50), 32 -> 1.2-1.6x). While the key's
   * budget binds and its batches leave short, the worker runs more (up to `maxConcurrency`), then comes back to
   * this. @default 32
   */
  concurrency?: number;
  /**
   * Most slices at once while the key's budget binds and its fetcher's batches leave short of 50 calls
   * (`decideConcurrency`; needs `deps.budget`). A slice waits at the fetcher only part of its time (claims, encoding,
   * commits), so one process alone keeping a full batch waiting needs more than 50 slots. `concurrency` (or less)
   * turns the growth off. Also while the key has requests to spare and slices wait for a slot (issue 32).
   * @default max(concurrency, 512)
   */
  maxConcurrency?: number;
  /** How often the worker reads the fetcher's demand to size its slots, ms. @default 500 */
  demandIntervalMs?: number;
  /**
   * A change of the slots shows in the batches after about this long (new slices start, their first calls reach
   * the fetcher); a short batch sent before that does not grow them again, ms. @default 2000
   */
  settleMs?: number;
  /**
   * How long a slice's lock lives without renewal. Locks renew every half of this while the process lives, so
   * long slices are fine; a killed worker's slice is picked up again after about this long. @default 30000
   */
  lockDuration?: number;
  /** How often stalled (orphaned) slices are looked for. @default 15000 */
  stalledInterval?: number;
  /**
   * A slice whose worker dies more often than this fails. Each crash counts once, and a crash costs nothing but a
   * resume from the checkpoint, so it is high. @default 20
   */
  maxStalledCount?: number;
  /**
   * A worker that stops beating this long (killed, or stopped) loses its slices to the others at once, instead of
   * after their locks expire (`worker-liveness.ts`). 0 turns it off. @default 10000
   */
  livenessTimeoutMs?: number;
  /** Called when this worker's sweep moved slices of dead workers back to wait. */
  onTakeover?: (jobIds: readonly string[], deadWorkers: readonly string[]) => void;
  /** Options of each slice's processing (page size, splitting). */
  slice?: Omit<ProcessSliceOptions, 'signal'>;
  /** Process runs (parents) here too. @default true */
  runs?: boolean;
  /** Called for worker errors (the `error` event) and failed jobs. */
  onError?: (error: Error, context: string) => void;
  /**
   * Called once when a slice fails for good (its attempts spent, or an error retrying cannot help): the run fails
   * with it, so the worker says it whatever the state of the services.
   */
  onSliceFailed?: (sliceId: string, error: Error, attempts: number) => void;
  /**
   * Asked when a slice throws: whether a service the worker needs (Kafka, the registry, Redis) is down now. A slice
   * that failed while one is down is handed back without spending an attempt ({@link OUTAGE_HAND_BACK_MS}): the
   * outage failed, not the slice, and whatever it threw then (a producer's state broken by the broker going away) says
   * nothing of its next attempt. The worker's service monitor answers it (`cli/worker-slices.ts`).
   */
  servicesDown?: () => Promise<boolean>;
  /**
   * Masked in every error before BullMQ stores it (`failedReason`, `stacktrace`) and in a run's stored reason.
   * @default the secrets of this process's settings (`ownSecrets()`)
   */
  secrets?: Secrets;
  /** Called after each slice and run completes. */
  onProgress?: (event: { kind: 'slice' | 'run'; id: string; result: SliceResult | RunResult }) => void;
  /** Called when the slices run at once change (the key's budget began or stopped binding with short batches). */
  onConcurrency?: (change: ConcurrencyChange) => void;
  /**
   * Fenced hand-backs a slice may take (issue 48): a fenced slice is handed back without spending an attempt, so one
   * fenced on every try looped for ever; past this many it fails for good with the reason. @default 20
   */
  maxFencedHandBacks?: number;
  /** Told of each fenced hand-back, with the slice's count so far (metrics: `gamedata_slice_fenced_total`). */
  onFencedHandBack?: (sliceId: string, count: number) => void;
  /**
   * Exactly-once: how often the worker sweeps orphaned locks (expired more than `lockSweepGraceMs` ago; issue 47,
   * `queue/lock-sweeper.ts`). 0: never. @default 600000 (10 min)
   */
  lockSweepMs?: number;
  /** See `LockSweepOptions.graceMs`. @default 600000 (10 min) */
  lockSweepGraceMs?: number;
  /** Told of each lock sweep that settled anything (logs). */
  onLocksSwept?: (report: LockSweepReport) => void;
}

export const DEFAULT_PIPELINE_WORKER_OPTIONS = {
  prefix: DEFAULT_QUEUE_PREFIX,
  concurrency: 32,
  lockDuration: 30_000,
  stalledInterval: 15_000,
  maxStalledCount: 20,
  livenessTimeoutMs: 10_000,
  runs: true,
  demandIntervalMs: 500,
  settleMs: 2000,
  maxFencedHandBacks: 20,
  lockSweepMs: 600_000,
  lockSweepGraceMs: 600_000,
} as const;

/**
 * Slots a worker may grow to (while the key binds and batches leave short, or while slices wait and the key has
 * requests to spare), when `maxConcurrency` is not set: `max(concurrency, this)`. By Little's law the key's 500
 * requests a minute at ~1.2 s a request and 50 calls each need ~500 chains in flight across the deployment (issue 32).
 */
export const DEFAULT_MAX_CONCURRENCY = 512;

/** How long a slice refused for this process's credentials waits before any worker takes it again, ms. */
export const CREDENTIAL_REFUSAL_BACKOFF_MS = 5_000;

/** How long after now a slice that failed during an outage runs again (a paused worker takes it once resumed). */
export const OUTAGE_HAND_BACK_MS = 2_000;

export interface PipelineWorkerDeps extends ProcessSliceDeps {
  counters: ProcessSliceDeps['counters'] &
    Pick<RunCounters, 'get' | 'setState'> &
    Partial<Pick<RunCounters, 'retention'>>;
  /**
   * The runs' user sets: with it, per-user transaction slices of full-history runs spawn walks of the
   * counterparties their pages reveal (users the listings hid). Without it, no discovery.
   */
  users?: UserDirectory;
  /**
   * The key's shared budget: with it the worker runs more slices at once while the budget binds and the fetcher's
   * batches leave short (`maxConcurrency`). Without it, always `concurrency`.
   */
  budget?: Pick<SharedBudget, 'demand' | 'waitingCalls'> | undefined;
  /**
   * Where a tail's run records the ranges its slices could not read (issue 48, `range-gaps.ts`), and where a run that
   * read a gap's range whole closes it. Without it, nothing is recorded (a tail's failed slice is then only counted).
   */
  gaps?: RangeGaps | undefined;
  /**
   * The pages' drift, written in batches (`createBufferedDriftStore`): a slice's job completes only once what its
   * pages recorded is written, so a finished run's drift is readable. Without it, nothing is awaited.
   */
  drift?: { flushed(): Promise<void> } | undefined;
  /** The runs of each resource (`dedup/lone-runs.ts`): a run that completes is retired there. */
  runs?: Pick<RunRegistry, 'retire'> | undefined;
}

export interface PipelineWorkers {
  slices: Worker<SliceJobData, SliceResult>;
  runs: Worker<RunJobData, RunResult> | undefined;
  /** Stops taking slices, lets running slices checkpoint their page and yield, then closes the workers. */
  close(): Promise<void>;
}

/** The options with their defaults, checked once. @throws ConfigError naming the option. */
function resolvePipelineWorkerOptions(options: PipelineWorkerOptions) {
  const o = { ...DEFAULT_PIPELINE_WORKER_OPTIONS, ...options };
  if (!Number.isSafeInteger(o.concurrency) || o.concurrency < 1) {
    throw new ConfigError(`option concurrency must be a positive integer, got ${String(o.concurrency)}`);
  }
  const maxConcurrency = o.maxConcurrency ?? Math.max(o.concurrency, DEFAULT_MAX_CONCURRENCY);
  if (!Number.isSafeInteger(maxConcurrency) || maxConcurrency < 1) {
    throw new ConfigError(
      `option maxConcurrency must be a positive integer, got ${String(o.maxConcurrency)}`,
    );
  }
  if (!Number.isSafeInteger(o.maxFencedHandBacks) || o.maxFencedHandBacks < 0)
    throw new ConfigError(
      `option maxFencedHandBacks must be a non-negative integer, got ${String(o.maxFencedHandBacks)}`,
    );
  if (!Number.isSafeInteger(o.livenessTimeoutMs) || o.livenessTimeoutMs < 0)
    throw new ConfigError(
      `option livenessTimeoutMs must be a non-negative integer, got ${String(o.livenessTimeoutMs)}`,
    );
  return { ...o, maxConcurrency };
}

type ResolvedPipelineWorkerOptions = ReturnType<typeof resolvePipelineWorkerOptions>;

/** A processor whose errors are masked before BullMQ stores them (`failedReason`, `stacktrace`). */
const maskingWith =
  (secrets: Secrets) =>
  <A extends unknown[], R>(fn: (...args: A) => Promise<R>) =>
  async (...args: A): Promise<R> => {
    try {
      return await fn(...args);
    } catch (error) {
      throw maskError(error, secrets);
    }
  };

/**
 * The runs' data, read by per-user slices to know whether (and over which range) to discover users, and by every
 * slice for its run's priority. Cached (up to 1000 runs); the run queue opens at the first read.
 */
function createRunReader(
  o: { connection: ConnectionOptions; prefix: string },
  onError: (error: Error, context: string) => void,
): { read(runId: string): Promise<RunJobData | null>; close(): Promise<void> } {
  let runQueue: Queue<RunJobData, RunResult> | undefined;
  const runData = new Map<string, RunJobData | null>();
  return {
    async read(runId) {
      if (runData.has(runId)) return runData.get(runId) ?? null;
      if (runQueue === undefined) {
        runQueue = new Queue<RunJobData, RunResult>(QUEUE_NAMES.runs, {
          connection: o.connection,
          prefix: o.prefix,
        });
        // Without a listener BullMQ prints each connection error's stack (a worker's log during a Redis restart).
        runQueue.on('error', (e) => onError(e, 'run-queue'));
      }
      const run = (await runQueue.getJob(runId))?.data ?? null;
      if (runData.size >= 1000) runData.clear();
      runData.set(runId, run);
      return run;
    },
    async close() {
      await runQueue?.close();
    },
  };
}

/** What a slice job's processing needs from the worker around it. */
interface SliceJobContext {
  o: ResolvedPipelineWorkerOptions;
  deps: PipelineWorkerDeps;
  spawner: Queue<SliceJobData>;
  readRun: (runId: string) => Promise<RunJobData | null>;
  secrets: Secrets;
  onError: (error: Error, where: string) => void;
  /** Each running slice's share of the worker's idle slots (the run's end; src/pipeline/queue/idle-slots.ts). */
  spareSlots?: () => number;
  /**
   * Whether the key has requests to spare and the slices waiting would find a slot in this worker (`keyHasSpare` over
   * slot sizing's last demand read).
   */
  keySpare?: () => boolean;
}

/** The slice contract's handle on a BullMQ job: its data, reload, checkpoint and spawn of children. */
function sliceHandleOf(
  c: SliceJobContext,
  job: Job<SliceJobData, SliceResult>,
  priority: CallPriority | undefined,
): {
  data: SliceJobData;
  reload: () => Promise<SliceJobData>;
  checkpoint: (d: SliceJobData) => Promise<void>;
  spawn: (children: SliceJobData[]) => Promise<void>;
} {
  return {
    data: job.data,
    // Exactly-once: the job data as stored now, re-read after fencing the slice's earlier owners.
    reload: async () => (await c.spawner.getJob(job.id ?? ''))?.data ?? job.data,
    checkpoint: async (d: SliceJobData) => {
      await job.updateData(d);
    },
    spawn: async (children: SliceJobData[]) => {
      const parent = job.parent;
      if (parent?.id === undefined)
        throw new GamedataError(`slice ${job.id ?? '?'} has no run to add children to`);
      await c.spawner.addBulk(
        childSliceJobs(children, {
          parent: { id: parent.id, queue: parent.queueKey },
          ...(priority === undefined ? {} : { priority }),
          ...(c.deps.counters.retention === undefined ? {} : { retention: c.deps.counters.retention }),
        }),
      );
    },
  };
}

/** The slice's deps: with user discovery for a per-user transactions slice of a run that discovers users. */
async function sliceDepsOf(
  c: SliceJobContext,
  job: Job<SliceJobData, SliceResult>,
  spawn: (children: SliceJobData[]) => Promise<void>,
): Promise<ProcessSliceDeps> {
  const { deps } = c;
  if (
    deps.users !== undefined &&
    job.data.resource === 'transactions' &&
    job.data.filters['userId'] !== undefined &&
    job.parent?.id !== undefined
  ) {
    const run = await c.readRun(job.parent.id);
    if (run !== null && discoversUsers(run))
      return { ...deps, source: withUserDiscovery(deps.source, run, { users: deps.users, spawn }) };
  }
  return deps;
}

/**
 * How long after now a slice that threw runs again when it is handed back without spending an attempt; undefined
 * when it failed instead.
 */
function handBackDelayMs(error: unknown, signal: AbortSignal): number | undefined {
  // Stopped (shutdown, or the lock lost): hand the slice back (its checkpoint is saved) without spending an
  // attempt. A stop in the middle of a page read aborts the read: the page is read again by the next run.
  if (
    error instanceof SliceInterruptedError ||
    (signal.aborted && GamedataError.from(error) instanceof AbortedError)
  )
    return 0;
  // Another owner took the slice (or fenced it to resolve a stale dedup lock). While we still hold its
  // lock, hand it back without spending an attempt; a zombie's lock is gone and BullMQ ignores it.
  if (error instanceof SliceFencedError) return 1_000;
  // This process's credentials were refused (a password changed under it, a token expired): the worker's fault, not
  // the slice's. Handed back without spending an attempt, for a worker whose credentials work; the worker's probe of
  // that service, which authenticates the same way, ends this worker with one line.
  if (isCredentialRefusal(GamedataError.from(error))) return CREDENTIAL_REFUSAL_BACKOFF_MS;
  return undefined;
}

/** {@link OUTAGE_HAND_BACK_MS} when the worker says a service is down now (see `servicesDown`), else undefined. */
async function outageHandBackMs(c: SliceJobContext): Promise<number | undefined> {
  if (c.o.servicesDown === undefined) return undefined;
  const down = await c.o.servicesDown().catch(() => false);
  return down ? OUTAGE_HAND_BACK_MS : undefined;
}

/** The two commands the count needs, on the queue's own connection. */
interface FencedCountRedis {
  incr(key: string): Promise<number>;
  pexpire(key: string, ms: number): Promise<number>;
}

/** How long a slice's fenced hand-back count lives after its last hand-back. */
const FENCED_COUNT_TTL_MS = 24 * 3_600_000;

/**
 * Counts a fenced hand-back of the slice (issue 48) and tells `onFencedHandBack`. The count is a Redis key of its own
 * (`<prefix>:fenced:<job id>`, expiring a day after the last one), never the job's data: a fenced process is often a
 * zombie whose copy of the data is stale, and writing it back would undo the new owner's checkpoint.
 * @throws UnrecoverableError with the reason once the slice was fenced more than `maxFencedHandBacks` times.
 */
async function countFencedHandBack(
  c: SliceJobContext,
  job: Job<SliceJobData, SliceResult>,
  error: SliceFencedError,
): Promise<void> {
  const key = `${c.o.prefix}:fenced:${job.id ?? '?'}`;
  let count: number;
  try {
    const redis = (await c.spawner.backend.client) as unknown as FencedCountRedis;
    count = Number(await redis.incr(key));
    await redis.pexpire(key, FENCED_COUNT_TTL_MS);
  } catch {
    return; // Redis away: the outage hand-back says it; the count resumes with Redis
  }
  c.o.onFencedHandBack?.(job.id ?? '?', count);
  if (count > c.o.maxFencedHandBacks) {
    const e = maskError(error, c.secrets);
    throw new UnrecoverableError(
      `slice ${job.id ?? '?'} was fenced ${count} times (more than maxFencedHandBacks ${c.o.maxFencedHandBacks}): another owner took it each time; last: ${e.message}`,
    );
  }
}

/**
 * Ends a slice that threw: hands it back (DelayedError) when {@link handBackDelayMs} says so, else rethrows it
 * masked, as UnrecoverableError when retrying cannot help.
 */
async function failSlice(
  c: SliceJobContext,
  job: Job<SliceJobData, SliceResult>,
  token: string | undefined,
  signal: AbortSignal,
  error: unknown,
): Promise<never> {
  const delayMs = handBackDelayMs(error, signal) ?? (await outageHandBackMs(c));
  if (delayMs !== undefined && error instanceof SliceFencedError) await countFencedHandBack(c, job, error);
  if (delayMs !== undefined) {
    if (isCredentialRefusal(GamedataError.from(error)))
      c.onError(maskError(GamedataError.from(error), c.secrets), 'credentials');
    await job.moveToDelayed(Date.now() + delayMs, token).catch(() => undefined);
    throw new DelayedError();
  }
  // BullMQ stores the message and the stack in Redis: masked first (a URL with credentials, an upstream's text)
  const e = maskError(GamedataError.from(error), c.secrets);
  if (!isRetriableSliceError(error)) {
    throw new UnrecoverableError(`slice ${job.id ?? '?'} cannot be read: ${e.name}: ${e.message}`);
  }
  throw e;
}

/** Runs one slice to its end (or its hand-back), stopping when `signal` aborts. */
async function runSlice(
  c: SliceJobContext,
  job: Job<SliceJobData, SliceResult>,
  token: string | undefined,
  signal: AbortSignal,
): Promise<SliceResult> {
  // The slice's priority on the shared budget: its own, else its run's (runs record who started them).
  let priority: CallPriority | undefined = job.data.priority;
  if (priority === undefined && job.parent?.id !== undefined)
    priority = (await c.readRun(job.parent.id).catch(() => null))?.priority;
  const handle = sliceHandleOf(c, job, priority);
  try {
    const sliceDeps = await sliceDepsOf(c, job, handle.spawn);
    // The deployment's delivery mode: the runtime gives `eos` under exactly-once, nothing under at-least-once.
    const sliceOptions = {
      ...DEFAULT_PROCESS_SLICE_OPTIONS,
      ...(c.spareSlots === undefined ? {} : { spareSlots: c.spareSlots }),
      ...(c.keySpare === undefined ? {} : { keySpare: c.keySpare }),
      ...c.o.slice,
      signal,
    };
    const eos = sliceDeps.eos;
    const result = await runWithPriority(priority ?? 'backfill', () =>
      eos === undefined
        ? processSliceAtLeastOnce(handle, sliceDeps, sliceOptions)
        : processSliceExactlyOnce(handle, sliceDeps, eos, { ...sliceOptions, now: Date.now }),
    );
    await c.deps.drift?.flushed();
    c.o.onProgress?.({ kind: 'slice', id: job.id ?? '', result });
    return result;
  } catch (error) {
    return failSlice(c, job, token, signal, error);
  }
}

/** The sweep that moves the slices of workers that stopped beating back to wait (undefined when turned off). */
function startSliceLiveness(
  o: ResolvedPipelineWorkerOptions,
  slices: Worker<SliceJobData, SliceResult>,
  spawner: Queue<SliceJobData>,
  onError: (error: Error, context: string) => void,
  fenceTaken: ((jobIds: readonly string[]) => Promise<unknown>) | undefined,
): ReturnType<typeof startWorkerLiveness> | undefined {
  if (o.livenessTimeoutMs === 0) return undefined;
  return startWorkerLiveness(
    slices,
    // BullMQ's Redis backend's client is ioredis (its interface type does not list eval).
    {
      eval: async (...args) => ((await spawner.backend.client) as unknown as LivenessRedis).eval(...args),
    },
    async (id) => (await spawner.getJob(id)) ?? undefined,
    {
      prefix: o.prefix,
      queue: QUEUE_NAMES.slices,
      timeoutMs: o.livenessTimeoutMs,
      maxStalledCount: o.maxStalledCount,
      // A dead worker's locks last at most lockDuration; its entry is needed no longer than that.
      forgetAfterMs: Math.max(600_000, 2 * o.lockDuration),
      ...(o.onTakeover === undefined ? {} : { onTakeover: o.onTakeover }),
      // Exactly-once: a dead worker's open transaction holds back every recovery read on its checkpoint partition
      // until it is aborted. Fenced here, it is aborted at the takeover; else only when a slice it owned gets a slot,
      // or after its timeout (the crash test's ~30 s with every slot waiting, docs/guarantees.md).
      ...(fenceTaken === undefined ? {} : { beforeTakeover: fenceTaken }),
      onError: (e) => onError(e, 'worker-liveness'),
    },
  );
}

/**
 * The slot sizing: the slice worker grows to `maxConcurrency` slots while the key has requests to spare or its
 * batches leave short (undefined without a shared budget or room to grow).
 */
function startSliceSizing(
  o: ResolvedPipelineWorkerOptions,
  deps: PipelineWorkerDeps,
  slices: Worker<SliceJobData, SliceResult>,
  spawner: Queue<SliceJobData>,
  sliceRuns: { size(): number },
  onError: (error: Error, context: string) => void,
): ReturnType<typeof startSlotSizing> | undefined {
  return o.maxConcurrency > o.concurrency && deps.budget !== undefined
    ? startSlotSizing(slices, deps.budget, {
        base: o.concurrency,
        max: o.maxConcurrency,
        intervalMs: o.demandIntervalMs,
        settleMs: o.settleMs,
        onChange: (change) => o.onConcurrency?.(change),
        onError: (e) => onError(e, 'slot-sizing'),
        load: () => ({ running: sliceRuns.size(), waitingCalls: deps.budget?.waitingCalls() ?? 0 }),
        busy: startCpuBusy().read,
        busySinceChange: startCpuBusy(),
        queued: async () => {
          const c = await spawner.getJobCounts('waiting', 'prioritized');
          return (c['waiting'] ?? 0) + (c['prioritized'] ?? 0);
        },
      })
    : undefined;
}

/** Completes a run once every slice completed (BullMQ flow): its counters and users, stored and returned. */
async function completeRun(
  o: ResolvedPipelineWorkerOptions,
  deps: PipelineWorkerDeps,
  job: Job<RunJobData, RunResult>,
  slicesQueue: Queue<SliceJobData>,
): Promise<RunResult> {
  // A tail's run completes with its failed slices set aside: their ranges become gaps (run-gaps.ts).
  const gaps =
    deps.gaps === undefined
      ? undefined
      : await settleRunGaps(job, { gaps: deps.gaps, slices: slicesQueue, prefix: o.prefix, now: Date.now });
  const counters: RunCounterValues = await deps.counters.get(job.data.runId);
  // Its slices are done: the run no longer keeps others from claiming by mark.
  await deps.runs?.retire(job.data);
  const users =
    deps.users !== undefined && discoversUsers(job.data) ? await deps.users.stats(job.data.runId) : undefined;
  const result: RunResult = {
    runId: job.data.runId,
    counters: {
      fetched: counters.fetched,
      published: counters.published,
      deduplicated: counters.deduplicated,
      deadLettered: counters.deadLettered,
    },
    completedAt: Date.now(),
    ...(users === undefined ? {} : { users }),
    ...(gaps === undefined ? {} : { gaps }),
  };
  await deps.counters.setState(job.data.runId, 'completed', {
    completedAt: result.completedAt,
    ...users,
    ...(gaps === undefined ? {} : { gaps }),
  });
  o.onProgress?.({ kind: 'run', id: job.data.runId, result });
  return result;
}

/**
 * The run worker (parents): runs only once every slice completed (a tail's: or failed for good, left as a gap); a
 * failed slice of any other run fails the run instead.
 */
function startRunWorker(
  o: ResolvedPipelineWorkerOptions,
  deps: PipelineWorkerDeps,
  secrets: Secrets,
  onError: (error: Error, context: string) => void,
  slicesQueue: Queue<SliceJobData>,
): Worker<RunJobData, RunResult> {
  const runs = new Worker<RunJobData, RunResult>(
    QUEUE_NAMES.runs,
    maskingWith(secrets)(async (job: Job<RunJobData, RunResult>) => completeRun(o, deps, job, slicesQueue)),
    { connection: o.connection, prefix: o.prefix, concurrency: 1 },
  );
  runs.on('error', (e) => onError(e, 'run-worker'));
  runs.on('failed', (job, e) => {
    onError(e, `run ${job?.id ?? '?'}`);
    if (job)
      void deps.counters
        .setState(job.data.runId, 'failed', { reason: maskWith(e.message, secrets) })
        .catch(() => undefined);
  });
  return runs;
}

/**
 * Starts the slice worker (and the run worker). Close it before closing Redis and Kafka.
 * @throws LibraryPatchError before anything connects when the installed bullmq is not the release the worker's hooks
 * were written for (`bullmq-hooks.ts`)
 */
export function startPipelineWorkers(
  options: PipelineWorkerOptions,
  deps: PipelineWorkerDeps,
): PipelineWorkers {
  requireBullmqRelease();
  const o = resolvePipelineWorkerOptions(options);
  const onError = o.onError ?? (() => undefined);
  const secrets = o.secrets ?? ownSecrets();
  const stop = new AbortController();
  // Every running slice listens on this one signal (through its own, which also stops when its lock is lost).
  setMaxListeners(0, stop.signal);
  const sliceRuns = createSliceRuns(stop.signal);
  const spawner = new Queue<SliceJobData>(QUEUE_NAMES.slices, { connection: o.connection, prefix: o.prefix });
  spawner.on('error', (e) => onError(e, 'spawn-queue'));
  const runReader = createRunReader(o, onError);
  const context: SliceJobContext = {
    o,
    deps,
    spawner,
    readRun: (runId) => runReader.read(runId),
    secrets,
    onError,
  };

  const slices = new Worker<SliceJobData, SliceResult>(
    QUEUE_NAMES.slices,
    maskingWith(secrets)(async (job: Job<SliceJobData, SliceResult>, token?: string) => {
      // A run's planning hold comes to a worker only when its planner failed or went silent: the run fails.
      if (job.name === JOB_NAMES.hold) throw new UnrecoverableError(planningHoldFailure(job.data));
      const sliceRun = sliceRuns.begin(job.id ?? '');
      try {
        return await runSlice(context, job, token, sliceRun.signal);
      } catch (error) {
        // The lock is lost: the slice is another worker's now (or the stalled check gives it back). Touch nothing.
        if (sliceRun.lockLost()) throw new DelayedError();
        throw error;
      } finally {
        sliceRun.end();
      }
    }),
    {
      connection: o.connection,
      prefix: o.prefix,
      concurrency: o.concurrency,
      lockDuration: o.lockDuration,
      stalledInterval: o.stalledInterval,
      maxStalledCount: o.maxStalledCount,
    },
  );
  const idle = startIdleSlots(() => ({ concurrency: slices.concurrency, running: sliceRuns.size() }));
  context.spareSlots = () => idle.claim();
  slices.on('lockRenewalFailed', (ids) => sliceRuns.lost(ids));
  installBullmqHooks(slices);
  slices.on('error', (e) => onError(e, 'slice-worker'));
  const fenceTaken = deps.eos?.publisher.fenceTaken?.bind(deps.eos.publisher);
  const liveness = startSliceLiveness(o, slices, spawner, onError, fenceTaken);
  const sweeper =
    deps.eos !== undefined && o.lockSweepMs > 0
      ? startLockSweeper(deps.eos, {
          intervalMs: o.lockSweepMs,
          graceMs: o.lockSweepGraceMs,
          onError: (e) => onError(e instanceof Error ? e : GamedataError.from(e), 'lock-sweep'),
          onSwept: o.onLocksSwept,
        })
      : undefined;
  const sizing = startSliceSizing(o, deps, slices, spawner, sliceRuns, onError);
  if (sizing !== undefined)
    context.keySpare = () => keyHasSpare(sizing.lastDemand(), o.maxConcurrency - sliceRuns.size());
  slices.on('failed', (job, e) => {
    if (e instanceof DelayedError || e.name === 'DelayedError') return;
    onError(e, `slice ${job?.id ?? '?'}`);
    if (
      job !== undefined &&
      (e.name === 'UnrecoverableError' || job.attemptsMade >= (job.opts.attempts ?? 1))
    )
      o.onSliceFailed?.(job.id ?? '?', e, job.attemptsMade);
  });
  const runs = o.runs ? startRunWorker(o, deps, secrets, onError, spawner) : undefined;

  let closing: Promise<void> | undefined;
  return {
    slices,
    runs,
    close() {
      closing ??= (async () => {
        stop.abort();
        idle.stop();
        await sweeper?.stop();
        await sizing?.stop();
        // Beating until the slices are closed: a draining worker's slices are still its own.
        await slices.close();
        await liveness?.stop();
        await runs?.close();
        await spawner.close();
        await runReader.close();
      })();
      return closing;
    },
  };
}

export { DEFAULT_PROCESS_SLICE_OPTIONS };
export type { ConcurrencyChange };
