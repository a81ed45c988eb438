import { describe, expect, it } from 'vitest';
import { childSliceJobs } from '../../../../src/pipeline/queue/backfill-flow.js';
import { DEFAULT_RUN_RETENTION } from '../../../../src/pipeline/queue/run-counters.js';
import type { SliceJobData } from '../../../../src/pipeline/contract/job-types.js';

const child = (sliceId: string, extra: Partial<SliceJobData> = {}): SliceJobData => ({
  runId: 'r1',
  sliceId,
  resource: 'transactions',
  filters: {},
  start: 0,
  end: 10,
  replay: false,
  depth: 1,
  ...extra,
});
const parent = { id: 'run-r1', queue: 'bull:gamedata-runs' };

describe('childSliceJobs', () => {
  it("gives every child the deployment's retention, not BullMQ's default of the planner", () => {
    const retention = { maxAgeMs: 30 * 24 * 3600_000, maxRuns: 50_000 };
    const jobs = childSliceJobs([child('a'), child('b')], { parent, retention });
    for (const j of jobs) {
      expect(j.opts.removeOnComplete).toEqual({ age: 30 * 24 * 3600, count: 50_000 });
      expect(j.opts.removeOnFail).toEqual({ age: 30 * 24 * 3600, count: 50_000 });
      expect(j.opts.parent).toEqual(parent);
    }
    expect(jobs.map((j) => j.opts.jobId)).toEqual(['a', 'b']);
    // Without a retention: the default one.
    const [d] = childSliceJobs([child('c')], { parent });
    expect(d?.opts.removeOnComplete).toEqual({
      age: DEFAULT_RUN_RETENTION.maxAgeMs / 1000,
      count: DEFAULT_RUN_RETENTION.maxRuns,
    });
  });

  it("children keep the parent slice's priority unless they carry their own", () => {
    const [inherits, own] = childSliceJobs([child('a'), child('b', { priority: 'backfill' })], {
      parent,
      priority: 'feed-tail',
    });
    expect(inherits?.data.priority).toBe('feed-tail');
    expect(own?.data.priority).toBe('backfill');
    // Tails overtake backfills in BullMQ (a lower number is served first).
    expect(inherits?.opts.priority).toBeLessThan(own?.opts.priority ?? 0);
    const [none] = childSliceJobs([child('c')], { parent });
    expect(none?.data.priority).toBeUndefined();
    expect(none?.opts.priority).toBeUndefined();
  });
});
