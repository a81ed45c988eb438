/**
 * Pure test of whether the WORK binds the key: do the calls waiting at the fetcher plus the calls the work known to
 * be coming will make (slices queued and running across the deployment) need more requests than the key will grant
 * from now to the end of the next window? Only then is a token worth a full batch. Otherwise even one call per
 * request fits in the tokens, so the fetcher sends whatever waits at once and the work runs at the upstream's
 * latency (issue 23: `npm run demo` spent 54 of the 500 requests a minute it had, held 3 s per POST, 116 s).
 */

export interface WorkBindsInput {
  /** Calls waiting at the fetcher, all priorities. */
  waiting: number;
  /**
   * Calls expected from the work known to be coming (see `createWorkEstimator`). `undefined`: nothing is known of
   * the work (a budget without an estimator), and the work is taken to bind whenever the capacity test says so.
   */
  coming: number | undefined;
  /** Requests the key will grant from now to the end of the next window (see `tokensAhead`); `undefined`: unknown. */
  tokensAhead: number | undefined;
}

/**
 * `true` when the work needs more requests than the key will grant, even with one call per request; so a partial
 * batch is worth holding. An unknown budget never binds (one request at a time goes until an answer tells the
 * limit); unknown work binds (the capacity test alone decides, as before the estimator).
 */
export function workBinds(input: WorkBindsInput): boolean {
  const { waiting, coming, tokensAhead } = input;
  if (tokensAhead === undefined) return false;
  if (coming === undefined) return true;
  return Math.max(0, waiting) + Math.max(0, coming) > tokensAhead;
}
