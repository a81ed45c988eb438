/**
 * The async context that carries a caller's priority to the client without threading it through every reader:
 * `runWithPriority('feed-tail', () => processSlice(job))`. The priorities themselves are in `models/call-priority.ts`.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { priorityRank, type CallPriority } from '../../foundation/models/index.js';

export { CALL_PRIORITIES, priorityRank, queuePriority } from '../../foundation/models/index.js';
export type { CallPriority } from '../../foundation/models/index.js';

const storage = new AsyncLocalStorage<CallPriority>();

/** Runs `fn` so that every upstream call it makes (awaited or not) carries `priority`. */
export function runWithPriority<T>(priority: CallPriority, fn: () => T): T {
  priorityRank(priority);
  return storage.run(priority, fn);
}

/** The priority of the current async context, if a caller set one. */
export function currentPriority(): CallPriority | undefined {
  return storage.getStore();
}
