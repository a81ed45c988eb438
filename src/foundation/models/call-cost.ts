/**
 * What a call costs the upstream service, the key's scarce time (upstream-facts.md, "What a call costs the service",
 * measured by the largest public collector): a request ~0.6 s whatever it carries; a filtered listing page ~0.27 s at
 * any depth, side by side with the request's others (50 in one request ~1.3 s); a page of the UNFILTERED transaction
 * feed 0.24 s at the head plus ~0.09 s per hour of depth, and those the service SERIALISES per key, whatever the
 * request shape, and works through even when the client has gone. So a plan pays the feed in serial seconds and the
 * rest in requests: the planner, the client's timeouts and batches and the budget's pacing all price calls with this
 * one model. Pure.
 */

/** The cost model's parameters, in ms. */
export interface CallCostModel {
  /** One request, whatever it carries. @default 600 */
  requestMs: number;
  /** A filtered listing page (side by side with the request's other calls). @default 270 */
  filteredMs: number;
  /** An unfiltered feed page at the head. @default 240 */
  feedHeadMs: number;
  /** An unfiltered feed page: more per hour of depth below the head. @default 90 */
  feedPerHourMs: number;
}

export const DEFAULT_CALL_COST: Readonly<CallCostModel> = {
  requestMs: 600,
  filteredMs: 270,
  feedHeadMs: 240,
  feedPerHourMs: 90,
};

const HOUR = 3_600_000;
/** The feed holds 72 h; a bound below it reads an empty page, priced as the window's deepest (the simulator too). */
export const FEED_DEPTH_CAP_MS = 72 * HOUR;

/** The serialised cost of one unfiltered feed page whose bound lies `depthMs` below the head. */
export function feedPageMs(depthMs: number, model: CallCostModel = DEFAULT_CALL_COST): number {
  const depth = Math.min(FEED_DEPTH_CAP_MS, Math.max(0, depthMs));
  return model.feedHeadMs + (model.feedPerHourMs * depth) / HOUR;
}

/**
 * The serialised cost of reading `pages` consecutive feed pages newest first from `fromDepthMs` down, each page
 * `msPerPage` of history deep (rows per page / rows per ms): the sum of their depths' costs.
 */
export function feedWalkMs(
  pages: number,
  fromDepthMs: number,
  msPerPage: number,
  model: CallCostModel = DEFAULT_CALL_COST,
): number {
  if (!(pages > 0)) return 0;
  // Arithmetic series: depth of page k is fromDepth + k x msPerPage.
  const meanDepth = fromDepthMs + (msPerPage * (pages - 1)) / 2;
  return pages * feedPageMs(meanDepth, model);
}
