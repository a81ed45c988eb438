/**
 * What a call will cost the key's serialised feed lane (issue 32; the model in `models/call-cost.ts`): pages of the
 * UNFILTERED transaction feed are worked one at a time per key, at 0.24 s + 0.09 s per hour of depth; every other call
 * (filtered listings, lookups) runs side by side and costs the request's time, not the lane's.
 *
 * Depth is measured from the feed's head as this process has seen it: the newest feed cursor or item time so far (the
 * upstream's clock is not ours: a frozen or lagging upstream must not look days deep). A feed call without a cursor
 * reads the head itself. The estimate prices batches (no request carries more serial work than its timeout allows,
 * `budget/`) and timeouts (a request's timeout follows its expected cost).
 */
import { DEFAULT_CALL_COST, feedPageMs, type CallCostModel } from '../../foundation/models/index.js';
import { parseCursor } from './cursor.js';

/** A call as priced here (the transport's `ProcedureCall`). */
interface ProcedureCall {
  procedure: string;
  input: unknown;
}

/** The one procedure whose unfiltered calls are the feed. */
export const FEED_PROCEDURE = 'transaction.getPaginatedTransactions';
/** Filters that take a feed call off the serialised lane (they reach the full history, side by side). */
const ENTITY_FILTERS = ['userId', 'itemCode', 'countryId', 'muId', 'partyId'] as const;

export interface CallCostEstimator {
  /** The serial (feed lane) ms a call is expected to cost the key; 0 for anything but an unfiltered feed page. */
  serialMs(call: ProcedureCall): number;
  /** Tells the estimator a feed time seen (an item's `createdAt`, a cursor's bound): the head is the newest. */
  observe(timeMs: number): void;
  /** Looks at one answer of `call` for feed times (the newest item of a feed page). */
  observeAnswer(call: ProcedureCall, data: unknown): void;
}

/** True when `call` is a page of the unfiltered transaction feed. */
export function isFeedCall(call: ProcedureCall): boolean {
  if (call.procedure !== FEED_PROCEDURE) return false;
  const input = call.input;
  if (typeof input !== 'object' || input === null) return true;
  const o = input as Record<string, unknown>;
  return !ENTITY_FILTERS.some((k) => o[k] !== undefined && o[k] !== null);
}

function cursorTime(call: ProcedureCall): number | undefined {
  const input = call.input as Record<string, unknown> | null | undefined;
  const cursor = input?.['cursor'];
  if (typeof cursor !== 'string' || cursor === '') return undefined;
  try {
    const t = parseCursor(cursor).timeMs;
    return Number.isFinite(t) ? t : undefined;
  } catch {
    return undefined;
  }
}

export function createCallCostEstimator(model: CallCostModel = DEFAULT_CALL_COST): CallCostEstimator {
  let head = Number.NEGATIVE_INFINITY;
  const observe = (t: number): void => {
    if (Number.isFinite(t) && t > head) head = t;
  };
  return {
    serialMs(call) {
      if (!isFeedCall(call)) return 0;
      const bound = cursorTime(call);
      if (bound === undefined) return feedPageMs(0, model);
      observe(bound);
      return feedPageMs(head - bound, model);
    },
    observe,
    observeAnswer(call, data) {
      if (!isFeedCall(call) || typeof data !== 'object' || data === null) return;
      const items = (data as { items?: unknown }).items;
      if (!Array.isArray(items) || items.length === 0) return;
      const first = items[0] as Record<string, unknown> | undefined;
      const created = first?.['createdAt'];
      if (typeof created === 'string') observe(Date.parse(created));
    },
  };
}

/**
 * A request's timeout: the base (`timeoutMs`, what a cheap request may take) plus the serial work it waits for
 * (the lane's backlog ahead of it and its own feed calls) with 50 % headroom. Nothing abandoned that the key still
 * works through (the service does not stop a request its client dropped).
 */
export function requestTimeoutMs(baseMs: number, serialAheadMs: number, serialOwnMs: number): number {
  return Math.ceil(baseMs + 1.5 * (Math.max(0, serialAheadMs) + Math.max(0, serialOwnMs)));
}
