/** Issue 48: the fetcher gives up after `limit` consecutive requests that reached no upstream, then cools down. */
import { describe, expect, it } from 'vitest';
import { createReachTracker } from '../../../../src/upstream/budget/reach-tracker.js';

describe('createReachTracker', () => {
  it('gives up at the limit-th consecutive miss, cools down for coolDownMs, then may fetch again', () => {
    let now = 1_000;
    const t = createReachTracker({ limit: 3, coolDownMs: 30_000, now: () => now });
    expect([t.record(false), t.record(false)]).toEqual([false, false]);
    expect(t.coolingDown()).toBe(false);
    expect(t.record(false)).toBe(true);
    expect(t.coolingDown()).toBe(true);
    now += 29_999;
    expect(t.coolingDown()).toBe(true);
    now += 1;
    expect(t.coolingDown()).toBe(false);
    expect(t.misses()).toBe(0);
  });

  it('any answer resets the count: misses must be consecutive', () => {
    const t = createReachTracker({ limit: 2, coolDownMs: 1, now: () => 0 });
    expect([t.record(false), t.record(true), t.record(false)]).toEqual([false, false, false]);
    expect(t.misses()).toBe(1);
    expect(t.record(false)).toBe(true);
  });
});
