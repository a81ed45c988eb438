/**
 * The client's retries, on the one retry loop (`src/foundation/retry/`): exponential backoff with full jitter, an injected
 * policy and an injected sleep, honouring `AbortSignal` and a server's `Retry-After`. This file keeps the client's
 * public option names (`maxAttempts`, `initialDelayMs`, `maxDelayMs`, docs/client.md) and maps them onto the one
 * policy ({@link toRetryPolicy}); every failure reaches the policy, `onRetry` and the caller as a `GamedataError`.
 */
import { ConfigError, GamedataError } from '../../foundation/errors.js';
import {
  backoffDelay as retryBackoffDelay,
  DEFAULT_RETRY_POLICY as ONE_RETRY_POLICY,
  isRetriableError,
  retry,
  type RetryContext,
  type RetryOptions as OneRetryOptions,
  type RetryPolicy as OneRetryPolicy,
} from '../../foundation/retry/index.js';

export type { RetryContext };

export interface RetryPolicy {
  /** Total attempts including the first. @default 5 */
  maxAttempts: number;
  /** Backoff before the 2nd attempt in ms; doubles each attempt. @default 250 */
  initialDelayMs: number;
  /** Ceiling of one backoff in ms. @default 8000 */
  maxDelayMs: number;
  /** Multiplier per attempt. @default 2 */
  factor: number;
  /** Full jitter: the delay is drawn from [delay*(1-jitter), delay]. 0 disables it. @default 1 */
  jitter: number;
  /** Whether an error is worth another try. @default `error.retriable` of a GamedataError (`isRetriableError`) */
  isRetriable: (error: GamedataError) => boolean;
}

/** The client's default in the one policy's terms: 5 attempts (4 retries), no time limit. */
export const CLIENT_RETRY_POLICY: Readonly<OneRetryPolicy> = { ...ONE_RETRY_POLICY, retries: 4 };

export const DEFAULT_RETRY_POLICY: Readonly<RetryPolicy> = {
  maxAttempts: CLIENT_RETRY_POLICY.retries + 1,
  initialDelayMs: CLIENT_RETRY_POLICY.initialMs,
  maxDelayMs: CLIENT_RETRY_POLICY.maxMs,
  factor: CLIENT_RETRY_POLICY.factor,
  jitter: CLIENT_RETRY_POLICY.jitter,
  isRetriable: isRetriableError,
};

/** The one loop's options but its clock (the client sets no time limit), with `onRetry` given a `GamedataError`. */
export interface RetryOptions extends Omit<OneRetryOptions, 'onRetry' | 'now'> {
  /** Called before each wait (for logs and metrics). */
  onRetry?: ((error: GamedataError, attempt: number, delayMs: number) => void) | undefined;
}

/** The client's policy as the one policy: `retries: maxAttempts - 1`, no time limit. */
export function toRetryPolicy(policy: RetryPolicy): OneRetryPolicy {
  const isRetriable = policy.isRetriable;
  return {
    retries: policy.maxAttempts - 1,
    initialMs: policy.initialDelayMs,
    maxMs: policy.maxDelayMs,
    factor: policy.factor,
    jitter: policy.jitter,
    isRetriable:
      isRetriable === isRetriableError ? isRetriableError : (e) => isRetriable(GamedataError.from(e)),
    maxElapsedMs: Infinity,
  };
}

/** The backoff before attempt `attempt + 1` (pure; the one loop's `backoffDelay`). */
export function backoffDelay(
  policy: RetryPolicy,
  attempt: number,
  random: () => number = Math.random,
): number {
  return retryBackoffDelay(toRetryPolicy(policy), attempt, random);
}

/** Resolves a partial policy against the defaults; throws naming the option on bad values. */
export function resolveRetryPolicy(partial: Partial<RetryPolicy> = {}): RetryPolicy {
  const policy = { ...DEFAULT_RETRY_POLICY, ...partial };
  if (!Number.isInteger(policy.maxAttempts) || policy.maxAttempts < 1)
    throw new ConfigError(`retry.maxAttempts must be an integer >= 1, got ${policy.maxAttempts}`);
  if (!(policy.initialDelayMs >= 0))
    throw new ConfigError(`retry.initialDelayMs must be >= 0, got ${policy.initialDelayMs}`);
  if (!(policy.jitter >= 0 && policy.jitter <= 1))
    throw new ConfigError(`retry.jitter must be in [0, 1], got ${policy.jitter}`);
  return policy;
}

/**
 * Runs `fn` until it succeeds, fails with a non-retriable error, or the attempts run out; the last error is thrown
 * (as a `GamedataError`). A `retryAfterMs` on the error (429 / 503 with `Retry-After`) is a floor for the wait.
 */
export async function withRetry<T>(
  fn: (context: RetryContext) => Promise<T>,
  policy: RetryPolicy = DEFAULT_RETRY_POLICY,
  options: RetryOptions = {},
): Promise<T> {
  const { onRetry, ...rest } = options;
  return retry(
    async (context) => {
      try {
        return await fn(context);
      } catch (e) {
        throw GamedataError.from(e);
      }
    },
    toRetryPolicy(policy),
    {
      ...rest,
      ...(onRetry === undefined
        ? {}
        : {
            onRetry: (e: unknown, attempt: number, delayMs: number) =>
              onRetry(GamedataError.from(e), attempt, delayMs),
          }),
    },
  );
}
