import { describe, expect, it } from 'vitest';
import { createSliceRuns, LockLostReason } from '../../../../src/pipeline/queue/slice-runs.js';

describe('slice runs: each run stopped when its lock is lost or the worker stops', () => {
  it('stops a run whose lock BullMQ could not renew, and says so', () => {
    const runs = createSliceRuns(new AbortController().signal);
    const a = runs.begin('a');
    const b = runs.begin('b');
    expect(a.signal.aborted).toBe(false);
    runs.lost(['a', 'unknown']);
    expect(a.signal.aborted).toBe(true);
    expect(a.signal.reason).toBeInstanceOf(LockLostReason);
    expect(a.lockLost()).toBe(true);
    expect(b.signal.aborted).toBe(false);
    expect(b.lockLost()).toBe(false);
  });

  it('a job taken again here stops its earlier run (a zombie: its lock is gone), the new one runs on', () => {
    const runs = createSliceRuns(new AbortController().signal);
    const first = runs.begin('a');
    const second = runs.begin('a');
    expect(first.lockLost()).toBe(true);
    expect(first.signal.aborted).toBe(true);
    expect(second.signal.aborted).toBe(false);
    expect(runs.size()).toBe(2);
    // A failed renewal names the job: it is the newest run's (BullMQ tracks that one).
    first.end();
    expect(runs.size()).toBe(1);
    runs.lost(['a']);
    expect(second.lockLost()).toBe(true);
    second.end();
    second.end(); // twice: counted once
    expect(runs.size()).toBe(0);
  });

  it('stops every run when the worker stops, without calling it a lost lock', () => {
    const stop = new AbortController();
    const runs = createSliceRuns(stop.signal);
    const a = runs.begin('a');
    stop.abort(new Error('SIGTERM'));
    expect(a.signal.aborted).toBe(true);
    expect(a.lockLost()).toBe(false);
    // A run begun after the stop starts stopped.
    expect(runs.begin('b').signal.aborted).toBe(true);
  });
});
