/**
 * `createQueuedSlices(options)`: the work the deployment has left, read from the BullMQ slice queue (slices waiting,
 * prioritized, delayed or running in any process), as the shared budget's {@link WorkSource}: the fetcher holds a
 * partial batch only while this work needs more requests than the key will grant (src/upstream/budget/work-binds.ts). A
 * sample of the pending slices' plans (`expectedPages`) tells how many calls a slice makes.
 */
import { Queue, type ConnectionOptions } from 'bullmq';
import type { SliceCounts, WorkSource } from '../../upstream/budget/index.js';
import type { SliceJobData } from '../contract/job-types.js';
import { DEFAULT_QUEUE_PREFIX, QUEUE_NAMES } from '../contract/queue-names.js';

export interface QueuedSlicesOptions {
  /** The Redis connection of the queue (an ioredis client is shared, not closed). Required. */
  connection: ConnectionOptions;
  /** BullMQ key prefix. @default 'gamedata-bull' */
  prefix?: string | undefined;
  /** Pending slices whose plans are read (the oldest running, then the next to run). 0 = none. @default 50 */
  sample?: number | undefined;
  /** How long a sample is reused, ms (the counts are read every time). @default 1000 */
  sampleEveryMs?: number | undefined;
  /** Rows per page (a users page also fetches one profile per row). @default 100 */
  pageSize?: number | undefined;
  /** Injected clock. @default Date.now */
  now?: (() => number) | undefined;
}

export const DEFAULT_QUEUED_SLICES_OPTIONS = { sample: 50, sampleEveryMs: 1000, pageSize: 100 } as const;

/** Calls a slice's plan expects: its pages, and for users one profile per row besides. `undefined`: not planned. */
export function expectedCalls(
  data: Pick<SliceJobData, 'resource' | 'expectedPages'>,
  pageSize: number,
): number | undefined {
  if (data.expectedPages === undefined || !(data.expectedPages >= 0)) return undefined;
  return data.expectedPages * (data.resource === 'users' ? 1 + pageSize : 1);
}

/** The slice queue's counts (and a sample of plans); `close()` closes the queue handle (not a shared connection). */
export function createQueuedSlices(options: QueuedSlicesOptions): Required<WorkSource> {
  const d = DEFAULT_QUEUED_SLICES_OPTIONS;
  const sampleSize = options.sample ?? d.sample;
  const sampleEveryMs = options.sampleEveryMs ?? d.sampleEveryMs;
  const pageSize = options.pageSize ?? d.pageSize;
  const now = options.now ?? Date.now;
  let queue: Queue | undefined;
  let sample: { at: number; value: SliceCounts['sample'] } | undefined;

  async function readSample(q: Queue): Promise<SliceCounts['sample']> {
    if (sampleSize <= 0) return undefined;
    if (sample !== undefined && now() - sample.at < sampleEveryMs) return sample.value;
    const jobs = (await q.getJobs(['active', 'prioritized', 'waiting'], 0, sampleSize - 1, true)).slice(
      0,
      sampleSize,
    );
    let known = 0;
    let calls = 0;
    for (const job of jobs) {
      const c = expectedCalls((job?.data ?? {}) as SliceJobData, pageSize);
      if (c === undefined) continue;
      known++;
      calls += c;
    }
    const value = { slices: jobs.length, known, calls };
    sample = { at: now(), value };
    return value;
  }

  return {
    async countSlices() {
      if (queue === undefined) {
        queue = new Queue(QUEUE_NAMES.slices, {
          connection: options.connection,
          prefix: options.prefix ?? DEFAULT_QUEUE_PREFIX,
        });
        // Connection errors are the shared client's owner's to report: without a listener, BullMQ prints each
        // reconnect attempt with its stack (issue 25: traces under `backfill --wait` during a Redis restart;
        // test/integration/app/cli/quiet-clients.test.ts).
        queue.on('error', () => undefined);
      }
      const c = await queue.getJobCounts('waiting', 'prioritized', 'delayed', 'active');
      const running = c['active'] ?? 0;
      const pending = (c['waiting'] ?? 0) + (c['prioritized'] ?? 0) + (c['delayed'] ?? 0) + running;
      const s = pending > 0 ? await readSample(queue) : undefined;
      return { pending, running, ...(s === undefined ? {} : { sample: s }) };
    },
    async close() {
      await queue?.close();
    },
  };
}
