/**
 * Whether this process's fetcher reaches the upstream (issue 48): a fetcher whose requests reach no upstream (a wrong
 * API URL, a host this machine cannot resolve or route to) must not keep serving the whole key. It counts its
 * consecutive requests that reached no upstream (`NetworkError.unreachable`, decided by code where the error is made);
 * at `limit` it gives up the fetcher lease and stays out of the election for `coolDownMs`, so a process that does
 * reach the upstream takes the key over. Any answer (even an HTTP error) resets the count. Pure, with an injected
 * clock.
 */

export interface ReachTrackerOptions {
  /** Consecutive requests that reached no upstream before the fetcher gives up. */
  limit: number;
  /** How long the fetcher stays out of the election after giving up, ms. */
  coolDownMs: number;
  now: () => number;
}

export interface ReachTracker {
  /** Records one request's outcome; `true` when this one makes the fetcher give up now. */
  record(reached: boolean): boolean;
  /** Whether the fetcher is cooling down (may not take the lease). */
  coolingDown(): boolean;
  /** Consecutive requests that reached no upstream so far. */
  misses(): number;
}

export function createReachTracker(options: ReachTrackerOptions): ReachTracker {
  let misses = 0;
  let coolUntil = 0;
  return {
    record(reached) {
      if (reached) {
        misses = 0;
        return false;
      }
      misses += 1;
      if (misses < options.limit) return false;
      misses = 0;
      coolUntil = options.now() + options.coolDownMs;
      return true;
    },
    coolingDown: () => options.now() < coolUntil,
    misses: () => misses,
  };
}
