/**
 * The slices this process runs, each run with its own stop signal.
 *
 * A run stops (its signal aborts) when the worker stops, or when its BullMQ lock is lost: BullMQ could not renew it
 * (an event loop stalled past `lockDuration`, a Redis restart lost it, the liveness sweep gave the job to another
 * worker), or this process took the same job again (BullMQ gives a job out again only once its lock is gone). Such a
 * run is a zombie: the job is someone else's now, so going on only adds load, holds dedup claims and, under
 * exactly-once, is fenced at its next commit anyway.
 *
 * BullMQ keeps one lock entry per job id: when this process takes a job again while its zombie still runs, the new
 * run's entry replaces the zombie's, and the zombie's end deletes it, so the new run's lock would never be renewed
 * and would be lost in turn (`keepNewestLockTracked` in `bullmq-hooks.ts` puts it back). A chaos run with 512 slots a worker thrashed
 * that way: ~800 processors running for 443 slices, almost none waiting on the upstream, none finishing for minutes.
 */
import { setMaxListeners } from 'node:events';

export interface SliceRun {
  /** Aborted when the worker stops or the run's lock was lost. */
  signal: AbortSignal;
  /** Whether the run stopped because its lock was lost (the job is not this run's to move or fail). */
  lockLost(): boolean;
  /** Ends the run (call once, in a finally). */
  end(): void;
}

export interface SliceRuns {
  /** Starts a run of job `id`; an earlier run of the same job still going here has lost its lock: it is stopped. */
  begin(id: string): SliceRun;
  /** BullMQ could not renew these jobs' locks (its `lockRenewalFailed` event): their runs stop. */
  lost(ids: readonly string[]): void;
  /** Runs going now (zombies included until they end). */
  size(): number;
}

/** Why a zombie's signal aborted. */
export class LockLostReason extends Error {
  override name = 'LockLostReason';
}

interface Entry {
  controller: AbortController;
  lost: boolean;
}

export function createSliceRuns(stop: AbortSignal): SliceRuns {
  /** Runs per job id, oldest first; only the newest can hold the lock. */
  const runs = new Map<string, Entry[]>();
  let count = 0;

  function loseLock(id: string, entry: Entry): void {
    if (entry.lost) return;
    entry.lost = true;
    entry.controller.abort(new LockLostReason(`the lock of slice ${id} was lost`));
  }

  return {
    begin(id) {
      const list = runs.get(id) ?? [];
      for (const older of list) loseLock(id, older);
      const entry: Entry = { controller: new AbortController(), lost: false };
      // Each of the run's page reads (a users page: one call per row) listens on it: no listener cap.
      setMaxListeners(0, entry.controller.signal);
      const onStop = (): void => entry.controller.abort(stop.reason);
      if (stop.aborted) onStop();
      else stop.addEventListener('abort', onStop, { once: true });
      list.push(entry);
      runs.set(id, list);
      count++;
      let ended = false;
      return {
        signal: entry.controller.signal,
        lockLost: () => entry.lost,
        end: () => {
          if (ended) return;
          ended = true;
          count--;
          stop.removeEventListener('abort', onStop);
          const rest = (runs.get(id) ?? []).filter((e) => e !== entry);
          if (rest.length === 0) runs.delete(id);
          else runs.set(id, rest);
        },
      };
    },
    lost(ids) {
      // BullMQ renews the newest run's lock (the one it tracks); older ones are stopped already.
      for (const id of ids) {
        const newest = runs.get(id)?.at(-1);
        if (newest !== undefined) loseLock(id, newest);
      }
    },
    size: () => count,
  };
}
