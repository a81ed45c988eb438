import type { SliceJobData } from '../contract/job-types.js';
import { sliceJobId } from '../contract/queue-names.js';
import type { TimeRange } from '../../foundation/slicing/index.js';

/** The job data of a split's children: one level deeper, same run, walk, replay flag, priority and gap rule as the parent. */
export function childSlices(data: SliceJobData, ranges: readonly TimeRange[]): SliceJobData[] {
  return ranges.map((c) => ({
    runId: data.runId,
    sliceId: sliceJobId(data.runId, { r: data.resource, ...data.filters }, c.start, c.end),
    resource: data.resource,
    filters: data.filters,
    start: c.start,
    end: c.end,
    replay: data.replay,
    depth: data.depth + 1,
    ...(data.priority === undefined ? {} : { priority: data.priority }),
    ...(data.gapOnFailure === true ? { gapOnFailure: true } : {}),
  }));
}
