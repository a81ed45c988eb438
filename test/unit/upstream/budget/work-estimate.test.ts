/** The work estimate of the fetcher's hold: pending slices x calls per slice, read at most every refreshMs. */
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../../src/foundation/errors/index.js';
import { createWorkEstimator, type SliceCounts } from '../../../../src/upstream/budget/work-estimate.js';

function countingSource(values: (SliceCounts | Error)[]): {
  reads: () => number;
  closed: () => boolean;
  source: { countSlices(): Promise<SliceCounts>; close(): Promise<void> };
} {
  let reads = 0;
  let closed = false;
  return {
    reads: () => reads,
    closed: () => closed,
    source: {
      countSlices() {
        const v = values[Math.min(reads, values.length - 1)];
        reads++;
        return v instanceof Error ? Promise.reject(v) : Promise.resolve(v ?? { pending: 0, running: 0 });
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
    const s = countingSource([
      { pending: 10, running: 8 },
      { pending: 4, running: 4 },
    ]);
    const work = createWorkEstimator({ source: s.source, callsPerSlice: 3, refreshMs: 100, now: () => t });
    expect(await work.estimate()).toEqual({ coming: 30, running: 8, queued: 2 });
    t = 99;
    expect(await work.estimate()).toEqual({ coming: 30, running: 8, queued: 2 });
    expect(s.reads()).toBe(1);
    t = 100;
    expect(await work.estimate()).toEqual({ coming: 12, running: 4, queued: 0 });
    expect(s.reads()).toBe(2);
  });

  it('weighs the sampled slices by their plans and the rest by callsPerSlice', async () => {
    // 10 sampled: 4 plans of 50 calls in all, 6 unknown at 2 each: 25 calls per slice over 100 pending slices.
    const s = countingSource([{ pending: 100, running: 10, sample: { slices: 10, known: 4, calls: 200 } }]);
    const work = createWorkEstimator({ source: s.source, now: () => 0 });
    expect(await work.estimate()).toEqual({ coming: 2120, running: 10, queued: 90 });
    const empty = countingSource([{ pending: 3, running: 0, sample: { slices: 0, known: 0, calls: 0 } }]);
    expect(await createWorkEstimator({ source: empty.source, now: () => 0 }).estimate()).toEqual({
      coming: 6,
      running: 0,
      queued: 3,
    });
  });

  it('callers at once share one read', async () => {
    const s = countingSource([{ pending: 5, running: 1 }]);
    const work = createWorkEstimator({ source: s.source, now: () => 0 });
    const all = await Promise.all([work.estimate(), work.estimate(), work.estimate()]);
    expect(all.map((e) => e?.coming)).toEqual([10, 10, 10]);
    expect(s.reads()).toBe(1);
  });

  it('a source that fails, or counts nonsense, gives undefined (the work is unknown), then recovers', async () => {
    let t = 0;
    const s = countingSource([
      new Error('redis down'),
      { pending: Number.NaN, running: 0 },
      { pending: 7, running: 2 },
    ]);
    const work = createWorkEstimator({ source: s.source, refreshMs: 10, now: () => t });
    expect(await work.estimate()).toBeUndefined();
    t = 10;
    expect(await work.estimate()).toBeUndefined();
    t = 20;
    expect(await work.estimate()).toEqual({ coming: 14, running: 2, queued: 5 });
  });

  it('close closes the source; bad options throw naming the option', async () => {
    const s = countingSource([{ pending: 1, running: 0 }]);
    await createWorkEstimator({ source: s.source }).close();
    expect(s.closed()).toBe(true);
    expect(() => createWorkEstimator({ source: s.source, callsPerSlice: -1 })).toThrow(ConfigError);
    expect(() => createWorkEstimator({ source: s.source, refreshMs: Number.NaN })).toThrow(/refreshMs/);
  });
});
