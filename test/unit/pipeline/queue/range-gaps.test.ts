/** Issue 48: which completed runs close a tail's gap, and how a run's ignored slice failures become gaps. */
import { describe, expect, it } from 'vitest';
import { runCoversGap, type RangeGap, type RangeGaps } from '../../../../src/pipeline/queue/range-gaps.js';
import { settleRunGaps, sliceIdOfJobKey } from '../../../../src/pipeline/queue/run-gaps.js';
import type { RunJobData, SliceJobData } from '../../../../src/pipeline/planner/index.js';

const H = 3_600_000;
const run = (extra: Partial<RunJobData> = {}): RunJobData => ({
  runId: 'r1',
  resources: ['donations'],
  since: 10 * H,
  until: 20 * H,
  filters: {},
  fullHistory: false,
  replay: false,
  createdAt: 100 * H,
  slices: 1,
  ...extra,
});
const gap = (resource: RangeGap['resource'], start: number, end: number) => ({ resource, start, end });

describe('runCoversGap', () => {
  it('a run of the resource, without operator filters, whose range holds the gap', () => {
    expect(runCoversGap(run(), gap('donations', 11 * H, 12 * H))).toBe(true);
    expect(runCoversGap(run(), gap('donations', 10 * H, 20 * H))).toBe(true);
    expect(runCoversGap(run(), gap('donations', 9 * H, 12 * H))).toBe(false);
    expect(runCoversGap(run(), gap('donations', 19 * H, 21 * H))).toBe(false);
    expect(runCoversGap(run(), gap('users', 11 * H, 12 * H))).toBe(false);
    expect(runCoversGap(run({ filters: { countryId: 'c' } }), gap('donations', 11 * H, 12 * H))).toBe(false);
  });

  it('transactions older than the 72 h feed: only a full-history run reads them again', () => {
    const tx = run({ resources: ['transactions'], since: 0, until: 100 * H });
    expect(runCoversGap(tx, gap('transactions', 90 * H, 91 * H))).toBe(true);
    expect(runCoversGap(tx, gap('transactions', 11 * H, 12 * H))).toBe(false);
    expect(runCoversGap({ ...tx, fullHistory: true }, gap('transactions', 11 * H, 12 * H))).toBe(true);
  });
});

describe('settleRunGaps', () => {
  /** A recording gap store. */
  function store(): RangeGaps & { recorded: RangeGap[]; closedBy: RunJobData[] } {
    const recorded: RangeGap[] = [];
    const closedBy: RunJobData[] = [];
    return {
      recorded,
      closedBy,
      record: (g) => Promise.resolve(void recorded.push(...g)),
      list: () => Promise.resolve(recorded),
      counts: () => Promise.resolve({}),
      close: (r) => Promise.resolve(void closedBy.push(r as RunJobData)).then(() => 0),
    };
  }
  const slice: SliceJobData = {
    runId: 'r1',
    sliceId: 'r1.s2',
    resource: 'donations',
    filters: { muId: 'm' },
    start: 12 * H,
    end: 13 * H,
    replay: false,
    depth: 1,
  };
  const slices = { getJob: (id: string) => Promise.resolve(id === 'r1.s2' ? { data: slice } : undefined) };

  it("a tail's run records each failed slice's range with its reason (the run's range when the job is gone)", async () => {
    const gaps = store();
    const job = {
      data: run({ gapOnFailure: true }),
      getIgnoredChildrenFailures: () =>
        Promise.resolve({
          'gamedata-bull:gamedata-slices:r1.s2': 'bad request',
          'gamedata-bull:gamedata-slices:r1.s9': 'gone',
        }),
    };
    expect(await settleRunGaps(job as never, { gaps, slices: slices as never, now: () => 5 })).toBe(2);
    expect(gaps.recorded).toEqual([
      {
        resource: 'donations',
        runId: 'r1',
        sliceId: 'r1.s2',
        filters: { muId: 'm' },
        start: 12 * H,
        end: 13 * H,
        reason: 'bad request',
        recordedAt: 5,
      },
      {
        resource: 'donations',
        runId: 'r1',
        sliceId: 'r1.s9',
        filters: {},
        start: 10 * H,
        end: 20 * H,
        reason: 'gone',
        recordedAt: 5,
      },
    ]);
    expect(gaps.closedBy).toEqual([]);
  });

  it('a run without gaps closes what it covers (a backfill does not even ask BullMQ for failures)', async () => {
    const gaps = store();
    let asked = 0;
    const job = {
      data: run(),
      getIgnoredChildrenFailures: () => {
        asked += 1;
        return Promise.resolve({});
      },
    };
    expect(
      await settleRunGaps(job as never, { gaps, slices: slices as never, now: () => 5 }),
    ).toBeUndefined();
    expect(asked).toBe(0);
    expect(gaps.closedBy).toHaveLength(1);
  });

  it('reads slice ids out of BullMQ job keys', () => {
    expect(sliceIdOfJobKey('gamedata-bull:gamedata-slices:a:b')).toBe('a:b');
    expect(sliceIdOfJobKey('p:gamedata-slices:x', 'p')).toBe('x');
    expect(sliceIdOfJobKey('other')).toBe('other');
  });
});
