/**
 * Pure test of how full a batch the WORK asks for (issue 23). The capacity test (`budgetBindsAhead`) asks whether
 * full speed could spend the key's tokens, which against a fast upstream is always true: `npm run demo` held every
 * partial POST for 3 s and took 116 s for 54 of the 500 requests a minute it had. This asks the work instead: the
 * calls waiting at the fetcher plus the calls the work known to be coming will make (slices queued and running across
 * the deployment, see `createWorkEstimator`), against the requests the key will grant.
 *
 * - More calls than the key grants from now to the end of the next window (`tokensAhead`, one call per request being
 *   the worst case): the work binds, a token is worth a full batch (`maxBatch`).
 * - Otherwise a batch need carry only its share of the work over the tokens left in this window,
 *   `ceil(calls / tokensLeft)`: 1 for a small job (everything goes at once, at the upstream's latency), a few calls
 *   at the end of a big backfill. A batch that carries at least its share keeps the rest within the tokens left:
 *   `(calls - size) / (tokensLeft - 1) <= calls / tokensLeft` whenever `size >= calls / tokensLeft`.
 */

export interface WorkFillInput {
  /** Calls waiting at the fetcher, all priorities. */
  waiting: number;
  /**
   * Calls expected from the work known to be coming. `undefined`: nothing is known of the work (a budget without an
   * estimator, or its count failed): the work is taken to bind, so the capacity test alone decides, as before.
   */
  coming: number | undefined;
  /** Requests the key will still grant in this window (above the reserve); `undefined`: unknown. */
  tokensLeft: number | undefined;
  /** Requests the key will grant from now to the end of the next window (see `tokensAhead`); `undefined`: unknown. */
  tokensAhead: number | undefined;
  /** Most calls per request (50 upstream). */
  maxBatch: number;
}

/**
 * The smallest batch worth a token now, in `[1, maxBatch]`: `maxBatch` when the work binds, 1 when the budget is
 * unknown (one request at a time goes until an answer tells the limit), else the work's share per token left.
 */
export function workFill(input: WorkFillInput): number {
  const { waiting, coming, tokensLeft, tokensAhead, maxBatch } = input;
  if (tokensAhead === undefined || tokensLeft === undefined) return 1;
  if (coming === undefined) return maxBatch;
  const calls = Math.max(0, waiting) + Math.max(0, coming);
  if (calls > tokensAhead) return maxBatch;
  return Math.min(maxBatch, Math.max(1, Math.ceil(calls / Math.max(1, tokensLeft))));
}

/** Whether the work binds the key: more calls than the key grants to the end of the next window. */
export function workBinds(input: Omit<WorkFillInput, 'maxBatch' | 'tokensLeft'>): boolean {
  const { waiting, coming, tokensAhead } = input;
  if (tokensAhead === undefined) return false;
  if (coming === undefined) return true;
  return Math.max(0, waiting) + Math.max(0, coming) > tokensAhead;
}
