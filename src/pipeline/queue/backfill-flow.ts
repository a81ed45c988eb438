/** Enqueues a planned run as one BullMQ flow: the run (parent) with its slices (children). */
import { FlowProducer, Queue, type ConnectionOptions, type JobsOptions } from 'bullmq';
import { GamedataError } from '../../foundation/errors/index.js';
import type { RunJobData, RunResult, SliceJobData } from '../contract/job-types.js';
import { DEFAULT_QUEUE_PREFIX, JOB_NAMES, QUEUE_NAMES } from '../contract/queue-names.js';
import { queuePriority, type CallPriority } from '../../foundation/models/index.js';
import { DEFAULT_RUN_RETENTION, type RunRetention } from './run-counters.js';
import { sleep } from '../../foundation/retry/index.js';

/**
 * BullMQ's keep-options for finished jobs of a run (the run job and its slices): completed and failed jobs are
 * removed once older than `maxAgeMs` or beyond the newest `maxRuns` of their queue (BullMQ trims as jobs finish).
 * The run's figures stay in the run counters and their rollups.
 */
export function finishedJobRetention(
  retention: RunRetention = DEFAULT_RUN_RETENTION,
): Pick<JobsOptions, 'removeOnComplete' | 'removeOnFail'> {
  const keep = { age: Math.max(1, Math.ceil(retention.maxAgeMs / 1000)), count: retention.maxRuns };
  return { removeOnComplete: keep, removeOnFail: keep };
}

/**
 * BullMQ options of a slice job: retried with backoff, and a slice that finally fails fails its run; or, for a tail's
 * slice (`gapOnFailure`, issue 48), is set aside as a failed dependency (BullMQ `ignoreDependencyOnFailure`): the run
 * completes when its other slices have, and records the failed one's range as a gap (`completeRun`).
 */
export function sliceJobOptions(
  sliceId: string,
  retention?: RunRetention,
  gapOnFailure = false,
): JobsOptions {
  return {
    jobId: sliceId,
    ...finishedJobRetention(retention),
    attempts: 8,
    backoff: { type: 'exponential', delay: 1000 },
    ...(gapOnFailure ? { ignoreDependencyOnFailure: true } : { failParentOnFailure: true }),
  };
}

/**
 * The BullMQ jobs of a running slice's children (its split's pieces, or walks it discovered), added under the run's
 * job: children without a priority of their own keep the parent slice's, and every child gets the deployment's
 * retention, as the run's first slices do (`enqueueRun`).
 */
export function childSliceJobs(
  children: readonly SliceJobData[],
  o: { parent: { id: string; queue: string }; priority?: CallPriority; retention?: RunRetention },
): { name: string; data: SliceJobData; opts: JobsOptions }[] {
  return children.map((c) => ({
    name: JOB_NAMES.slice,
    data: c.priority === undefined && o.priority !== undefined ? { ...c, priority: o.priority } : c,
    opts: {
      ...sliceJobOptions(c.sliceId, o.retention, c.gapOnFailure === true),
      ...queuePriority(c.priority ?? o.priority),
      parent: o.parent,
    },
  }));
}

export interface EnqueueRunOptions {
  connection: ConnectionOptions;
  /** @default 'gamedata-bull' */
  prefix?: string;
  /** How long the run's finished jobs stay in BullMQ. @default DEFAULT_RUN_RETENTION */
  retention?: RunRetention;
}

/** A job added under the run besides its slices (the planning hold of `planning-hold.ts`). */
export interface ExtraChildJob {
  name: string;
  data: SliceJobData;
  opts: JobsOptions;
}

/** Adds the run and its slices atomically. Adding the same run id twice is a no-op (deterministic ids). */
export async function enqueueRun(
  run: RunJobData,
  slices: SliceJobData[],
  options: EnqueueRunOptions & { extraChildren?: readonly ExtraChildJob[] },
): Promise<void> {
  const flow = new FlowProducer({
    connection: options.connection,
    prefix: options.prefix ?? DEFAULT_QUEUE_PREFIX,
  });
  // Connection errors belong to the caller's client (the CLI says them once per change of state): without a
  // listener, BullMQ prints each one with its stack.
  flow.on('error', () => undefined);
  try {
    await flow.add({
      name: JOB_NAMES.run,
      queueName: QUEUE_NAMES.runs,
      data: run,
      opts: { jobId: run.runId, ...finishedJobRetention(options.retention) },
      children: [
        ...slices.map((s) => ({
          name: JOB_NAMES.slice,
          queueName: QUEUE_NAMES.slices,
          data: s,
          opts: {
            ...sliceJobOptions(s.sliceId, options.retention, s.gapOnFailure === true),
            ...queuePriority(s.priority),
          },
        })),
        ...(options.extraChildren ?? []).map((c) => ({ ...c, queueName: QUEUE_NAMES.slices })),
      ],
    });
  } finally {
    await flow.close();
  }
}

export interface RunStatus {
  state: string;
  result?: RunResult;
  failedReason?: string;
  slices: { completed: number; pending: number };
}

/** Reads a run's state: the parent job's state plus how many slices completed. */
export async function getRunStatus(
  runId: string,
  options: EnqueueRunOptions,
): Promise<RunStatus | undefined> {
  const queue = new Queue<RunJobData, RunResult>(QUEUE_NAMES.runs, {
    connection: options.connection,
    prefix: options.prefix ?? DEFAULT_QUEUE_PREFIX,
  });
  queue.on('error', () => undefined); // as in enqueueRun: the caller's client reports connection errors
  try {
    // The state first, then the job: BullMQ stores a finished run's reason (or result) in the same script that
    // moves it to failed (or completed), so a job read after a terminal state always carries it. Read the other way
    // round, a run failing between the two reads was said to have failed for an "unknown reason".
    const state = await queue.getJobState(runId);
    if (state === 'unknown') return undefined;
    const job = await queue.getJob(runId);
    if (!job) return undefined;
    const deps = await job.getDependenciesCount({ processed: true, unprocessed: true });
    const failedReason = job.failedReason ? await withSliceReason(job.failedReason, options) : undefined;
    return {
      state,
      ...(job.returnvalue ? { result: job.returnvalue } : {}),
      ...(failedReason ? { failedReason } : {}),
      slices: { completed: deps.processed ?? 0, pending: deps.unprocessed ?? 0 },
    };
  } finally {
    await queue.close();
  }
}

/**
 * The slice a run's failure names (BullMQ fails the run with `child <prefix>:<queue>:<id> failed`), or undefined.
 * @example failedSliceId('child gamedata-bull:gamedata-slices:r1.s1 failed') // 'r1.s1'
 */
export function failedSliceId(runReason: string, prefix: string = DEFAULT_QUEUE_PREFIX): string | undefined {
  const head = `child ${prefix}:${QUEUE_NAMES.slices}:`;
  if (!runReason.startsWith(head) || !runReason.endsWith(' failed')) return undefined;
  const id = runReason.slice(head.length, -' failed'.length);
  return id === '' ? undefined : id;
}

/**
 * A run's failure with its slice's own: `slice <id> failed after <n> attempt(s): <reason>` instead of BullMQ's
 * `child <key> failed`, which names the slice but not why (a stall past the limit, the last attempt's error).
 */
async function withSliceReason(runReason: string, options: EnqueueRunOptions): Promise<string> {
  const sliceId = failedSliceId(runReason, options.prefix ?? DEFAULT_QUEUE_PREFIX);
  if (sliceId === undefined) return runReason;
  const slices = new Queue<SliceJobData>(QUEUE_NAMES.slices, {
    connection: options.connection,
    prefix: options.prefix ?? DEFAULT_QUEUE_PREFIX,
  });
  slices.on('error', () => undefined);
  try {
    const slice = await slices.getJob(sliceId);
    if (!slice?.failedReason) return runReason;
    const attempts = `${String(slice.attemptsMade)} attempt${slice.attemptsMade === 1 ? '' : 's'}`;
    return `slice ${sliceId} failed after ${attempts}: ${slice.failedReason}`;
  } finally {
    await slices.close();
  }
}

/**
 * Waits until the run completed (resolves with its result) or failed (rejects), polling its state.
 * @param onTick called at each poll with the status (progress output).
 */
export async function waitForRun(
  runId: string,
  options: EnqueueRunOptions & { pollMs?: number; timeoutMs?: number; onTick?: (s: RunStatus) => void },
): Promise<RunResult> {
  const deadline = Date.now() + (options.timeoutMs ?? Number.POSITIVE_INFINITY);
  for (;;) {
    const s = await getRunStatus(runId, options);
    if (s) options.onTick?.(s);
    if (s?.state === 'completed' && s.result) return s.result;
    if (s?.state === 'failed') {
      throw new GamedataError(`run ${runId} failed: ${s.failedReason ?? 'unknown reason'}`);
    }
    if (Date.now() > deadline) {
      throw new GamedataError(
        `run ${runId} did not finish in ${String(options.timeoutMs)} ms (state ${s?.state ?? 'missing'})`,
      );
    }
    await sleep(options.pollMs ?? 500);
  }
}
