// src/pipeline/queue/slot-sizing.ts wakes BullMQ's main loop through the Worker's private `mainLoopQueue` (an AsyncFifoQueue:
// adding a settled promise makes the loop fetch again, as BullMQ's own resume() does). A private field may change
// in any release, so bullmq is pinned exactly, and this fails loudly when what is installed is not what the hook
// was written for.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { AsyncFifoQueue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';

/** The bullmq release `wakeMainLoop` (src/pipeline/queue/slot-sizing.ts) was written for. */
const BULLMQ_HOOKS_WRITTEN_FOR = '6.7.0';

describe("bullmq's private main-loop queue (slot-sizing's wake)", () => {
  it('bullmq is pinned exactly to the release the hook was written for, and that release is installed', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
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
