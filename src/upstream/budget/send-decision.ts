/**
 * Pure hold-or-send decision of the fetcher: batches as full as the work asks for (`minFill`, see `workFill`) when the
 * budget binds, latency when it does not.
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
  /**
   * While the budget binds, the smallest batch worth sending without a hold (`workFill`: the work's share per token
   * left; `maxBatch` when the work binds the key). @default maxBatch
   */
  minFill?: number;
  /**
   * While the budget binds, how long a partial batch that already has its `minFill` still waits for calls arriving
   * right behind it (slices answered by one POST come back for their next page within milliseconds of each other:
   * without it, issue 11's acceptance run sent three single-call POSTs in 50 ms). A fraction of the latency, so a
   * fast upstream is not slowed. Tail calls never wait. @default 0
   */
  gatherMs?: number;
  /**
   * No call can join before an answer comes: every slice running across the deployment has a call waiting and no
   * request is in flight. A hold then only costs time, so the batch goes. @default false
   */
  saturated?: boolean;
}

export type SendDecision =
  { action: 'idle' } | { action: 'send'; size: number } | { action: 'hold'; waitMs: number };

/**
 * - nothing waits: idle;
 * - a full batch waits, a tail call waits, no more calls can come (`saturated`), or the budget does not bind: send
 *   now (up to `maxBatch`);
 * - the budget binds and fewer than `minFill` wait: hold until `maxHoldMs`, then send what there is;
 * - the budget binds and `minFill` waits but not a full batch: hold until `gatherMs`, then send.
 */
export function decideSend(input: SendInput): SendDecision {
  const { waiting, heldMs, binds, maxBatch, maxHoldMs } = input;
  if (waiting <= 0) return { action: 'idle' };
  const fill = Math.min(maxBatch, Math.max(1, input.minFill ?? maxBatch));
  if (
    waiting >= maxBatch ||
    !binds ||
    heldMs >= maxHoldMs ||
    (input.urgent ?? 0) > 0 ||
    input.saturated === true
  )
    return { action: 'send', size: Math.min(waiting, maxBatch) };
  if (waiting < fill) return { action: 'hold', waitMs: maxHoldMs - heldMs };
  const gatherMs = Math.min(maxHoldMs, input.gatherMs ?? 0);
  if (heldMs < gatherMs) return { action: 'hold', waitMs: gatherMs - heldMs };
  return { action: 'send', size: Math.min(waiting, maxBatch) };
}
