/**
 * Call priorities of the shared budget, highest first, and the async context that carries a caller's priority to
 * the client without threading it through every reader: `runWithPriority('feed-tail', () => processSlice(job))`.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { ConfigError } from '../errors.js';

/**
 * Highest first: tails of append-only feeds (transactions, donations), tails of changing resources (users,
 * parties, articles, elections), backfills, rescans.
 */
export const CALL_PRIORITIES = ['feed-tail', 'resource-tail', 'backfill', 'rescan'] as const;
export type CallPriority = (typeof CALL_PRIORITIES)[number];

/** 0 for the highest priority. @throws ConfigError on an unknown name. */
export function priorityRank(priority: CallPriority): number {
  const rank = CALL_PRIORITIES.indexOf(priority);
  if (rank < 0)
    throw new ConfigError(
      `priority must be one of ${CALL_PRIORITIES.join(', ')}, got ${JSON.stringify(priority)}`,
      ['priority'],
    );
  return rank;
}

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

/**
 * BullMQ job options that order a queue by call priority (`feed-tail` first): BullMQ takes a lower `priority`
 * first. Slices of tails so overtake the slices of a backfill already queued; no priority, no option.
 */
export function queuePriority(priority: CallPriority | undefined): { priority?: number } {
  return priority === undefined ? {} : { priority: priorityRank(priority) + 1 };
}
