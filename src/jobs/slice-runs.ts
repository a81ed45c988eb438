/**
 * The slices this process runs, one run per job at a time, each with its own stop signal.
 *
 * A run stops (its signal aborts) when the worker stops, or when BullMQ could not renew the job's lock: the lock
 * expired (an event loop stalled past `lockDuration`, a Redis restart lost it) or the liveness sweep gave the job to
 * another worker. Such a run is a zombie: the job is someone else's now (or the stalled check gives it back), so
 * going on only adds load, holds dedup locks and, under exactly-once, is fenced at its next commit anyway.
 *
 * BullMQ tracks a job's lock by job id alone: when the stalled check gives a job back and this same process takes
 * it again while the zombie still runs, the new run's lock entry is the zombie's, and the zombie's end untracks it, so
 * the new run's lock is never renewed and is lost in turn. A chaos run with 512 slots a worker (issue 32) thrashed
 * this way: ~800 processors running for 443 slices, almost none waiting on the upstream, no slice finishing for
 * minutes. So a job taken again while its zombie runs here is handed back for a moment ({@link SliceRuns.begin}
 * refuses it and stops the zombie) and taken again once the zombie has ended.
 */

export interface SliceRun {
  /** Aborted when the worker stops or the job's lock was lost. */
  signal: AbortSignal;
  /** Whether the run stopped because its lock was lost (the job is not this run's to move or fail). */
  lockLost(): boolean;
  /** Ends the run (call once, in a finally). */
  end(): void;
}

export interface SliceRuns {
  /**
   * Starts a run of job `id`; `undefined` when a run of the same job is still going in this process (a zombie
   * whose lock was lost: it is stopped now, and the caller hands the job back to be taken again after it ends).
   */
  begin(id: string): SliceRun | undefined;
  /** BullMQ could not renew these jobs' locks (its `lockRenewalFailed` event): their runs stop. */
  lost(ids: readonly string[]): void;
  /** Runs going now (zombies included until they end). */
  size(): number;
}

/** Why a zombie's signal aborted. */
export class LockLostReason extends Error {
  override name = 'LockLostReason';
}

export function createSliceRuns(stop: AbortSignal): SliceRuns {
  const runs = new Map<string, { controller: AbortController; lost: boolean }>();

  function loseLock(id: string): void {
    const run = runs.get(id);
    if (run === undefined || run.lost) return;
    run.lost = true;
    run.controller.abort(new LockLostReason(`the lock of slice ${id} was lost`));
  }

  return {
    begin(id) {
      if (runs.has(id)) {
        loseLock(id);
        return undefined;
      }
      const controller = new AbortController();
      const entry = { controller, lost: false };
      const onStop = (): void => controller.abort(stop.reason);
      if (stop.aborted) onStop();
      else stop.addEventListener('abort', onStop, { once: true });
      runs.set(id, entry);
      return {
        signal: controller.signal,
        lockLost: () => entry.lost,
        end: () => {
          stop.removeEventListener('abort', onStop);
          if (runs.get(id) === entry) runs.delete(id);
        },
      };
    },
    lost(ids) {
      for (const id of ids) loseLock(id);
    },
    size: () => runs.size,
  };
}
