/**
 * The one retry loop (after KafkaJS' `retry`): runs a call until it succeeds, fails in a way the policy does not
 * retry, or the retries or the time run out; the last failure is thrown as it was thrown. An `AbortedError` is never
 * retried, and an abort stops the pause at once (`AbortedError`). A failure that says when to come back
 * (`UpstreamError.retryAfterMs`: 429 / 503 with `Retry-After`) waits at least that long.
 */
import { AbortedError, UpstreamError } from '../errors/index.js';
import { DEFAULT_RETRY_POLICY, backoffDelay } from './retry-policy.js';
import type { RetryPolicy } from './retry-policy.js';
import { sleep } from './sleep.js';

export interface RetryContext {
  /** 1 for the first attempt. */
  attempt: number;
}

export interface RetryOptions {
  /** Aborts the pause (and any attempt not yet started) with an `AbortedError`. @default none */
  signal?: AbortSignal | undefined;
  /** Called before each pause (logs, metrics, a health re-check). @default none */
  onRetry?: ((error: unknown, attempt: number, delayMs: number) => void) | undefined;
  /** Injected for tests. @default Math.random */
  random?: () => number;
  /** Injected for tests. @default a timer honouring the signal */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Injected for tests (the `maxElapsedMs` clock). @default Date.now */
  now?: () => number;
}

/**
 * @example
 * const offsets = await retry(() => admin.fetchTopicOffsets(topic), { ...DEFAULT_RETRY_POLICY, jitter: 0 });
 * @throws whatever the last attempt threw; AbortedError when the signal aborted
 */
export async function retry<T>(
  call: (context: RetryContext) => Promise<T>,
  policy: RetryPolicy = DEFAULT_RETRY_POLICY,
  options: RetryOptions = {},
): Promise<T> {
  const random = options.random ?? Math.random;
  const wait = options.sleep ?? sleep;
  const now = options.now ?? Date.now;
  let firstFailure: number | undefined;
  for (let attempt = 1; ; attempt++) {
    if (options.signal?.aborted) throw new AbortedError('aborted', { cause: options.signal.reason });
    try {
      return await call({ attempt });
    } catch (error) {
      firstFailure ??= now();
      if (
        error instanceof AbortedError ||
        attempt > policy.retries ||
        !policy.isRetriable(error) ||
        now() - firstFailure >= policy.maxElapsedMs
      )
        throw error;
      let delay = backoffDelay(policy, attempt, random);
      if (error instanceof UpstreamError && error.retryAfterMs !== undefined)
        delay = Math.max(delay, error.retryAfterMs);
      options.onRetry?.(error, attempt, delay);
      await wait(delay, options.signal);
    }
  }
}
