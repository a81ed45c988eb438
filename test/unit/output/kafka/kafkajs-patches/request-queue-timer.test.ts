import { describe, expect, it } from 'vitest';
import { freshKafkajsModule } from '../../../../helpers/fresh-kafkajs-module.js';
import { schedulingOnlyWhenPending } from '../../../../../src/output/kafka/kafkajs-patches/request-queue-timer.js';

describe("kafkajs' request queue timer", () => {
  it('kafkajs 2.2.4 sets a timer with nothing pending (the bug the patch is for)', () => {
    // A fresh copy of kafkajs' module, unpatched whatever this process installed.
    const RequestQueue = freshKafkajsModule<{
      prototype: { scheduleCheckPendingRequests: (this: unknown) => void };
    }>('kafkajs/src/network/requestQueue/index.js');
    const queue = { pending: [], throttledUntil: -1, throttleCheckTimeoutId: null as unknown };
    RequestQueue.prototype.scheduleCheckPendingRequests.call(queue);
    expect(queue.throttleCheckTimeoutId).not.toBeNull();
    clearTimeout(queue.throttleCheckTimeoutId as NodeJS.Timeout);
    // Patched: nothing pending, no timer.
    const idle = { pending: [], throttledUntil: -1, throttleCheckTimeoutId: null as unknown };
    schedulingOnlyWhenPending(RequestQueue.prototype.scheduleCheckPendingRequests).call(idle);
    expect(idle.throttleCheckTimeoutId).toBeNull();
  });

  it('schedules only while requests are pending', () => {
    const calls: number[] = [];
    const schedule = schedulingOnlyWhenPending(function (this: { pending: unknown[] }) {
      calls.push(this.pending.length);
    });
    schedule.call({ pending: [] });
    schedule.call({ pending: [1, 2] });
    schedule.call({ pending: [] });
    expect(calls).toEqual([2]);
  });
});
