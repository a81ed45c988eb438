/**
 * `createWorkEstimator(options)`: how many upstream calls the work known to be coming will make, for the fetcher's
 * hold (`workFill`). The work is the slices queued and running across the deployment (a {@link WorkSource}, e.g.
 * the BullMQ slice queue's counts), each expected to make the calls a sample of their plans says, or `callsPerSlice`.
 * The count is read at most every `refreshMs`, one read at a time.
 */
import { ConfigError } from '../../foundation/errors/index.js';

/** Slices across the deployment. */
export interface SliceCounts {
  /** Slices queued (waiting, prioritized, delayed) or running. */
  pending: number;
  /** Of `pending`, slices running now (each holds a worker slot). */
  running: number;
  /**
   * A sample of the pending slices: of `slices` read, `known` said how many calls they expect, `calls` in all. The
   * others count `callsPerSlice` each. Absent: every slice counts `callsPerSlice`.
   */
  sample?: { slices: number; known: number; calls: number } | undefined;
}

/** Where the estimator counts the work (the jobs layer's queue, a fake in tests). */
export interface WorkSource {
  countSlices(): Promise<SliceCounts>;
  /** Releases what the source holds (called by the budget's `close`). */
  close?(): Promise<void>;
}

export interface WorkEstimatorOptions {
  /** Required. */
  source: WorkSource;
  /**
   * Calls one pending slice is expected to make when its plan does not say (the source's sample). A slice planned
   * for latency is one page; with the empty page that ends a walk, about two. @default 2
   */
  callsPerSlice?: number | undefined;
  /** How long a count is reused before it is read again, ms. @default 250 */
  refreshMs?: number | undefined;
  /** Injected clock. @default Date.now */
  now?: (() => number) | undefined;
}

export const DEFAULT_WORK_ESTIMATOR_OPTIONS = { callsPerSlice: 2, refreshMs: 250 } as const;

/** What the fetcher weighs. */
export interface WorkEstimate {
  /** Calls the pending slices are expected to make. */
  coming: number;
  /** Slices running now across the deployment. */
  running: number;
  /** Slices queued and not running (waiting for a worker slot) across the deployment. */
  queued: number;
}

export interface WorkEstimator {
  /**
   * The work, from a count at most `refreshMs` old. `undefined` when the source cannot be read (the caller then
   * treats the work as unknown).
   */
  estimate(): Promise<WorkEstimate | undefined>;
  close(): Promise<void>;
}

/**
 * @throws ConfigError when `callsPerSlice` is not a number >= 0 or `refreshMs` not >= 0.
 * @example
 * const work = createWorkEstimator({ source: { countSlices: async () => ({ pending: 120, running: 32 }) } });
 * await work.estimate(); // { coming: 240, running: 32, queued: 88 }
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
  let last: { at: number; estimate: WorkEstimate | undefined } | undefined;
  let reading: Promise<WorkEstimate | undefined> | undefined;

  async function read(): Promise<WorkEstimate | undefined> {
    try {
      const { pending, running, sample } = await options.source.countSlices();
      if (!Number.isFinite(pending) || !Number.isFinite(running)) return undefined;
      // Calls per slice: the sample's plans where they say, `callsPerSlice` for the rest.
      const perSlice =
        sample !== undefined && sample.slices > 0 && sample.known <= sample.slices && sample.calls >= 0
          ? (sample.calls + (sample.slices - sample.known) * callsPerSlice) / sample.slices
          : callsPerSlice;
      return {
        coming: Math.ceil(Math.max(0, pending) * perSlice),
        running: Math.max(0, running),
        queued: Math.max(0, pending - running),
      };
    } catch {
      return undefined;
    }
  }

  return {
    async estimate() {
      if (last !== undefined && now() - last.at < refreshMs) return last.estimate;
      reading ??= read().then((estimate) => {
        last = { at: now(), estimate };
        reading = undefined;
        return estimate;
      });
      return reading;
    },
    async close() {
      await options.source.close?.();
    },
  };
}
