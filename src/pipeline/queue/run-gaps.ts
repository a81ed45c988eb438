/**
 * A run's gaps when it completes (issue 48): a tail's run (`gapOnFailure`) completes although some of its slices
 * failed for good (BullMQ kept them as ignored failures, `ignoreDependencyOnFailure`); each of those slices' ranges is
 * recorded as a gap (`range-gaps.ts`). A run that completes with no gap of its own closes the gaps it read whole.
 */
import type { Job, Queue } from 'bullmq';
import type { RunJobData, RunResult, SliceJobData } from '../contract/job-types.js';
import { DEFAULT_QUEUE_PREFIX, QUEUE_NAMES } from '../contract/queue-names.js';
import type { RangeGap, RangeGaps } from './range-gaps.js';

/** The slice id of a BullMQ job key (`<prefix>:<queue>:<id>`), or the key itself when it is not one of the slices. */
export function sliceIdOfJobKey(key: string, prefix: string = DEFAULT_QUEUE_PREFIX): string {
  const head = `${prefix}:${QUEUE_NAMES.slices}:`;
  return key.startsWith(head) ? key.slice(head.length) : key;
}

/** The gap a failed slice leaves: its range as it failed, or the run's when its job is gone (retention). */
function gapOf(
  run: RunJobData,
  sliceId: string,
  slice: SliceJobData | undefined,
  reason: string,
  now: number,
): RangeGap {
  return {
    resource: slice?.resource ?? run.resources[0] ?? 'transactions',
    runId: run.runId,
    sliceId,
    filters: slice?.filters ?? {},
    start: slice?.start ?? run.since,
    end: slice?.end ?? run.until,
    reason,
    recordedAt: now,
  };
}

/**
 * Records the completed run's gaps, or closes the gaps it covers when it has none. Resolves to the run's gaps
 * (undefined for a run that does not record gaps and had none).
 */
export async function settleRunGaps(
  job: Pick<Job<RunJobData, RunResult>, 'data' | 'getIgnoredChildrenFailures'>,
  o: {
    gaps: RangeGaps;
    slices: Pick<Queue<SliceJobData>, 'getJob'>;
    prefix?: string;
    now: () => number;
  },
): Promise<number | undefined> {
  const run = job.data;
  const failures = run.gapOnFailure === true ? Object.entries(await job.getIgnoredChildrenFailures()) : [];
  if (failures.length === 0) {
    await o.gaps.close(run);
    return run.gapOnFailure === true ? 0 : undefined;
  }
  const gaps = await Promise.all(
    failures.map(async ([key, reason]) => {
      const sliceId = sliceIdOfJobKey(key, o.prefix);
      const slice = (await o.slices.getJob(sliceId))?.data;
      return gapOf(run, sliceId, slice, reason, o.now());
    }),
  );
  await o.gaps.record(gaps);
  return gaps.length;
}
