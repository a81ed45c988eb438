/**
 * The one retry helper (after KafkaJS `retry`): exponential backoff with full jitter, an injected policy and an
 * injected sleep, honouring `AbortSignal` and a server's `Retry-After`.
 */
import { AbortedError, ConfigError, GamedataError, UpstreamError } from '../errors.js';
import { sleep } from './internal/sleep.js';

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
  /** Whether an error is worth another try. @default `error.retriable` of a GamedataError */
  isRetriable: (error: GamedataError) => boolean;
}

export const DEFAULT_RETRY_POLICY: Readonly<RetryPolicy> = {
  maxAttempts: 5,
  initialDelayMs: 250,
  maxDelayMs: 8_000,
  factor: 2,
  jitter: 1,
  isRetriable: (error) => error.retriable,
};

export interface RetryContext {
  /** 1 for the first attempt. */
  attempt: number;
}

export interface RetryOptions {
  signal?: AbortSignal | undefined;
  /** Called before each wait (for logs and metrics). */
  onRetry?: ((error: GamedataError, attempt: number, delayMs: number) => void) | undefined;
  /** Injected for tests. @default Math.random */
  random?: () => number;
  /** Injected for tests. @default a timer honouring the signal */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/** The backoff before attempt `attempt + 1` (pure). */
export function backoffDelay(
  policy: RetryPolicy,
  attempt: number,
  random: () => number = Math.random,
): number {
  const base = Math.min(policy.maxDelayMs, policy.initialDelayMs * policy.factor ** (attempt - 1));
  return Math.round(base * (1 - policy.jitter * random()));
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
 * Runs `fn` until it succeeds, fails with a non-retriable error, or the attempts run out; the last error is thrown.
 * A `retryAfterMs` on the error (429 / 503 with `Retry-After`) is a floor for the wait.
 */
export async function withRetry<T>(
  fn: (context: RetryContext) => Promise<T>,
  policy: RetryPolicy = DEFAULT_RETRY_POLICY,
  options: RetryOptions = {},
): Promise<T> {
  const random = options.random ?? Math.random;
  const wait = options.sleep ?? sleep;
  for (let attempt = 1; ; attempt++) {
    if (options.signal?.aborted) throw new AbortedError('aborted', { cause: options.signal.reason });
    try {
      return await fn({ attempt });
    } catch (thrown) {
      const error = GamedataError.from(thrown);
      if (error instanceof AbortedError || attempt >= policy.maxAttempts || !policy.isRetriable(error))
        throw error;
      let delay = backoffDelay(policy, attempt, random);
      if (error instanceof UpstreamError && error.retryAfterMs !== undefined)
        delay = Math.max(delay, error.retryAfterMs);
      options.onRetry?.(error, attempt, delay);
      await wait(delay, options.signal);
    }
  }
}
