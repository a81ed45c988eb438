import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AbortedError, GamedataError, RateLimitError } from '../../../../src/foundation/errors/index.js';
import {
  DEFAULT_RETRY_POLICY,
  backoffDelay,
  resolveRetryPolicy,
  retry,
  sleep,
} from '../../../../src/foundation/retry/index.js';
import type { RetryPolicy } from '../../../../src/foundation/retry/index.js';

const retriable = (n: number) => new GamedataError(`failure ${n}`, { retriable: true });

/** A policy from arbitrary but valid numbers. */
const policyArb = fc
  .record({
    retries: fc.integer({ min: 0, max: 12 }),
    initialMs: fc.integer({ min: 0, max: 1_000 }),
    extraMs: fc.integer({ min: 0, max: 10_000 }),
    factor: fc.double({ min: 1, max: 4, noNaN: true }),
    jitter: fc.double({ min: 0, max: 1, noNaN: true }),
  })
  .map(({ extraMs, ...p }): RetryPolicy => ({
    ...DEFAULT_RETRY_POLICY,
    ...p,
    maxMs: p.initialMs + extraMs,
  }));

/** Runs `retry` with a recorded, instant sleep; `failures` attempts fail first (retriable unless said). */
async function run(
  policy: RetryPolicy,
  failures: number,
  opts: { random?: () => number; fatalAt?: number } = {},
) {
  const delays: number[] = [];
  let calls = 0;
  const outcome = await retry(
    () => {
      calls += 1;
      if (calls === opts.fatalAt) return Promise.reject(new GamedataError('fatal', { retriable: false }));
      if (calls <= failures) return Promise.reject(retriable(calls));
      return Promise.resolve('ok');
    },
    policy,
    {
      random: opts.random ?? (() => 0.5),
      sleep: (ms) => {
        delays.push(ms);
        return Promise.resolve();
      },
    },
  ).then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  return { outcome, calls, delays };
}

describe('retry (the one loop)', () => {
  it('calls until success, at most retries + 1 times, and throws the last failure as it was thrown', async () => {
    await fc.assert(
      fc.asyncProperty(policyArb, fc.integer({ min: 0, max: 15 }), async (policy, failures) => {
        const { outcome, calls, delays } = await run(policy, failures);
        if (failures <= policy.retries) {
          expect(outcome).toEqual({ value: 'ok' });
          expect(calls).toBe(failures + 1);
        } else {
          expect(calls).toBe(policy.retries + 1);
          expect((outcome as { error: Error }).error.message).toBe(`failure ${policy.retries + 1}`);
        }
        // a pause between two attempts, none after the last
        expect(delays).toHaveLength(calls - 1);
      }),
      { numRuns: 300 },
    );
  });

  it('each pause is the exponential step capped at maxMs, less at most its jitter share', async () => {
    await fc.assert(
      fc.asyncProperty(policyArb, fc.double({ min: 0, max: 0.999, noNaN: true }), async (policy, r) => {
        const { delays } = await run(policy, policy.retries + 1, { random: () => r });
        delays.forEach((d, i) => {
          const base = Math.min(policy.maxMs, policy.initialMs * policy.factor ** i);
          expect(d).toBeLessThanOrEqual(Math.round(base));
          expect(d).toBeGreaterThanOrEqual(Math.floor(base * (1 - policy.jitter)));
          expect(d).toBe(backoffDelay(policy, i + 1, () => r));
        });
        // Without jitter the pauses never shrink, and never pass maxMs.
        const plain = await run({ ...policy, jitter: 0 }, policy.retries + 1);
        for (let i = 1; i < plain.delays.length; i++)
          expect(plain.delays[i]).toBeGreaterThanOrEqual(plain.delays[i - 1] as number);
        plain.delays.forEach((d) => expect(d).toBeLessThanOrEqual(policy.maxMs));
      }),
      { numRuns: 300 },
    );
  });

  it('a failure the policy does not retry (and any AbortedError) ends the loop at once', async () => {
    await fc.assert(
      fc.asyncProperty(policyArb, fc.integer({ min: 1, max: 5 }), async (policy, fatalAt) => {
        const { outcome, calls } = await run({ ...policy, retries: 10 }, 10, { fatalAt });
        expect(calls).toBe(fatalAt);
        expect((outcome as { error: Error }).error.message).toBe('fatal');
      }),
    );
    let calls = 0;
    await expect(
      retry(
        () => {
          calls += 1;
          return Promise.reject(new AbortedError('stopped', { retriable: true }));
        },
        { ...DEFAULT_RETRY_POLICY, isRetriable: () => true },
      ),
    ).rejects.toThrow('stopped');
    expect(calls).toBe(1);
  });

  it('isRetriable receives what was thrown (a raw error with a retriable cause, say)', async () => {
    const seen: unknown[] = [];
    const raw = Object.assign(new Error('not the leader'), { retriable: true });
    let calls = 0;
    const answer = await retry(() => (++calls < 3 ? Promise.reject(raw) : Promise.resolve(calls)), {
      ...DEFAULT_RETRY_POLICY,
      initialMs: 0,
      isRetriable: (e) => {
        seen.push(e);
        return (e as { retriable?: boolean }).retriable === true;
      },
    });
    expect(answer).toBe(3);
    expect(seen).toEqual([raw, raw]);
  });

  it('gives up once maxElapsedMs passed since the first failure (the clock injected)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 20 }),
        fc.integer({ min: 1, max: 5_000 }),
        async (step, maxElapsedMs) => {
          let t = 0;
          let calls = 0;
          const error = await retry(
            () => {
              calls += 1;
              return Promise.reject(retriable(calls));
            },
            { ...DEFAULT_RETRY_POLICY, retries: Infinity, maxElapsedMs, jitter: 0 },
            {
              now: () => t,
              sleep: () => {
                t += step;
                return Promise.resolve();
              },
            },
          ).catch((e: unknown) => e as Error);
          // failure k is seen at t = (k - 1) * step; the loop stops at the first with t >= maxElapsedMs
          expect(calls).toBe(Math.ceil(maxElapsedMs / step) + 1);
          expect(error.message).toBe(`failure ${calls}`);
        },
      ),
    );
  });

  it("waits at least an UpstreamError's retryAfterMs, and reports each pause to onRetry", async () => {
    const pauses: number[] = [];
    const reported: [number, number][] = [];
    let calls = 0;
    await retry(
      () =>
        ++calls === 1
          ? Promise.reject(new RateLimitError('429', 429, undefined, undefined, { retryAfterMs: 4_000 }))
          : Promise.resolve(),
      { ...DEFAULT_RETRY_POLICY, initialMs: 10, jitter: 0 },
      {
        sleep: (ms) => {
          pauses.push(ms);
          return Promise.resolve();
        },
        onRetry: (_e, attempt, ms) => reported.push([attempt, ms]),
      },
    );
    expect(pauses).toEqual([4_000]);
    expect(reported).toEqual([[1, 4_000]]);
  });

  it('an abort stops the pause at once with an AbortedError, and no attempt starts after it', async () => {
    const stop = new AbortController();
    let calls = 0;
    const started = Date.now();
    const pending = retry(
      () => {
        calls += 1;
        return Promise.reject(retriable(calls));
      },
      { ...DEFAULT_RETRY_POLICY, initialMs: 60_000, maxMs: 60_000, jitter: 0 },
      { signal: stop.signal },
    );
    setTimeout(() => stop.abort(), 20);
    await expect(pending).rejects.toBeInstanceOf(AbortedError);
    expect(calls).toBe(1);
    expect(Date.now() - started).toBeLessThan(5_000);
    await expect(sleep(10, stop.signal)).rejects.toBeInstanceOf(AbortedError);
  });

  it('resolveRetryPolicy names the field, the rule and the value', () => {
    expect(resolveRetryPolicy({ retries: 3 })).toEqual({ ...DEFAULT_RETRY_POLICY, retries: 3 });
    expect(() => resolveRetryPolicy({ retries: -1 })).toThrow(
      'retry.retries must be an integer >= 0 or Infinity, got -1',
    );
    expect(() => resolveRetryPolicy({ jitter: 2 })).toThrow('retry.jitter must be in [0, 1], got 2');
    expect(() => resolveRetryPolicy({ maxMs: -5 })).toThrow('retry.maxMs must be >= 0, got -5');
    // maxMs below initialMs caps every pause at maxMs
    expect(backoffDelay({ ...DEFAULT_RETRY_POLICY, initialMs: 10, maxMs: 5, jitter: 0 }, 1)).toBe(5);
    expect(() => resolveRetryPolicy({ factor: 0.5 })).toThrow('retry.factor must be >= 1, got 0.5');
  });
});
