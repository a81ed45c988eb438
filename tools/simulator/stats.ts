import type { FeedLaneStats } from './feed-lane.js';

/** Request counters of a running simulator (what tests assert on: batching, retries, rate limiting). */

export interface SimulatorStats {
  /** HTTP requests to the tRPC endpoint (a batch is one). */
  httpRequests: number;
  /** Procedure calls: total and per procedure path. */
  procedureCalls: { total: number; byProcedure: Record<string, number> };
  /** Number of requests per batch size (`"1"` = single calls and batches of one). */
  batchSizes: Record<string, number>;
  /** Responses per HTTP status (`"0"` = no answer: reset or hang). */
  byStatus: Record<string, number>;
  /** Requests refused with 429. */
  rateLimited: number;
  /** Faults injected, by kind. */
  faults: {
    http5xx: number;
    batch5xx: number;
    reset: number;
    hang: number;
    badJson: number;
    /** Issue 48: answers over the client's byte cap (the bad pages are not counted here). */
    oversize: number;
  };
  /** The per-key lanes of the unfiltered feed (`feed-lane.ts`): calls, serialised busy time, longest wait. */
  feedLane: FeedLaneStats;
  /**
   * Requests the service finished working after their client had gone (timed out or aborted): the key paid for
   * them and nobody read the answer. `slowestMs`: the longest of them, from arrival to answer.
   */
  answeredAfterClientGone: { requests: number; slowestMs: number };
  /**
   * From the last reset to the end of the first answer that carried a filtered transaction page (a per-user or
   * per-country walk's), ms; absent until one is answered. No record of a full history exists before it, so a run's
   * wall time is at least this plus the CPU its records cost (bench/full-history.ts).
   */
  firstFilteredTransactionMs?: number;
}

export interface StatsRecorder {
  snapshot(): SimulatorStats;
  reset(): void;
  request(batchSize: number): void;
  call(path: string): void;
  status(status: number): void;
  rateLimited(): void;
  fault(kind: keyof SimulatorStats['faults']): void;
  answeredAfterClientGone(ms: number): void;
  /** An answer carrying a filtered transaction page ended now. */
  filteredTransactionAnswered(): void;
}

const bump = (map: Record<string, number>, key: string, by = 1): void => {
  map[key] = (map[key] ?? 0) + by;
};

function empty(): SimulatorStats {
  return {
    httpRequests: 0,
    procedureCalls: { total: 0, byProcedure: {} },
    batchSizes: {},
    byStatus: {},
    rateLimited: 0,
    faults: {
      http5xx: 0,
      batch5xx: 0,
      reset: 0,
      hang: 0,
      badJson: 0,
      oversize: 0,
    },
    feedLane: { calls: 0, busyMs: 0, maxWaitMs: 0 },
    answeredAfterClientGone: { requests: 0, slowestMs: 0 },
  };
}

export function createStatsRecorder(): StatsRecorder {
  let stats = empty();
  let since = performance.now();
  return {
    snapshot: () => structuredClone(stats),
    reset: () => {
      stats = empty();
      since = performance.now();
    },
    filteredTransactionAnswered() {
      stats.firstFilteredTransactionMs ??= Math.round(performance.now() - since);
    },
    request(batchSize) {
      stats.httpRequests++;
      bump(stats.batchSizes, String(batchSize));
    },
    call(path) {
      stats.procedureCalls.total++;
      bump(stats.procedureCalls.byProcedure, path);
    },
    status: (status) => bump(stats.byStatus, String(status)),
    rateLimited: () => {
      stats.rateLimited++;
    },
    fault: (kind) => {
      stats.faults[kind]++;
    },
    answeredAfterClientGone: (ms) => {
      stats.answeredAfterClientGone.requests++;
      stats.answeredAfterClientGone.slowestMs = Math.max(
        stats.answeredAfterClientGone.slowestMs,
        Math.round(ms),
      );
    },
  };
}
