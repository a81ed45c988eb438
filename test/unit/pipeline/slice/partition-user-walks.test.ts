/** Per-user walks of a run planned from a partition proof (issue 23): only the unproven types, one id per user. */
import { describe, expect, it } from 'vitest';
import { discoversUsers, userWalk } from '../../../../src/pipeline/slice/user-discovery.js';
import type { PartitionSummary, RunJobData } from '../../../../src/pipeline/planner/index.js';

const proof = (provenTypes: string[], unprovenTypes: string[]): PartitionSummary => ({
  key: 'countryId',
  walks: 3,
  window: { start: 0, end: 1 },
  provenTypes,
  unprovenTypes,
  rows: { covered: 0, uncovered: 0, repeated: 0, foreign: 0 },
  byType: {},
  pages: 0,
  unidentified: 0,
});

const run = (partition?: PartitionSummary): RunJobData => ({
  runId: 'r',
  resources: ['transactions'],
  since: 0,
  until: 100,
  filters: {},
  fullHistory: true,
  replay: false,
  createdAt: 100,
  slices: 0,
  ...(partition === undefined ? {} : { partition }),
});

describe('per-user walks under a partition proof', () => {
  it('a discovered user is walked for the unproven types only (one type: a value; several: a list)', () => {
    expect(userWalk(run(proof(['trading'], ['wage'])), 'u1').filters).toEqual({
      userId: 'u1',
      transactionType: 'wage',
    });
    expect(userWalk(run(proof(['trading'], ['donation', 'wage'])), 'u1').filters).toEqual({
      userId: 'u1',
      transactionType: ['donation', 'wage'],
    });
    // A proof the plan did not use (hidden users), nothing proven, or no proof: every type, as before.
    expect(userWalk(run({ ...proof(['trading'], ['wage']), used: false }), 'u1').filters).toEqual({
      userId: 'u1',
    });
    expect(userWalk(run(proof([], ['wage'])), 'u1').filters).toEqual({ userId: 'u1' });
    expect(userWalk(run(), 'u1').filters).toEqual({ userId: 'u1' });
  });

  it('the filters are in the slice id, so a per-type walk and a whole walk of one user are distinct slices', () => {
    const typed = userWalk(run(proof(['trading'], ['donation', 'wage'])), 'u1');
    expect(typed.sliceId).toContain('transactionType_donation_wage');
    expect(typed.sliceId).not.toBe(userWalk(run(), 'u1').sliceId);
  });

  it('a run whose proof proved every type has no per-user walk to discover for', () => {
    expect(discoversUsers(run(proof(['trading', 'wage'], [])))).toBe(false);
    expect(discoversUsers(run(proof(['trading'], ['wage'])))).toBe(true);
    expect(discoversUsers(run(proof([], ['wage'])))).toBe(true);
    expect(discoversUsers(run())).toBe(true);
  });
});
