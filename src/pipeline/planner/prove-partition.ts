/**
 * The reads behind the partition proof (issue 23; docs/guarantees.md, "Full history: what is proven, what is
 * assumed"): the unfiltered transaction feed over a window where it is complete, and the partition's walks (one per
 * value of the key, e.g. per `countryId`) over the same window. `proveCoverage` then says which transaction types the
 * walks partition. The window's rows of each walk are kept (time and type), so the planner can cut the walk's newest
 * part exactly between rows.
 *
 * The feed is the expensive side (issue 32): the service serialises unfiltered feed pages per key and a page costs
 * more the deeper it lies (0.24 s at the head, ~2.3 s at 24 h; `models/call-cost.ts`), so proving the whole 72 h
 * window costs ~22 k serial pages, a day of the key's time at the real volume. The proof therefore reads the feed
 * from the head down, ONE page at a time (more at once would only queue on the key's lane and time out), until the
 * next page would take its serial cost past `feedBudgetMs`: the window is the newest hours that budget reaches (all
 * of the given window at a small scale, minutes at the real volume). The walks then read that window (filtered pages,
 * cheap and side by side, cut into parts read at once).
 */
import type { ResourceName } from '../../foundation/models/index.js';
import type { TimeRange } from '../../foundation/slicing/index.js';
import type { PartitionSummary, WalkFilters } from '../contract/job-types.js';
import { proveCoverage, type CoverageProof, type ProofRow } from './prove-coverage.js';
import { readRangeRows, type RangePage, type ReadRangeRowsOptions } from './read-range-rows.js';
import {
  DEFAULT_CALL_COST,
  feedPageMs,
  feedWalkMs,
  type CallCostModel,
} from '../../foundation/models/index.js';

/** Reads the pages of one listing over a range (the planner source's `readPages`). */
export type ReadListingPages = (
  resource: ResourceName,
  filters: WalkFilters,
  range: TimeRange,
  cursor?: string,
) => AsyncIterable<RangePage>;

/** A walk row as the plan needs it: sort time and type. */
export interface WalkRow {
  time: number;
  type: string;
}

/** `pageSize` and `pagesPerPart`: @default `DEFAULT_READ_RANGE_ROWS_OPTIONS` (see `readRangeRows`). */
export interface ProvePartitionOptions extends Pick<ReadRangeRowsOptions, 'pageSize' | 'pagesPerPart'> {
  /** The filter the walks are partitioned by. @default 'countryId' */
  key?: string;
  /**
   * The most serialised feed time the proof may spend (the estimate of `models/call-cost.ts`, summed over its feed
   * pages): the window shrinks to the newest hours this reaches. @default 15 000 (15 s of the key's feed lane)
   */
  feedBudgetMs?: number;
  /** The cost model pricing feed pages. @default DEFAULT_CALL_COST */
  cost?: CallCostModel;
  /** Types the upstream may have beyond the window's (absent ones cannot be proven). @default [] */
  knownTypes?: readonly string[];
}

/** What the proof read and found. */
export interface PartitionProof {
  key: string;
  /** The window proven: the newest part of the window asked for that the feed budget reached. */
  window: TimeRange;
  /** The estimated serialised feed time the proof spent (ms). */
  feedMs: number;
  proof: CoverageProof;
  /** Each walk's rows in the window (by value of the key), for the plan. */
  walkRows: Map<string, WalkRow[]>;
  /** Page reads: the feed's and the walks'. */
  pages: { feed: number; walks: number };
  /** Rows (feed or walk) without a usable `_id` or `transactionType` (malformed): left out of the proof. */
  unidentified: number;
}

/** What the proof keeps of a row: id, type and sort time (a few dozen bytes; the window holds millions). */
interface KeptRow extends ProofRow {
  time: number;
}

/** The kept row of an item; undefined (counted) when it has no `_id` to match or no type to filter on. */
function keepRow(item: Record<string, unknown>, unidentified: { n: number }): KeptRow | undefined {
  const id = item['_id'];
  const type = item['transactionType'];
  if (typeof id !== 'string' || id === '' || typeof type !== 'string' || type === '') {
    unidentified.n++;
    return undefined;
  }
  const created = item['createdAt'];
  return { id, type, time: typeof created === 'string' ? Date.parse(created) : Number.NaN };
}

/**
 * Reads the feed and one walk per value over `window` and proves which types the walks partition.
 * @param values The key's values (every country id): one walk each.
 */
export async function provePartition(
  read: ReadListingPages,
  values: readonly string[],
  window: TimeRange,
  options: ProvePartitionOptions = {},
): Promise<PartitionProof> {
  const key = options.key ?? 'countryId';
  const rangeOptions = {
    ...(options.pageSize === undefined ? {} : { pageSize: options.pageSize }),
    ...(options.pagesPerPart === undefined ? {} : { pagesPerPart: options.pagesPerPart }),
  };
  const unidentified = { n: 0 };
  const keep = (item: Record<string, unknown>): KeptRow | undefined => keepRow(item, unidentified);
  const rowsOf = (filters: WalkFilters, range: TimeRange) =>
    readRangeRows((r, cursor) => read('transactions', filters, r, cursor), range, keep, rangeOptions);
  // The feed's head page says how deep the budget reaches; then the rest of the feed and the walks at once.
  const planned = await planFeedWindow(read, window, options.feedBudgetMs ?? 15_000, options.cost, keep);
  const proven = planned.window;
  const [head, walks] = await Promise.all([
    planned.rest(),
    proven.start < proven.end
      ? Promise.all(values.map((v) => rowsOf({ [key]: v }, proven)))
      : Promise.resolve([]),
  ]);
  const proof = proveCoverage(
    head.rows,
    walks.map((w) => w.rows),
    options.knownTypes ?? [],
  );
  const walkRows = new Map<string, WalkRow[]>();
  values.forEach((v, i) => walkRows.set(v, walks[i]?.rows ?? []));
  return {
    key,
    window: proven,
    feedMs: head.feedMs,
    proof,
    walkRows,
    pages: { feed: head.pages, walks: walks.reduce((n, w) => n + w.pages, 0) },
    unidentified: unidentified.n,
  };
}

/** The feed's newest rows within a serial-time budget, and the window they cover completely. */
interface FeedHead {
  rows: KeptRow[];
  pages: number;
  feedMs: number;
}

/**
 * Reads the unfiltered feed's head page over `window`, and from its rows' rate plans how deep `budgetMs` of serial
 * feed time reaches (pages at 0.24 s + 0.09 s per hour of depth, `models/call-cost.ts`): the window proven is the
 * newest part of `window` that many pages cover. `rest()` reads the feed below the head page over that window, one
 * page after the other (the walks read the window meanwhile), rows at the head page's oldest millisecond read again
 * and kept once. The estimate holds while the rate holds: a denser past
 * reads more pages than planned (the pages read are priced in `feedMs`).
 */
async function planFeedWindow(
  read: ReadListingPages,
  window: TimeRange,
  budgetMs: number,
  cost: CallCostModel = DEFAULT_CALL_COST,
  keep: (item: Record<string, unknown>) => KeptRow | undefined,
): Promise<{ window: TimeRange; rest: () => Promise<FeedHead> }> {
  let first: RangePage | undefined;
  for await (const page of read('transactions', {}, window)) {
    first = page;
    break;
  }
  const items = first?.items ?? [];
  const headRows = items.map(keep).filter((r): r is KeptRow => r !== undefined);
  const headMs = feedPageMs(0, cost);
  const times = items
    .map((i) => (typeof i['createdAt'] === 'string' ? Date.parse(i['createdAt']) : Number.NaN))
    .filter(Number.isFinite);
  const whole = first?.cursor === null || first?.cursor === undefined || times.length === 0;
  if (whole)
    return { window, rest: () => Promise.resolve({ rows: headRows, pages: first ? 1 : 0, feedMs: headMs }) };
  const oldest = Math.min(...times);
  const msPerPage = Math.max(1, window.end - oldest) * (100 / Math.max(1, items.length));
  // Pages below the head page the budget pays for, until the window's start.
  let pages = 0;
  while (
    oldest - pages * msPerPage > window.start &&
    headMs + feedWalkMs(pages + 1, window.end - oldest, msPerPage, cost) <= budgetMs
  )
    pages++;
  // No page more: the head page's own span, less its oldest millisecond (its ties may continue below).
  const start =
    pages === 0
      ? Math.min(window.end, oldest + 1)
      : Math.max(window.start, Math.floor(oldest - pages * msPerPage));
  return {
    window: { start, end: window.end },
    rest: async () => {
      if (pages === 0 || start > oldest)
        return { rows: headRows.filter((r) => !(r.time < start)), pages: 1, feedMs: headMs };
      const below = await readRangeRows(
        (r, cursor) => read('transactions', {}, r, cursor),
        { start, end: oldest + 1 },
        keep,
        // One chain: parts read at once would each end on a partial page of their own, more serial pages for the
        // same rows; the chain's requests overlap the walks', which run meanwhile.
        { pagesPerPart: Number.POSITIVE_INFINITY },
      );
      const seen = new Set(headRows.map((r) => r.id));
      const rows = [...headRows, ...below.rows.filter((r) => !seen.has(r.id))];
      return {
        rows,
        pages: 1 + below.pages,
        feedMs: headMs + feedWalkMs(below.pages, window.end - oldest, msPerPage, cost),
      };
    },
  };
}

/** The run data's summary of a proof. */
export function summarizePartition(p: PartitionProof): PartitionSummary {
  const { proof } = p;
  return {
    key: p.key,
    walks: p.walkRows.size,
    window: { start: p.window.start, end: p.window.end },
    feedSeconds: Math.round(p.feedMs) / 1000,
    provenTypes: proof.provenTypes,
    unprovenTypes: proof.unprovenTypes,
    rows: {
      covered: proof.covered,
      uncovered: proof.uncovered,
      repeated: proof.repeated,
      foreign: proof.foreign,
    },
    byType: proof.byType,
    pages: p.pages.feed + p.pages.walks,
    unidentified: p.unidentified,
  };
}
