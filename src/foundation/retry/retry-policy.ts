/**
 * The one retry policy (after KafkaJS' `retry`): how many times, how long between, and what is worth another try.
 * Pure: `backoffDelay` is the pause before a retry; `resolveRetryPolicy` checks a policy once, at the boundary.
 */
import { ConfigError, GamedataError } from '../errors/index.js';

export interface RetryPolicy {
  /** Tries after the first (attempts in all = retries + 1); `Infinity` with `maxElapsedMs` for "until then". @default 5 */
  retries: number;
  /** The pause before the first retry, ms. @default 250 */
  initialMs: number;
  /** The longest pause, ms. @default 8_000 */
  maxMs: number;
  /** Each pause is the previous one times this (before jitter). @default 2 */
  factor: number;
  /**
   * Share of each pause drawn at random, downwards: a pause `p` becomes uniform in `[p * (1 - jitter), p]`; 0 = none,
   * 1 = full jitter. @default 1
   */
  jitter: number;
  /** Whether a failure is worth another try (it receives what was thrown). @default {@link isRetriableError} */
  isRetriable: (error: unknown) => boolean;
  /** Give up once this long has passed since the first failure, ms (checked after each failure). @default Infinity */
  maxElapsedMs: number;
}

/** The default `isRetriable`: the error's `retriable` flag (the hierarchy of src/foundation/errors/). */
export function isRetriableError(error: unknown): boolean {
  return error instanceof GamedataError && error.retriable;
}

export const DEFAULT_RETRY_POLICY: Readonly<RetryPolicy> = {
  retries: 5,
  initialMs: 250,
  maxMs: 8_000,
  factor: 2,
  jitter: 1,
  isRetriable: isRetriableError,
  maxElapsedMs: Infinity,
};

/**
 * The pause before retry `retry` (1 for the first retry): `min(maxMs, initialMs * factor^(retry-1))`, less its
 * jitter share times `random()` (in [0, 1)), rounded to whole ms.
 */
export function backoffDelay(policy: RetryPolicy, retry: number, random: () => number = Math.random): number {
  const base = Math.min(policy.maxMs, policy.initialMs * policy.factor ** (retry - 1));
  return Math.round(base * (1 - policy.jitter * random()));
}

/**
 * A partial policy resolved against the defaults.
 * @throws ConfigError naming the field, the rule and the value received
 */
export function resolveRetryPolicy(partial: Partial<RetryPolicy> = {}): RetryPolicy {
  const policy = { ...DEFAULT_RETRY_POLICY, ...partial };
  const bad = (field: string, rule: string, value: number): ConfigError =>
    new ConfigError(`retry.${field} must be ${rule}, got ${value}`);
  if (!(policy.retries === Infinity || (Number.isInteger(policy.retries) && policy.retries >= 0)))
    throw bad('retries', 'an integer >= 0 or Infinity', policy.retries);
  if (!(policy.initialMs >= 0)) throw bad('initialMs', '>= 0', policy.initialMs);
  if (!(policy.maxMs >= 0)) throw bad('maxMs', '>= 0', policy.maxMs);
  if (!(policy.factor >= 1)) throw bad('factor', '>= 1', policy.factor);
  if (!(policy.jitter >= 0 && policy.jitter <= 1)) throw bad('jitter', 'in [0, 1]', policy.jitter);
  if (!(policy.maxElapsedMs >= 0)) throw bad('maxElapsedMs', '>= 0', policy.maxElapsedMs);
  return policy;
}
