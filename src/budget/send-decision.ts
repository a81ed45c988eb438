/**
 * Pure hold-or-send decision of the fetcher: full batches when the budget binds, latency when it does not.
 */

export interface SendInput {
  /** Calls waiting, all priorities. */
  waiting: number;
  /** How long the fetcher has already held the current partial batch (0 when it is not holding). */
  heldMs: number;
  /** See `budgetBinds`. */
  binds: boolean;
  /** Most calls per request (50 upstream). */
  maxBatch: number;
  /** Longest hold of a partial batch while the budget binds. */
  maxHoldMs: number;
  /** Of `waiting`, calls of tails (`feed-tail`, `resource-tail`): never held for a fill. @default 0 */
  urgent?: number;
}

export type SendDecision =
  { action: 'idle' } | { action: 'send'; size: number } | { action: 'hold'; waitMs: number };

/**
 * - nothing waits: idle;
 * - a full batch waits, a tail call waits, or the budget does not bind: send now (up to `maxBatch`);
 * - the budget binds and fewer than `maxBatch` wait: hold until `maxHoldMs`, then send what there is.
 */
export function decideSend(input: SendInput): SendDecision {
  const { waiting, heldMs, binds, maxBatch, maxHoldMs } = input;
  if (waiting <= 0) return { action: 'idle' };
  if (waiting >= maxBatch || !binds || heldMs >= maxHoldMs || (input.urgent ?? 0) > 0)
    return { action: 'send', size: Math.min(waiting, maxBatch) };
  return { action: 'hold', waitMs: maxHoldMs - heldMs };
}
