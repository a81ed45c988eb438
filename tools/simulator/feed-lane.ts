/**
 * The real service's per-key lane for the UNFILTERED transaction feed (upstream-facts.md, "What a call costs the
 * service"): deep feed pages cost seconds each (0.24 s + 0.09 s per hour of depth) and the service works them ONE AT
 * A TIME per key, whatever the request shape: "50 deep pages take ~70 s in one 50-call request and in twelve parallel
 * ones alike". So a feed call waits for every feed call of the same key that arrived before it, in this request or in
 * any other, and a request its client abandoned is still worked through: its calls keep the lane busy (nothing here
 * cancels a call when the socket closes).
 *
 * A lane is a "free at" time per key: a call of cost `c` arriving at `t` starts at `max(t, freeAt)` and ends `c`
 * later. The lane keeps the seconds it was busy, for `__sim/stats`.
 */

export interface FeedLanes {
  /** Waits until this call's turn on `key`'s lane has passed (the call's cost included). */
  occupy(key: string, costMs: number): Promise<void>;
  /** What the lanes did since the last reset. */
  snapshot(): FeedLaneStats;
  reset(): void;
}

export interface FeedLaneStats {
  /** Feed calls that went through a lane (cost > 0). */
  calls: number;
  /** Serialised feed time, summed over every key's lane. */
  busyMs: number;
  /** The longest a call waited for its turn (queueing, its own cost not counted). */
  maxWaitMs: number;
}

export function createFeedLanes(now: () => number = () => performance.now()): FeedLanes {
  const freeAt = new Map<string, number>();
  let stats: FeedLaneStats = { calls: 0, busyMs: 0, maxWaitMs: 0 };
  return {
    occupy(key, costMs) {
      if (!(costMs > 0)) return Promise.resolve();
      const t = now();
      const start = Math.max(t, freeAt.get(key) ?? 0);
      const end = start + costMs;
      freeAt.set(key, end);
      stats.calls++;
      stats.busyMs += costMs;
      stats.maxWaitMs = Math.max(stats.maxWaitMs, start - t);
      return new Promise((resolve) => setTimeout(resolve, end - t));
    },
    snapshot: () => ({ ...stats, busyMs: Math.round(stats.busyMs), maxWaitMs: Math.round(stats.maxWaitMs) }),
    reset() {
      stats = { calls: 0, busyMs: 0, maxWaitMs: 0 };
    },
  };
}
