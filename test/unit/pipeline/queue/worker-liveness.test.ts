import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startWorkerLiveness } from '../../../../src/pipeline/queue/worker-liveness.js';

/** Redis as liveness uses it: beats fail while `down`; the beats that also swept (last argument 1) are counted. */
function fakeRedis() {
  const r = {
    down: false,
    beats: 0,
    sweeps: [] as number[],
    eval(script: string, _keys: number, ...args: Array<string | number>): Promise<unknown> {
      if (r.down) return Promise.reject(new Error('connect ECONNREFUSED'));
      if (!script.includes('ZADD')) return Promise.resolve(0);
      r.beats += 1;
      if (args.at(-1) !== 1) return Promise.resolve([0]);
      r.sweeps.push(Date.now());
      return Promise.resolve([1]);
    },
  };
  return r;
}

describe('startWorkerLiveness', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('beats every timeout / 4 and sweeps only after a whole timeout of good beats (at start, after Redis was away)', async () => {
    const redis = fakeRedis();
    const errors: string[] = [];
    const t0 = Date.now();
    const l = startWorkerLiveness({ id: 'w1' }, redis, () => Promise.resolve(undefined), {
      prefix: 'bull',
      queue: 'slices',
      timeoutMs: 1000,
      maxStalledCount: 20,
      forgetAfterMs: 600_000,
      onError: (e) => errors.push(e.message),
    });
    await vi.advanceTimersByTimeAsync(900);
    expect(redis.beats).toBe(4); // at 0, 250, 500, 750
    expect(redis.sweeps).toEqual([]); // the others may not have beaten yet
    await vi.advanceTimersByTimeAsync(400);
    expect(redis.sweeps.length).toBeGreaterThan(0);
    expect(Math.min(...redis.sweeps) - t0).toBeGreaterThanOrEqual(1000);

    // Redis away for a moment: every worker's beat may have run out. No sweep until a timeout of good beats.
    redis.down = true;
    await vi.advanceTimersByTimeAsync(300);
    expect(errors).toContain('connect ECONNREFUSED');
    const downAt = Date.now();
    redis.down = false;
    const before = redis.sweeps.length;
    await vi.advanceTimersByTimeAsync(700);
    expect(redis.sweeps.length).toBe(before);
    await vi.advanceTimersByTimeAsync(800);
    expect(redis.sweeps.length).toBeGreaterThan(before);
    expect((redis.sweeps[before] ?? 0) - downAt).toBeGreaterThanOrEqual(1000 - 300);
    await l.stop();
    const beats = redis.beats;
    await vi.advanceTimersByTimeAsync(2000);
    expect(redis.beats).toBe(beats); // stopped
  });

  it("runs beforeTakeover on the dead workers' slices before they move back to wait, awaited at most a beat", async () => {
    // Every sweep finds the same two slices of dead worker w2.
    const redis = {
      eval: (script: string, _keys: number, ...args: Array<string | number>): Promise<unknown> =>
        Promise.resolve(script.includes('ZADD') && args.at(-1) === 1 ? [1, 's1', 'w2:1', 's2', 'w2:2'] : [0]),
    };
    const steps: string[] = [];
    let hang = false;
    const job = (id: string) => ({
      moveToWait: (token: string) => {
        steps.push(`move ${id} ${token}`);
        return Promise.resolve(0);
      },
    });
    const taken: string[][] = [];
    const l = startWorkerLiveness({ id: 'w1' }, redis, (id) => Promise.resolve(job(id)), {
      prefix: 'bull',
      queue: 'slices',
      timeoutMs: 1000,
      maxStalledCount: 20,
      forgetAfterMs: 600_000,
      beforeTakeover: (ids) => {
        steps.push(`fence ${ids.join(',')}`);
        return hang ? new Promise(() => undefined) : Promise.resolve();
      },
      onTakeover: (ids) => taken.push([...ids]),
    });
    try {
      expect(await l.sweep()).toEqual(['s1', 's2']);
      expect(steps).toEqual(['fence s1,s2', 'move s1 w2:1', 'move s2 w2:2']);
      expect(taken).toEqual([['s1', 's2']]);

      // A hook that never ends holds the moves back one beat interval (250 ms), no longer.
      hang = true;
      steps.length = 0;
      const sweeping = l.sweep();
      await vi.advanceTimersByTimeAsync(200);
      expect(steps).toEqual(['fence s1,s2']);
      await vi.advanceTimersByTimeAsync(100);
      expect(await sweeping).toEqual(['s1', 's2']);
      expect(steps).toEqual(['fence s1,s2', 'move s1 w2:1', 'move s2 w2:2']);
    } finally {
      hang = false;
      await l.stop();
    }
  });
});
