/** The work estimate of the fetcher's hold: pending slices x calls per slice, read at most every refreshMs. */
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/errors.js';
import { createWorkEstimator } from '../../../src/budget/work-estimate.js';

function countingSource(values: (number | Error)[]): {
  reads: () => number;
  closed: () => boolean;
  source: { pendingSlices(): Promise<number>; close(): Promise<void> };
} {
  let reads = 0;
  let closed = false;
  return {
    reads: () => reads,
    closed: () => closed,
    source: {
      pendingSlices() {
        const v = values[Math.min(reads, values.length - 1)];
        reads++;
        return v instanceof Error ? Promise.reject(v) : Promise.resolve(v ?? 0);
      },
      close() {
        closed = true;
        return Promise.resolve();
      },
    },
  };
}

describe('createWorkEstimator', () => {
  it('multiplies the pending slices by callsPerSlice and reuses a count for refreshMs', async () => {
    let t = 0;
    const s = countingSource([10, 4]);
    const work = createWorkEstimator({ source: s.source, callsPerSlice: 3, refreshMs: 100, now: () => t });
    expect(await work.comingCalls()).toBe(30);
    t = 99;
    expect(await work.comingCalls()).toBe(30);
    expect(s.reads()).toBe(1);
    t = 100;
    expect(await work.comingCalls()).toBe(12);
    expect(s.reads()).toBe(2);
  });

  it('callers at once share one read', async () => {
    const s = countingSource([5]);
    const work = createWorkEstimator({ source: s.source, now: () => 0 });
    const all = await Promise.all([work.comingCalls(), work.comingCalls(), work.comingCalls()]);
    expect(all).toEqual([10, 10, 10]);
    expect(s.reads()).toBe(1);
  });

  it('a source that fails gives undefined (the work is unknown), then recovers', async () => {
    let t = 0;
    const s = countingSource([new Error('redis down'), 7]);
    const work = createWorkEstimator({ source: s.source, refreshMs: 10, now: () => t });
    expect(await work.comingCalls()).toBeUndefined();
    t = 10;
    expect(await work.comingCalls()).toBe(14);
  });

  it('close closes the source; bad options throw naming the option', async () => {
    const s = countingSource([1]);
    await createWorkEstimator({ source: s.source }).close();
    expect(s.closed()).toBe(true);
    expect(() => createWorkEstimator({ source: s.source, callsPerSlice: -1 })).toThrow(ConfigError);
    expect(() => createWorkEstimator({ source: s.source, refreshMs: Number.NaN })).toThrow(/refreshMs/);
  });
});
