/**
 * The client's retries, in the one retry vocabulary (`src/foundation/retry/`: `RetryPolicy` with `retries`,
 * `initialMs`, `maxMs`, `factor`, `jitter`, `isRetriable`, `maxElapsedMs`, and its one loop and sleep). What is the
 * client's own: its default (5 attempts in all, {@link CLIENT_RETRY_POLICY}) and the boundary that makes every
 * failure a `GamedataError` before the policy, `onRetry` and the caller see it ({@link withRetry}).
 */
import { GamedataError } from '../../foundation/errors/index.js';
import {
  DEFAULT_RETRY_POLICY,
  resolveRetryPolicy,
  retry,
  type RetryContext,
  type RetryOptions,
  type RetryPolicy,
} from '../../foundation/retry/index.js';

/** The client's default: the one policy with 4 retries (5 attempts in all), no time limit. */
export const CLIENT_RETRY_POLICY: Readonly<RetryPolicy> = { ...DEFAULT_RETRY_POLICY, retries: 4 };

/**
 * A partial policy resolved against the client's default.
 * @throws ConfigError naming the field, the rule and the value received (`resolveRetryPolicy`)
 */
export function resolveClientRetryPolicy(partial: Partial<RetryPolicy> = {}): RetryPolicy {
  return resolveRetryPolicy({ ...CLIENT_RETRY_POLICY, ...partial });
}

/**
 * The one retry loop over `fn`, every failure normalised to a `GamedataError` first (`GamedataError.from`), so the
 * policy's `isRetriable`, `onRetry` and the caller all see one. A `retryAfterMs` on the error (429 / 503 with
 * `Retry-After`) is a floor for the wait.
 * @throws GamedataError the last attempt's failure; AbortedError when the signal aborted
 */
export async function withRetry<T>(
  fn: (context: RetryContext) => Promise<T>,
  policy: RetryPolicy = CLIENT_RETRY_POLICY,
  options: RetryOptions = {},
): Promise<T> {
  return retry(
    async (context) => {
      try {
        return await fn(context);
      } catch (e) {
        throw GamedataError.from(e);
      }
    },
    policy,
    options,
  );
}
