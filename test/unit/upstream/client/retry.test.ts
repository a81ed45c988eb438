/* eslint-disable @typescript-eslint/require-await -- async fakes stand in for async work */
import { describe, expect, it } from 'vitest';
import { backoffDelay } from '../../../../src/foundation/retry/index.js';
import {
  CLIENT_RETRY_POLICY,
  resolveClientRetryPolicy,
  withRetry,
} from '../../../../src/upstream/client/retry.js';
import { GamedataError, RateLimitError, UpstreamError } from '../../../../src/foundation/errors/index.js';

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
      { ...CLIENT_RETRY_POLICY, jitter: 0 },
      { sleep },
    );
    expect(v).toBe('ok');
    expect(sleeps).toEqual([250, 500, 1000]);
  });

  it('does not retry a non-retriable error, and gives up after its retries', async () => {
    let n = 0;
    await expect(
      withRetry(
        async () => {
          n++;
          throw new UpstreamError('400', 400, undefined, undefined);
        },
        CLIENT_RETRY_POLICY,
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
        resolveClientRetryPolicy({ retries: 2 }),
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
      CLIENT_RETRY_POLICY,
      { sleep },
    );
    expect(sleeps[0]).toBe(3000);
  });

  it('jitter stays within [delay*(1-jitter), delay] and caps at maxMs', () => {
    const p = resolveClientRetryPolicy({ jitter: 0.5, maxMs: 1000 });
    expect(backoffDelay(p, 1, () => 0)).toBe(250);
    expect(backoffDelay(p, 1, () => 1)).toBe(125);
    expect(backoffDelay(p, 10, () => 0)).toBe(1000);
    expect(() => resolveClientRetryPolicy({ retries: -1 })).toThrow(/retry\.retries/);
  });

  it('the client default is 5 attempts in all, and a thrown non-GamedataError reaches the caller as one', async () => {
    expect(CLIENT_RETRY_POLICY.retries).toBe(4);
    expect(resolveClientRetryPolicy({}).retries).toBe(4);
    await expect(
      withRetry(
        async () => {
          throw new TypeError('body cut short');
        },
        CLIENT_RETRY_POLICY,
        { sleep },
      ),
    ).rejects.toBeInstanceOf(GamedataError);
  });

  it('stops when the signal aborts', async () => {
    const c = new AbortController();
    c.abort();
    await expect(withRetry(async () => 1, CLIENT_RETRY_POLICY, { signal: c.signal })).rejects.toThrow(
      GamedataError,
    );
  });
});
