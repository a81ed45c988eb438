/**
 * `createWorkEstimator(options)`: how many upstream calls the work known to be coming will make, for the fetcher's
 * hold (`workBinds`). The work is the slices queued and running across the deployment (a {@link WorkSource}, e.g.
 * the BullMQ slice queue's counts), each expected to make `callsPerSlice` calls. The count is read at most every
 * `refreshMs`, one read at a time.
 */
import { ConfigError } from '../errors.js';

/** Where the estimator counts the work (the jobs layer's queue, a fake in tests). */
export interface WorkSource {
  /** Slices queued (waiting, prioritized, delayed) or running, across the deployment. */
  pendingSlices(): Promise<number>;
  /** Releases what the source holds (called by the budget's `close`). */
  close?(): Promise<void>;
}

export interface WorkEstimatorOptions {
  /** Required. */
  source: WorkSource;
  /**
   * Calls one pending slice is expected to make. A slice planned for latency is one page; with a read ahead and the
   * empty page that ends a walk, about two (the demo: 1 915 calls for ~540 slices, users' profiles included).
   * @default 2
   */
  callsPerSlice?: number | undefined;
  /** How long a count is reused before it is read again, ms. @default 250 */
  refreshMs?: number | undefined;
  /** Injected clock. @default Date.now */
  now?: (() => number) | undefined;
}

export const DEFAULT_WORK_ESTIMATOR_OPTIONS = { callsPerSlice: 2, refreshMs: 250 } as const;

export interface WorkEstimator {
  /**
   * Calls the pending work is expected to make, from a count at most `refreshMs` old. `undefined` when the source
   * cannot be read (the caller then treats the work as unknown).
   */
  comingCalls(): Promise<number | undefined>;
  close(): Promise<void>;
}

/**
 * @throws ConfigError when `callsPerSlice` is not a number >= 0 or `refreshMs` not >= 0.
 * @example
 * const work = createWorkEstimator({ source: { pendingSlices: async () => 120 } });
 * await work.comingCalls(); // 240
 */
export function createWorkEstimator(options: WorkEstimatorOptions): WorkEstimator {
  const d = DEFAULT_WORK_ESTIMATOR_OPTIONS;
  const callsPerSlice = options.callsPerSlice ?? d.callsPerSlice;
  if (!(callsPerSlice >= 0))
    throw new ConfigError(`callsPerSlice must be a number >= 0, got ${callsPerSlice}`, ['callsPerSlice']);
  const refreshMs = options.refreshMs ?? d.refreshMs;
  if (!(refreshMs >= 0))
    throw new ConfigError(`refreshMs must be a number >= 0, got ${refreshMs}`, ['refreshMs']);
  const now = options.now ?? Date.now;
  let last: { at: number; calls: number | undefined } | undefined;
  let reading: Promise<number | undefined> | undefined;

  async function read(): Promise<number | undefined> {
    try {
      const slices = await options.source.pendingSlices();
      return Number.isFinite(slices) ? Math.max(0, slices) * callsPerSlice : undefined;
    } catch {
      return undefined;
    }
  }

  return {
    async comingCalls() {
      if (last !== undefined && now() - last.at < refreshMs) return last.calls;
      reading ??= read().then((calls) => {
        last = { at: now(), calls };
        reading = undefined;
        return calls;
      });
      return reading;
    },
    async close() {
      await options.source.close?.();
    },
  };
}
