// src/pipeline/queue/bullmq-hooks.ts: the hooks into bullmq's private Worker parts. `wakeMainLoop` wakes BullMQ's main
// loop through the Worker's private `mainLoopQueue` (an AsyncFifoQueue: adding a settled promise makes the loop fetch
// again, as BullMQ's own resume() does); `keepNewestLockTracked` wraps `processJob` and re-tracks a lock. A private
// field may change in any release, so bullmq is pinned exactly, this fails loudly when what is installed is not what
// the hooks were written for, and the worker refuses to start on another release (`installBullmqHooks`).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { AsyncFifoQueue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import {
  BULLMQ_HOOKED_VERSION as BULLMQ_HOOKS_WRITTEN_FOR,
  installBullmqHooks,
  keepNewestLockTracked,
  requireBullmqRelease,
  wakeMainLoop,
} from '../../../../src/pipeline/queue/bullmq-hooks.js';
import { LibraryPatchError } from '../../../../src/foundation/errors/index.js';

/** A real Worker that never connects (lazyConnect, no autorun); closed by `done`. */
function idleWorker(): { worker: Worker; done: () => Promise<void> } {
  const connection = new Redis('redis://127.0.0.1:1', { lazyConnect: true, maxRetriesPerRequest: null });
  connection.on('error', () => undefined);
  const worker = new Worker('hooks', () => Promise.resolve(), { connection, autorun: false });
  worker.on('error', () => undefined);
  return {
    worker,
    done: async () => {
      await worker.close(true);
      connection.disconnect();
    },
  };
}

describe("bullmq's private main-loop queue (slot-sizing's wake)", () => {
  it('bullmq is pinned exactly to the release the hook was written for, and that release is installed', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../../../package.json', import.meta.url), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    expect(pkg.dependencies.bullmq).toBe(BULLMQ_HOOKS_WRITTEN_FOR);
    const installed = createRequire(import.meta.url)('bullmq/package.json') as { version: string };
    expect(installed.version).toBe(BULLMQ_HOOKS_WRITTEN_FOR);
  });

  it('a Worker has the field (null until its main loop runs), and the main loop puts an AsyncFifoQueue there', async () => {
    // Never connects: lazyConnect, and the worker does not run.
    const connection = new Redis('redis://127.0.0.1:1', { lazyConnect: true, maxRetriesPerRequest: null });
    connection.on('error', () => undefined);
    const worker = new Worker('hooks', () => Promise.resolve(), { connection, autorun: false });
    worker.on('error', () => undefined);
    try {
      expect(Object.prototype.hasOwnProperty.call(worker, 'mainLoopQueue')).toBe(true);
      expect((worker as unknown as { mainLoopQueue: unknown }).mainLoopQueue).toBeNull();
      const source = (Worker.prototype as unknown as { mainLoop: () => unknown }).mainLoop.toString();
      expect(source).toMatch(/this\.mainLoopQueue = asyncFifoQueue/);
      expect(source).toMatch(/new \w+\.AsyncFifoQueue\(\)|new AsyncFifoQueue\(\)/);
      expect(typeof AsyncFifoQueue.prototype.add).toBe('function');
    } finally {
      await worker.close(true);
      connection.disconnect();
    }
  });
});

describe("bullmq's private processJob and lock manager (slice-runs' keepNewestLockTracked)", () => {
  it('a Worker has processJob (called as this.processJob by the main loop) and a lock manager keyed by job id', async () => {
    const connection = new Redis('redis://127.0.0.1:1', { lazyConnect: true, maxRetriesPerRequest: null });
    connection.on('error', () => undefined);
    const worker = new Worker('hooks', () => Promise.resolve(), { connection, autorun: false });
    worker.on('error', () => undefined);
    try {
      const w = worker as unknown as {
        processJob: unknown;
        lockManager: {
          trackJob: (id: string, token: string, ts: number) => void;
          untrackJob: unknown;
          trackedJobs: Map<string, unknown>;
        };
      };
      expect(typeof w.processJob).toBe('function');
      expect(typeof w.lockManager.trackJob).toBe('function');
      const mainLoop = (Worker.prototype as unknown as { mainLoop: () => unknown }).mainLoop.toString();
      expect(mainLoop).toMatch(/this\.processJob\(job, token/);
      // The bug the hook works around: the lock entry is per job id, and a run's end untracks the id.
      const processJob = (Worker.prototype as unknown as { processJob: () => unknown }).processJob.toString();
      expect(processJob).toMatch(/this\.lockManager\.untrackJob\(job\.id\)/);
      w.lockManager.trackJob('j', 'token-a', 1);
      w.lockManager.trackJob('j', 'token-b', 1);
      expect(w.lockManager.trackedJobs.size).toBe(1);
      expect((w.lockManager.trackedJobs.get('j') as { token: string }).token).toBe('token-b');
    } finally {
      await worker.close(true);
      connection.disconnect();
    }
  });
});

describe('the hooks as installed (installBullmqHooks)', () => {
  it('installs on a real 6.7.0 Worker; another release, or a worker without the parts, refuses with one LibraryPatchError', async () => {
    const { worker, done } = idleWorker();
    try {
      const before = (worker as unknown as { processJob: unknown }).processJob;
      installBullmqHooks(worker);
      expect((worker as unknown as { processJob: unknown }).processJob).not.toBe(before);
      expect(() => requireBullmqRelease()).not.toThrow();
      expect(() => requireBullmqRelease('6.8.0')).toThrow(LibraryPatchError);
      expect(() => installBullmqHooks(worker, '6.8.0')).toThrow(
        /bullmq 6\.8\.0 is installed, but the slice worker's hooks .* written for 6\.7\.0/,
      );
      // the check is no longer bypassed into a silent off: a worker lacking the parts does not start
      expect(() => installBullmqHooks({} as Worker)).toThrow(
        /has no processJob, lockManager\.trackJob, mainLoopQueue/,
      );
    } finally {
      await done();
    }
  });

  it('keepNewestLockTracked: when an older run of a job ends, the newest run of it is tracked again', async () => {
    const tracked: [string, string][] = [];
    const ends = new Map<string, () => void>();
    const fake = {
      processJob: (_job: { id?: string }, token: string) =>
        new Promise<void>((resolve) => ends.set(token, resolve)),
      lockManager: { trackJob: (id: string, token: string) => void tracked.push([id, token]) },
      mainLoopQueue: null,
    };
    keepNewestLockTracked(fake as unknown as Worker);
    const zombie = fake.processJob({ id: 'j' }, 'old');
    const newer = fake.processJob({ id: 'j' }, 'new');
    ends.get('old')?.();
    await zombie;
    expect(tracked).toEqual([['j', 'new']]); // BullMQ's own end of the old run untracked the id: put back
    ends.get('new')?.();
    await newer;
    expect(tracked).toEqual([['j', 'new']]); // the last run's end tracks nothing
  });

  it('wakeMainLoop adds a settled promise to the main loop queue, and does nothing before the loop runs', () => {
    const added: unknown[] = [];
    wakeMainLoop({ mainLoopQueue: { add: (p: unknown) => void added.push(p) } });
    expect(added).toHaveLength(1);
    expect(added[0]).toBeInstanceOf(Promise);
    expect(() => wakeMainLoop({ mainLoopQueue: null })).not.toThrow();
  });
});
