/**
 * The project's hooks into bullmq's private Worker parts (bullmq 6.7.0, pinned exactly while they stand), in one
 * place. Private fields may change in any release, and a hook that found its parts missing used to switch itself
 * off in silence; now {@link installBullmqHooks} checks the release and the parts when the slice worker is made and
 * refuses to start otherwise, with one `LibraryPatchError`.
 *
 * - {@link keepNewestLockTracked} (over `processJob` and `lockManager.trackJob`): BullMQ keeps one lock entry per job
 *   id, and the end of an older run of a job (a zombie whose lock was lost) untracks the id, so the newer run's lock
 *   would expire unrenewed (`slice-runs.ts`). After an older run ends, the newest run's token is tracked again.
 * - {@link wakeMainLoop} (over `mainLoopQueue`): BullMQ takes more jobs after a concurrency rise only when a running
 *   job completes; a settled promise on the main loop's queue wakes it to fetch up to the new concurrency, which is
 *   what BullMQ's own `resume()` does after `pause(true)` (`slot-sizing.ts`).
 *
 * test/unit/pipeline/queue/bullmq-private-hooks.test.ts checks the pin, the installed release and each part against bullmq's
 * source; test/integration/pipeline/queue/zombie-lock.test.ts shows the lock bug and the fix against Redis.
 */
import type { Worker } from 'bullmq';
import { LibraryPatchError } from '../../foundation/errors/index.js';
import { installedLibraryVersion, requireLibraryVersion } from '../../foundation/library-version/index.js';

/** The bullmq release the hooks were written for (package.json pins it exactly; a unit test checks both). */
export const BULLMQ_HOOKED_VERSION = '6.7.0';

/** The private parts of a bullmq 6.7.0 Worker the hooks use. */
interface WorkerInternals {
  processJob?: (job: { id?: string }, token: string, ...rest: unknown[]) => Promise<unknown>;
  lockManager?: { trackJob?: (jobId: string, token: string, ts: number) => unknown };
  mainLoopQueue?: { add?: unknown } | null;
}

/** The parts a hook needs that `worker` lacks (empty on bullmq 6.7.0). */
function missingParts(worker: object): string[] {
  const w = worker as WorkerInternals;
  const missing: string[] = [];
  if (typeof w.processJob !== 'function') missing.push('processJob');
  if (typeof w.lockManager?.trackJob !== 'function') missing.push('lockManager.trackJob');
  if (!Object.prototype.hasOwnProperty.call(worker, 'mainLoopQueue')) missing.push('mainLoopQueue');
  return missing;
}

const HOOKS = "the slice worker's hooks into bullmq's private Worker parts (pipeline/queue/bullmq-hooks.ts)";

/**
 * The release check alone, for before anything is made or connects (`startPipelineWorkers` calls it first).
 * @param installed the bullmq version to check (tests); @default the one this process resolves
 * @throws LibraryPatchError `bullmq 6.8.0 is installed, but the slice worker's hooks ... were written for 6.7.0: ...`
 */
export function requireBullmqRelease(
  installed: string | undefined = installedLibraryVersion('bullmq'),
): void {
  requireLibraryVersion('bullmq', BULLMQ_HOOKED_VERSION, HOOKS, installed);
}

/**
 * Checks the installed bullmq and `worker`'s private parts, then installs {@link keepNewestLockTracked} on it.
 * Call once per slice worker, before it takes a job.
 * @param installed the bullmq version to check (tests); @default the one this process resolves
 * @throws LibraryPatchError when bullmq is not 6.7.0 or the worker lacks a part a hook uses
 */
export function installBullmqHooks(
  worker: Worker,
  installed: string | undefined = installedLibraryVersion('bullmq'),
): void {
  requireBullmqRelease(installed);
  const missing = missingParts(worker);
  if (missing.length > 0)
    throw new LibraryPatchError(
      `bullmq ${installed ?? ''}'s Worker has no ${missing.join(', ')}: ${HOOKS} cannot be installed (is bullmq ${BULLMQ_HOOKED_VERSION} installed?)`,
      'bullmq',
    );
  keepNewestLockTracked(worker);
}

/**
 * Keeps BullMQ renewing the lock of the newest run of a job in this process: wraps the worker's private `processJob`;
 * after an older run ends (BullMQ's own untrack included), the newest run's token is tracked again.
 * @throws LibraryPatchError when the worker lacks `processJob` or `lockManager.trackJob`
 */
export function keepNewestLockTracked(worker: Worker): void {
  const w = worker as unknown as WorkerInternals;
  const original = w.processJob;
  const locks = w.lockManager;
  const track = locks?.trackJob;
  if (typeof original !== 'function' || typeof track !== 'function')
    throw new LibraryPatchError(
      `bullmq's Worker has no processJob or lockManager.trackJob: the newest-lock hook cannot be installed (is bullmq ${BULLMQ_HOOKED_VERSION} installed?)`,
      'bullmq',
    );
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
      const left = (tokens.get(id) ?? []).filter((t) => t !== token);
      if (left.length === 0) tokens.delete(id);
      else {
        tokens.set(id, left);
        const newest = left.at(-1);
        if (newest !== undefined) track.call(locks, id, newest, Date.now());
      }
    }
  };
}

/**
 * Wakes the worker's main loop to fetch up to its concurrency now (after a rise). A no-op while the main loop has
 * not started (its queue is null until then) and on a stand-in worker of a test; a real worker's part is checked by
 * {@link installBullmqHooks}.
 */
export function wakeMainLoop(worker: object): void {
  const queue = (worker as WorkerInternals).mainLoopQueue;
  if (queue !== null && queue !== undefined && typeof queue.add === 'function')
    (queue.add as (p: Promise<void>) => void).call(queue, Promise.resolve());
}
