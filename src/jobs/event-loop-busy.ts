/**
 * How busy the worker's event loop was since the last read, for slot sizing: Node's event-loop utilization (the
 * share of the time the loop spent outside its idle wait, `performance.eventLoopUtilization`). A worker whose CPU
 * binds (or that the box's other processes crowd out: the brokers, Redis, other workers) shows it here, and more
 * slots would only add to it: its slices' locks would be renewed late and lost (`decideConcurrency`, reason `busy`).
 */
import { performance, type EventLoopUtilization } from 'node:perf_hooks';

export interface EventLoopBusy {
  /** The loop's utilization since the last read (or the start), 0..1. */
  read(): number;
}

export function startEventLoopBusy(): EventLoopBusy {
  let last: EventLoopUtilization = performance.eventLoopUtilization();
  return {
    read() {
      const now = performance.eventLoopUtilization();
      const share = performance.eventLoopUtilization(now, last).utilization;
      last = now;
      return Number.isFinite(share) ? Math.min(1, Math.max(0, share)) : 0;
    },
  };
}
