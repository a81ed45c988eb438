import { describe, expect, it } from 'vitest';
import { createSliceRuns, LockLostReason } from '../../../src/jobs/slice-runs.js';

describe('slice runs: one run per job here, stopped when its lock is lost or the worker stops', () => {
  it('stops a run whose lock BullMQ could not renew, and says so', () => {
    const runs = createSliceRuns(new AbortController().signal);
    const a = runs.begin('a');
    const b = runs.begin('b');
    expect(a?.signal.aborted).toBe(false);
    runs.lost(['a', 'unknown']);
    expect(a?.signal.aborted).toBe(true);
    expect(a?.signal.reason).toBeInstanceOf(LockLostReason);
    expect(a?.lockLost()).toBe(true);
    expect(b?.signal.aborted).toBe(false);
    expect(b?.lockLost()).toBe(false);
  });

  it('refuses a second run of a job while the first still goes on, and stops the first (its lock is lost)', () => {
    const runs = createSliceRuns(new AbortController().signal);
    const first = runs.begin('a');
    expect(runs.begin('a')).toBeUndefined();
    expect(first?.signal.aborted).toBe(true);
    expect(first?.lockLost()).toBe(true);
    expect(runs.size()).toBe(1);
    // Once the zombie has ended, the slice runs again here.
    first?.end();
    expect(runs.size()).toBe(0);
    const again = runs.begin('a');
    expect(again?.signal.aborted).toBe(false);
    expect(again?.lockLost()).toBe(false);
  });

  it('stops every run when the worker stops, without calling it a lost lock', () => {
    const stop = new AbortController();
    const runs = createSliceRuns(stop.signal);
    const a = runs.begin('a');
    stop.abort(new Error('SIGTERM'));
    expect(a?.signal.aborted).toBe(true);
    expect(a?.lockLost()).toBe(false);
    // A run begun after the stop starts stopped.
    expect(runs.begin('b')?.signal.aborted).toBe(true);
  });

  it("an ended run's end does not remove a later run of the same job", () => {
    const runs = createSliceRuns(new AbortController().signal);
    const first = runs.begin('a');
    first?.end();
    const second = runs.begin('a');
    first?.end(); // a second end of the first run
    expect(runs.size()).toBe(1);
    expect(runs.begin('a')).toBeUndefined(); // the second still runs
    second?.end();
  });
});
