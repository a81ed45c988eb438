/**
 * `createQueuedSlices(options)`: the work the deployment has left, read from the BullMQ slice queue (slices waiting,
 * prioritized, delayed or running in any process), as the shared budget's {@link WorkSource}: the fetcher
 * holds a partial batch only while this work needs more requests than the key will grant (src/budget/work-binds.ts).
 */
import { Queue, type ConnectionOptions } from 'bullmq';
import type { WorkSource } from '../budget/work-estimate.js';
import { DEFAULT_QUEUE_PREFIX, QUEUE_NAMES } from './queue-names.js';

export interface QueuedSlicesOptions {
  /** The Redis connection of the queue (an ioredis client is shared, not closed). Required. */
  connection: ConnectionOptions;
  /** BullMQ key prefix. @default 'gamedata-bull' */
  prefix?: string | undefined;
}

/** The slice queue's counts; `close()` closes the queue handle (not a shared connection). */
export function createQueuedSlices(options: QueuedSlicesOptions): Required<WorkSource> {
  let queue: Queue | undefined;
  return {
    async countSlices() {
      if (queue === undefined) {
        queue = new Queue(QUEUE_NAMES.slices, {
          connection: options.connection,
          prefix: options.prefix ?? DEFAULT_QUEUE_PREFIX,
        });
        // Connection errors are the shared client's owner's to report: without a listener, BullMQ prints each
        // reconnect attempt with its stack (issue 25: traces under `backfill --wait` during a Redis restart;
        // test/integration/cli/quiet-clients.test.ts).
        queue.on('error', () => undefined);
      }
      const c = await queue.getJobCounts('waiting', 'prioritized', 'delayed', 'active');
      const running = c['active'] ?? 0;
      return {
        pending: (c['waiting'] ?? 0) + (c['prioritized'] ?? 0) + (c['delayed'] ?? 0) + running,
        running,
      };
    },
    async close() {
      await queue?.close();
    },
  };
}
