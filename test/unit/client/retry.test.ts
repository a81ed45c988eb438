/* eslint-disable @typescript-eslint/require-await -- async fakes stand in for async work */
import { describe, expect, it } from 'vitest';
import {
  backoffDelay,
  DEFAULT_RETRY_POLICY,
  resolveRetryPolicy,
  withRetry,
} from '../../../src/upstream/client/retry.js';
import { GamedataError, RateLimitError, UpstreamError } from '../../../src/foundation/errors.js';

describe('withRetry', () => {
  const sleeps: number[] = [];
  const sleep = async (ms: number): Promise<void> => void sleeps.push(ms);

  it('retries retriable errors with exponential backoff, then succeeds', async () => {
    sleeps.length = 0;
    let n = 0;
    const v = await withRetry(
      async () => {
        if (++n < 4) throw new UpstreamError('503', 503, undefined, undefined);
        return 'ok';
      },
      { ...DEFAULT_RETRY_POLICY, jitter: 0 },
      { sleep },
    );
    expect(v).toBe('ok');
    expect(sleeps).toEqual([250, 500, 1000]);
  });

  it('does not retry a non-retriable error, and gives up after maxAttempts', async () => {
    let n = 0;
    await expect(
      withRetry(
        async () => {
          n++;
          throw new UpstreamError('400', 400, undefined, undefined);
        },
        DEFAULT_RETRY_POLICY,
        { sleep },
      ),
    ).rejects.toThrow('400');
    expect(n).toBe(1);
    n = 0;
    await expect(
      withRetry(
        async () => {
          n++;
          throw new UpstreamError('502', 502, undefined, undefined);
        },
        resolveRetryPolicy({ maxAttempts: 3 }),
        { sleep },
      ),
    ).rejects.toThrow('502');
    expect(n).toBe(3);
  });

  it('waits at least Retry-After', async () => {
    sleeps.length = 0;
    let n = 0;
    await withRetry(
      async () => {
        if (++n === 1) throw new RateLimitError('429', 429, undefined, undefined, { retryAfterMs: 3000 });
      },
      DEFAULT_RETRY_POLICY,
      { sleep },
    );
    expect(sleeps[0]).toBe(3000);
  });

  it('jitter stays within [delay*(1-jitter), delay] and caps at maxDelayMs', () => {
    const p = resolveRetryPolicy({ jitter: 0.5, maxDelayMs: 1000 });
    expect(backoffDelay(p, 1, () => 0)).toBe(250);
    expect(backoffDelay(p, 1, () => 1)).toBe(125);
    expect(backoffDelay(p, 10, () => 0)).toBe(1000);
    expect(() => resolveRetryPolicy({ maxAttempts: 0 })).toThrow(/maxAttempts/);
  });

  it('stops when the signal aborts', async () => {
    const c = new AbortController();
    c.abort();
    await expect(withRetry(async () => 1, DEFAULT_RETRY_POLICY, { signal: c.signal })).rejects.toThrow(
      GamedataError,
    );
  });
});
