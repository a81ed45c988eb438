/**
 * The pause of a loop that never gives up (a reader or a fetch loop that reports a failure and goes on): the one
 * policy's backoff ({@link backoffDelay}) and the one sleep, counted over the failures in a row, and reset by a
 * success. What `retry` is for one call, this is for a loop whose every turn is a different call.
 */
import { backoffDelay, type RetryPolicy } from './retry-policy.js';
import { sleep } from './sleep.js';

export interface Backoff {
  /**
   * Waits the pause after one more failure in a row (`backoffDelay(policy, failures)`).
   * @throws AbortedError when `signal` aborts the pause
   */
  pause(signal?: AbortSignal): Promise<void>;
  /** A success: the next failure pauses `initialMs` again. */
  reset(): void;
  /** Failures in a row so far. */
  failures(): number;
}

export interface BackoffOptions {
  /** Injected for tests. @default Math.random */
  random?: () => number;
  /** Injected for tests. @default the one sleep (honours the signal) */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/**
 * @example
 * const backoff = createBackoff({ ...DEFAULT_RETRY_POLICY, initialMs: 200, maxMs: 1_000 });
 * for (;;) try { await turn(); backoff.reset(); } catch (e) { report(e); await backoff.pause(); }
 */
export function createBackoff(policy: RetryPolicy, options: BackoffOptions = {}): Backoff {
  const random = options.random ?? Math.random;
  const wait = options.sleep ?? sleep;
  let failures = 0;
  return {
    pause: (signal) => wait(backoffDelay(policy, ++failures, random), signal),
    reset: () => {
      failures = 0;
    },
    failures: () => failures,
  };
}
