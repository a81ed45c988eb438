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
 * and would be lost in turn (`keepNewestLockTracked` puts it back). A chaos run with 512 slots a worker thrashed
 * that way: ~800 processors running for 443 slices, almost none waiting on the upstream, none finishing for minutes.
 */
import { setMaxListeners } from 'node:events';
import type { Worker } from 'bullmq';

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

/** The private parts of a bullmq 6.7.0 Worker the hook below uses (see test/unit/jobs/bullmq-private-hooks.test.ts). */
interface WorkerInternals {
  processJob?: (job: { id?: string }, token: string, ...rest: unknown[]) => Promise<unknown>;
  lockManager?: { trackJob?: (jobId: string, token: string, ts: number) => unknown };
}

/**
 * Keeps BullMQ renewing the lock of the newest run of a job in this process: BullMQ tracks locks by job id, and the
 * end of an older run of the same job (a zombie whose lock was lost) untracks the id, so the newer run's lock would
 * expire unrenewed. Wraps the worker's private `processJob`; after an older run ends (BullMQ's own untrack included),
 * the newest run's token is tracked again. Returns false, changing nothing, when the worker lacks those parts (another
 * bullmq release): the newer run then loses its lock and stops, and the job is taken again (slower, still exact).
 */
export function keepNewestLockTracked(worker: Worker): boolean {
  const w = worker as unknown as WorkerInternals;
  const original = w.processJob;
  const locks = w.lockManager;
  if (typeof original !== 'function' || typeof locks?.trackJob !== 'function') return false;
  const tokens = new Map<string, string[]>();
  w.processJob = async function processJob(this: unknown, job, token, ...rest) {
    const id = job.id;
    if (id === undefined) return original.call(this, job, token, ...rest);
    const list = tokens.get(id) ?? [];
    list.push(token);
    tokens.set(id, list);
    try {
      return await original.call(this, job, token, ...rest);
    } finally {
      const rest2 = (tokens.get(id) ?? []).filter((t) => t !== token);
      if (rest2.length === 0) tokens.delete(id);
      else {
        tokens.set(id, rest2);
        const newest = rest2.at(-1);
        if (newest !== undefined) locks.trackJob?.(id, newest, Date.now());
      }
    }
  };
  return true;
}
