/** The dry run's estimate (issue 32): pages from the plan, requests of 50, serial feed priced by depth, time on a key. */
import { describe, expect, it } from 'vitest';
import {
  estimatePlanCost,
  formatPlanCost,
  type PlannedRun,
  type SliceJobData,
} from '../../../../src/pipeline/planner/index.js';

const HOUR = 3_600_000;
const UNTIL = 1_000 * HOUR;

function slice(over: Partial<SliceJobData>): SliceJobData {
  return {
    runId: 'r',
    sliceId: `s${Math.random()}`,
    resource: 'transactions',
    filters: {},
    start: UNTIL - HOUR,
    end: UNTIL,
    replay: false,
    depth: 0,
    ...over,
  };
}

function run(slices: SliceJobData[], feedSeconds?: number): PlannedRun {
  return {
    run: {
      runId: 'r',
      resources: ['transactions'],
      since: 0,
      until: UNTIL,
      filters: {},
      fullHistory: true,
      replay: false,
      createdAt: UNTIL,
      slices: slices.length,
      ...(feedSeconds === undefined
        ? {}
        : {
            partition: {
              key: 'countryId',
              walks: 1,
              window: { start: UNTIL - HOUR, end: UNTIL },
              feedSeconds,
              provenTypes: [],
              unprovenTypes: [],
              rows: { covered: 0, uncovered: 0, repeated: 0, foreign: 0 },
              byType: {},
              pages: 12,
              unidentified: 0,
            },
          }),
    },
    slices,
    planning: { plan: 'rounds', probeRounds: 0, probePages: 3, emptyWalks: 0, proofPages: 12 },
  };
}

/** The slice and Redis costs the expectations below are written in (the defaults are the medium run's). */
const SLICE_COST = { cpuMillisPerSlice: 22, redisMicrosPerRecord: 41, redisMillisPerSlice: 1 };

describe('estimatePlanCost', () => {
  it('filtered walks cost requests: planned pages where known, 2 per slice otherwise, planning in the totals, 50 calls a request', () => {
    const slices = [
      ...Array.from({ length: 100 }, (_, i) => slice({ filters: { userId: `u${i}` } })),
      slice({ filters: { countryId: 'c' }, expectedPages: 300 }),
    ];
    const c = estimatePlanCost(run(slices, 14.5), { requestsPerMinute: 500, ...SLICE_COST });
    // 200 + 300 walk pages, 12 proof and 3 probe pages; the proof's serial feed is the run's too.
    expect(c.pages).toBe(515);
    expect(c.requests).toBe(11);
    expect(c.feedSeconds).toBe(14.5);
    expect(c.minutesOnOneKey).toBeCloseTo(14.5 / 60);
    expect(c.planning).toEqual({ proofFeedSeconds: 14.5, proofPages: 12, probePages: 3, samplePages: 0 });
    expect(c.resources[0]).toMatchObject({ slices: 101, slicesPlanned: 1, slicesSampled: 0, pages: 500 });
    expect(c.assumptions.join('\n')).toContain('100 slices with no estimate at 2 pages each');
    // Records: each walk's full pages and half the page that ends it (100 x 150 + 29 950) at 50 µs: 2.25 s of one
    // core, well within the key's 14.5 s.
    expect(c.workerCpuMinutes).toBeCloseTo((44_950 * 50) / 60e6, 9);
    expect(c.workerProcesses).toBe(1);
    // And each of the 101 slices' fixed cost, 22 ms: 2.2 s more.
    expect(c.slices).toBe(101);
    expect(c.sliceCpuMinutes).toBeCloseTo((101 * 22) / 60e3, 9);
    expect(formatPlanCost(c)).toContain(
      'worker CPU: about 4 core-seconds (2 core-seconds for the records, 2 core-seconds for 101 slices): one worker process keeps pace with the key',
    );
  });

  it("prices each slice's fixed cost and Redis' share of its one core at the key's pace", () => {
    // 20 000 one-page walks (a per-user plan of quiet users): 400 requests, 0.8 min on the key; their records
    // (20 000 x 50 rows) cost 50 s of worker CPU, their fixed cost 20 000 x 22 ms = 440 s; Redis 41 s + 20 s.
    const walks = Array.from({ length: 20_000 }, (_, i) =>
      slice({ filters: { userId: `u${i}` }, expectedPages: 1 }),
    );
    const planned = { ...run(walks), planning: { ...run(walks).planning, probePages: 0, proofPages: 0 } };
    const c = estimatePlanCost(planned, SLICE_COST);
    expect(c.minutesOnOneKey).toBeCloseTo(0.8);
    expect(c.sliceCpuMinutes).toBeCloseTo(440 / 60, 9);
    expect(c.workerProcesses).toBe(Math.ceil((50 + 440) / 60 / 0.8));
    expect(c.redisCpuMinutes).toBeCloseTo((20_000 * 50 * 41e-6 + 20_000 * 1e-3) / 60, 9);
    expect(c.redisCoreShare).toBeCloseTo(c.redisCpuMinutes / 0.8, 9);
    // Workers and Redis together: their CPU over the key's minutes, in cores; on a machine of 2, the least time.
    const together = c.workerCpuMinutes + c.sliceCpuMinutes + c.redisCpuMinutes;
    expect(c.boxCores).toBe(Math.ceil(together / 0.8));
    expect(c.minutesOnMachine).toBeUndefined();
    const onTwo = estimatePlanCost(planned, { ...SLICE_COST, machineCores: 2 });
    expect(onTwo.minutesOnMachine?.minutes).toBeCloseTo(Math.max(0.8, together / 2), 9);
    expect(formatPlanCost(onTwo)).toMatch(
      new RegExp(
        `^box: workers and Redis about .* together: ${c.boxCores} cores keep pace with the key; with both on this machine's 2 cores, at least about ${Math.max(0.8, together / 2).toFixed(1)} min`,
        'm',
      ),
    );
    expect(formatPlanCost(c)).toContain(
      "Redis CPU: about 1.0 core-minutes: 127 % of one core at the key's pace, so Redis, not the key, sets the pace",
    );
    // Fewer, larger slices: the same 1 M records in 100 walks cost Redis 19.9 s less (the slices' part only).
    const larger = Array.from({ length: 100 }, (_, i) =>
      slice({ filters: { userId: `u${i}` }, expectedPages: 100.5 }),
    );
    const big = estimatePlanCost(
      { ...run(larger), planning: { ...run(larger).planning, probePages: 0, proofPages: 0 } },
      SLICE_COST,
    );
    expect(c.redisCpuMinutes - big.redisCpuMinutes).toBeCloseTo((19_900 * 1e-3) / 60, 6);
    // At the key's line rate (~40 k records a second) 41 µs a record alone is more than Redis' one core.
    expect(formatPlanCost(big)).toMatch(
      /^Redis CPU: about .* % of one core at the key's pace, so Redis, not the key, sets the pace/m,
    );
    // The defaults are the medium per-user run's (0.5 ms a slice for the worker and for Redis, 25 µs a record).
    const d = estimatePlanCost(planned);
    expect(d.sliceCpuMinutes).toBeCloseTo((20_000 * 0.5) / 60e3, 9);
    expect(d.redisCpuMinutes).toBeCloseTo((20_000 * 50 * 25e-6 + 20_000 * 0.5e-3) / 60, 9);
  });

  it("says how many worker processes keep pace when the records' CPU outlasts the key's time", () => {
    // 10 000 filtered pages: 200 requests, 0.4 min at 500 a minute; ~1 M records at 50 µs: ~50 s, 0.83 core-minutes.
    const walks = Array.from({ length: 100 }, (_, i) =>
      slice({ filters: { userId: `u${i}` }, expectedPages: 100 }),
    );
    const planned = { ...run(walks), planning: { ...run(walks).planning, probePages: 0, proofPages: 0 } };
    const c = estimatePlanCost(planned, SLICE_COST);
    expect(c.minutesOnOneKey).toBeCloseTo(0.4);
    expect(c.workerCpuMinutes).toBeCloseTo((100 * 9_950 * 50) / 60e6, 9);
    expect(c.workerProcesses).toBe(3);
    expect(formatPlanCost(c)).toContain(
      'worker CPU: about 52 core-seconds (50 core-seconds for the records, 2 core-seconds for 100 slices): 3 worker processes on as many cores keep pace with the key',
    );
    // A faster box: one process is enough.
    expect(estimatePlanCost(planned, { cpuMicrosPerRecord: 20 }).workerProcesses).toBe(1);
  });

  it('a users page is 101 calls for 100 records', () => {
    const users = [slice({ resource: 'users', filters: { countryId: 'c' }, expectedPages: 10 })];
    const c = estimatePlanCost(run(users));
    expect(c.resources[0]?.pages).toBe(1010);
    expect(c.workerCpuMinutes).toBeCloseTo((950 * 50) / 60e6, 9);
  });

  it("the dry run's samples price the slices the plan left unpriced, and their own pages are not the run's", () => {
    const users = Array.from({ length: 10 }, (_, i) =>
      slice({ sliceId: `u${i}`, filters: { userId: `u${i}` } }),
    );
    const pages = new Map(users.map((u, i) => [u.sliceId, i < 5 ? 2 : 7.5]));
    const c = estimatePlanCost(run(users), {
      sampled: { pages, probePages: 40, notes: ['transactions:userId: 10 walks'] },
    });
    expect(c.resources[0]).toMatchObject({ slices: 10, slicesPlanned: 0, slicesSampled: 10, pages: 48 });
    expect(c.pages).toBe(48 + 12 + 3);
    expect(c.planning.samplePages).toBe(40);
    expect(c.assumptions).toContain('sampled: transactions:userId: 10 walks');
    expect(c.assumptions.join('\n')).not.toContain('with no estimate');
    expect(formatPlanCost(c)).toContain("this estimate's samples: 40 probe pages (not spent by the run)");
    // Without the samples' rows, each walk's pages less half a page; with them, the rows.
    expect(c.workerCpuMinutes).toBeCloseTo(((5 * 1.5 + 5 * 7) * 100 * 50) / 60e6, 9);
    const rows = new Map(users.map((u, i) => [u.sliceId, i < 5 ? 120 : 690]));
    const byRows = estimatePlanCost(run(users), {
      sampled: { pages, rows, probePages: 40, notes: [] },
    });
    expect(byRows.workerCpuMinutes).toBeCloseTo(((5 * 120 + 5 * 690) * 50) / 60e6, 9);
    expect(byRows.assumptions.join('\n')).toContain('4050 records fetched');
  });

  it('unfiltered feed slices cost serial seconds by depth, and the serial time bounds the run when larger', () => {
    // 1 000 pages a day deep: 0.24 + 0.09 x 24 = 2.4 s each, 2 400 s of serial feed; with planning's 15 pages, 21
    // requests.
    const deep = slice({ start: UNTIL - 25 * HOUR, end: UNTIL - 23 * HOUR, expectedPages: 1000 });
    const c = estimatePlanCost(run([deep]));
    expect(c.feedSeconds).toBeCloseTo(2400, 0);
    expect(c.requests).toBe(21);
    expect(c.minutesOnOneKey).toBeCloseTo(40, 0);
    expect(formatPlanCost(c)).toContain('about 40.0 min on one key');
  });
});
