/**
 * The worker's periodic sweep of orphaned exactly-once locks (issue 47, months of tails; `dedup/lock-sweep.ts`):
 * every `intervalMs` (jittered, so the workers of a deployment spread out; two sweeping at once is safe), each lock
 * whose lease expired more than `graceMs` ago is resolved by its page's fate and settled, as a claim would.
 */
import type { LockSweepReport } from '../dedup/index.js';
import { foreignPageResolver } from '../slice/eos-page.js';
import type { ExactlyOnceDelivery } from '../slice/slice-contract.js';

export interface LockSweeperOptions {
  /** Between sweeps (each waits 0.5-1.5x this). */
  intervalMs: number;
  /** See `LockSweepOptions.graceMs`. */
  graceMs: number;
  /** Told of a sweep that failed (it runs again at the next interval). */
  onError: (error: unknown) => void;
  /** Told of each sweep that settled anything. */
  onSwept?: ((report: LockSweepReport) => void) | undefined;
}

/** Starts sweeping; `stop()` ends it, waiting for a sweep under way. */
export function startLockSweeper(
  eos: ExactlyOnceDelivery,
  o: LockSweeperOptions,
): { stop: () => Promise<void> } {
  const stop = new AbortController();
  let running: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  const schedule = (): void => {
    timer = setTimeout(
      () => {
        running = (async () => {
          try {
            const report = await eos.marks.sweep(foreignPageResolver(eos), {
              graceMs: o.graceMs,
              signal: stop.signal,
            });
            if (report.committed + report.released > 0) o.onSwept?.(report);
          } catch (error) {
            if (!stop.signal.aborted) o.onError(error);
          }
          if (!stop.signal.aborted) schedule();
        })();
      },
      Math.round(o.intervalMs * (0.5 + Math.random())),
    );
    timer.unref();
  };
  schedule();
  return {
    async stop() {
      stop.abort();
      clearTimeout(timer);
      await running;
    },
  };
}
