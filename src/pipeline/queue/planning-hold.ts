/**
 * A run enqueued while it is still being planned (issue 32): the per-user walks of a full history start as the
 * planner finds their users (the feed's head page, then each listing page), seconds before the listing ends.
 *
 * A BullMQ flow's parent completes when its last child does, so walks added later could find the run already done.
 * The run is therefore opened with one more child, the planning hold: a delayed job that no worker takes while the
 * planner lives. The planner adds the rest of the slices under the run, then removes the hold (BullMQ moves a parent
 * whose last dependency goes to wait, so the run completes once its slices have). While it plans, the planner pushes
 * the hold's delay on ({@link PLANNING_HOLD_BEAT_MS}); if it dies, the hold comes due after {@link PLANNING_HOLD_MS}
 * and the worker that takes it fails the run with a reason that says so. A planner that fails says why the same way
 * (the hold promoted with its reason). Either way the records already published stay, and a new backfill publishes
 * only what they lack (dedup by `_id`).
 */
import { Job, Queue } from 'bullmq';
import type { RunJobData, SliceJobData } from '../contract/job-types.js';
import { DEFAULT_QUEUE_PREFIX, JOB_NAMES, QUEUE_NAMES, safeIdPart } from '../contract/queue-names.js';
import {
  childSliceJobs,
  enqueueRun,
  finishedJobRetention,
  type EnqueueRunOptions,
  type ExtraChildJob,
} from './backfill-flow.js';
import type { RunRetention } from './run-counters.js';

/** How long a hold waits for word from its planner before a worker fails the run. */
export const PLANNING_HOLD_MS = 10 * 60_000;
/** How often a live planner pushes its hold's delay on. */
export const PLANNING_HOLD_BEAT_MS = 60_000;

/** The hold's job id: one per run. */
export function planningHoldId(runId: string): string {
  return safeIdPart(`${runId}.planning-hold`);
}

/**
 * The hold's data: slice-shaped (an empty range, so nothing would be read even by a worker that did not know it),
 * with `hold` set.
 */
export function planningHoldData(run: Pick<RunJobData, 'runId' | 'since' | 'replay'>): SliceJobData {
  return {
    runId: run.runId,
    sliceId: planningHoldId(run.runId),
    resource: 'transactions',
    filters: {},
    start: run.since,
    end: run.since,
    replay: run.replay,
    depth: 0,
    hold: {},
  };
}

/** What the worker that takes a hold fails the run with: the planner's reason, or its silence. */
export function planningHoldFailure(data: Pick<SliceJobData, 'runId' | 'hold'>): string {
  const why =
    data.hold?.reason ??
    `no word from its planner for ${String(PLANNING_HOLD_MS / 60_000)} min (the backfill process ended before it had added every slice)`;
  return `planning of run ${data.runId} did not finish: ${why}; what the run published stays, and a new backfill publishes only what is missing`;
}

/** The BullMQ job of a run's hold, a child of the run: delayed, one attempt. */
export function planningHoldJob(
  run: Pick<RunJobData, 'runId' | 'since' | 'replay'>,
  retention?: RunRetention,
): ExtraChildJob {
  return {
    name: JOB_NAMES.hold,
    data: planningHoldData(run),
    opts: {
      jobId: planningHoldId(run.runId),
      delay: PLANNING_HOLD_MS,
      attempts: 1,
      failParentOnFailure: true,
      ...finishedJobRetention(retention),
    },
  };
}

/** The planner's side of an open run: add slices under it, then release or fail it. */
export interface OpenRun {
  /** Adds slices under the run (ids already there are left as they are). */
  add(slices: readonly SliceJobData[]): Promise<void>;
  /** Stores the run's final data (its slice count and listing figures, known once planning ends). */
  updateRun(run: RunJobData): Promise<void>;
  /** Planning ended: removes the hold, so the run completes once its slices have. */
  release(): Promise<void>;
  /** Planning failed: the hold is due now, and the worker that takes it fails the run with `reason`. */
  fail(reason: string): Promise<void>;
  /** Stops the beat and closes the queues (after `release` or `fail`). */
  close(): Promise<void>;
}

/** The hold's job, or undefined when it is gone (already taken or removed). */
async function holdJob(slices: Queue<SliceJobData>, runId: string): Promise<Job<SliceJobData> | undefined> {
  return Job.fromId<SliceJobData>(slices, planningHoldId(runId));
}

/**
 * Enqueues the run with its first slices and its planning hold, and returns the planner's handle on it: its queues,
 * and the beat that keeps the hold from coming due while the planner lives.
 */
export async function enqueueOpenRun(
  run: RunJobData,
  first: SliceJobData[],
  options: EnqueueRunOptions,
): Promise<OpenRun> {
  await enqueueRun(run, first, { ...options, extraChildren: [planningHoldJob(run, options.retention)] });
  return openRun(run.runId, options);
}

/** The handle on a run already enqueued with its hold (see {@link enqueueOpenRun}). */
function openRun(runId: string, options: EnqueueRunOptions): OpenRun {
  const prefix = options.prefix ?? DEFAULT_QUEUE_PREFIX;
  const slices = new Queue<SliceJobData>(QUEUE_NAMES.slices, { connection: options.connection, prefix });
  const runs = new Queue<RunJobData>(QUEUE_NAMES.runs, { connection: options.connection, prefix });
  // Connection errors belong to the caller's client (as in enqueueRun).
  slices.on('error', () => undefined);
  runs.on('error', () => undefined);
  const beat = setInterval(() => {
    void holdJob(slices, runId)
      .then((job) => job?.changeDelay(PLANNING_HOLD_MS))
      .catch(() => undefined); // a missed beat is retried at the next; the hold waits 10 of them
  }, PLANNING_HOLD_BEAT_MS);
  beat.unref();
  const parent = { id: runId, queue: `${prefix}:${QUEUE_NAMES.runs}` };
  return {
    async add(added) {
      if (added.length === 0) return;
      await slices.addBulk(
        childSliceJobs(added, {
          parent,
          ...(options.retention === undefined ? {} : { retention: options.retention }),
        }),
      );
    },
    async updateRun(run) {
      await (await runs.getJob(runId))?.updateData(run);
    },
    async release() {
      clearInterval(beat);
      await (await holdJob(slices, runId))?.remove();
    },
    async fail(reason) {
      clearInterval(beat);
      const job = await holdJob(slices, runId);
      if (job === undefined) return;
      await job.updateData({ ...job.data, hold: { reason } });
      // Not delayed any more (a worker has it, or it failed): its failure is the run's already.
      await job.promote().catch(() => undefined);
    },
    async close() {
      clearInterval(beat);
      await slices.close();
      await runs.close();
    },
  };
}
