/**
 * Call priorities, highest first: what a call is for decides its place at the shared budget (`budget/`) and a slice's
 * place in the queue (`pipeline/planner/`, `pipeline/queue/`). Pure, so both read it from here; the async context that carries a
 * caller's priority to the client (`runWithPriority`) stays in `budget/priority.ts`.
 */
import { ConfigError } from '../errors/index.js';

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

/**
 * BullMQ job options that order a queue by call priority (`feed-tail` first): BullMQ takes a lower `priority`
 * first. Slices of tails so overtake the slices of a backfill already queued; no priority, no option.
 */
export function queuePriority(priority: CallPriority | undefined): { priority?: number } {
  return priority === undefined ? {} : { priority: priorityRank(priority) + 1 };
}
