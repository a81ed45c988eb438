/**
 * kafkajs 2.2.4 keeps a 1 ms timer running on every broker connection for as long as the connection lives.
 * `RequestQueue.checkPendingRequests` runs after every answer and ends by calling `scheduleCheckPendingRequests`,
 * which, with nothing pending and no broker throttle (`throttledUntil` = -1), computes a delay of `-1 - Date.now()`
 * and sets a timer with it: Node makes that 1 ms (Node 24 warns `TimeoutNegativeWarning: -1795630108114 is a
 * negative number`), the timer calls `checkPendingRequests`, which schedules again. An idle worker spent ~35 ms of
 * CPU a second on these timers (a producer, the admin and the checkpoint reader each hold connections), and a busy one
 * pays them between its requests.
 *
 * The patch schedules only while requests are pending: `push` schedules when it queues one (pending is then not
 * empty), an answer or a timeout checks the queue at once as before, and a broker throttle with requests pending is
 * waited for as before. With nothing pending there is nothing for a timer to do.
 */
import { patchKafkajsMethod } from './patch-kafkajs.js';

interface RequestQueueLike {
  pending: unknown[];
}
type Schedule = (this: RequestQueueLike) => void;

/** `original` (kafkajs' `scheduleCheckPendingRequests`) that sets no timer while nothing is pending. */
export function schedulingOnlyWhenPending(original: Schedule): Schedule {
  return function (this: RequestQueueLike): void {
    if (this.pending.length === 0) return;
    original.call(this);
  };
}

/** Installs the patch in this process's kafkajs (idempotent). */
export function installRequestQueueTimerFix(): void {
  patchKafkajsMethod<Schedule>(
    'kafkajs/src/network/requestQueue/index.js',
    'scheduleCheckPendingRequests',
    'gamedata.requestQueueIdleTimer',
    'the idle timer fix',
    schedulingOnlyWhenPending,
  );
}
