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
import type { ResourceName } from '../models/resources.js';
import type { TimeRange } from '../slicing/index.js';
import type { PartitionSummary, WalkFilters } from './job-types.js';
import { proveCoverage, type CoverageProof, type ProofRow } from './prove-coverage.js';
import { readRangeRows, type RangePage, type ReadRangeRowsOptions } from './read-range-rows.js';
import { DEFAULT_CALL_COST, feedPageMs, type CallCostModel } from '../models/call-cost.js';

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

/** `pagesPerPart`: @default 8 (see `readRangeRows`). */
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
    // Parts of 8 pages: every part ends on a partial page; the walks' window pieces are read side by side.
    pagesPerPart: options.pagesPerPart ?? 8,
  };
  const unidentified = { n: 0 };
  const head = await readFeedHead(read, window, options.feedBudgetMs ?? 15_000, options.cost, (item) =>
    keepRow(item, unidentified),
  );
  const proven = head.window;
  const rowsOf = (filters: WalkFilters) =>
    readRangeRows(
      (range, cursor) => read('transactions', filters, range, cursor),
      proven,
      (item) => keepRow(item, unidentified),
      rangeOptions,
    );
  const walks = proven.start < proven.end ? await Promise.all(values.map((v) => rowsOf({ [key]: v }))) : [];
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
  window: TimeRange;
  pages: number;
  feedMs: number;
}

/**
 * Reads the unfiltered feed over `window` newest first, one page at a time, while the next page's estimated serial
 * cost keeps the total within `budgetMs`. Stopped early, the window proven starts 1 ms above the oldest row read (rows
 * of that millisecond may continue on the next page: they are left out, from the feed's side and the walks' alike).
 */
async function readFeedHead(
  read: ReadListingPages,
  window: TimeRange,
  budgetMs: number,
  cost: CallCostModel = DEFAULT_CALL_COST,
  keep: (item: Record<string, unknown>) => KeptRow | undefined,
): Promise<FeedHead> {
  const rows: KeptRow[] = [];
  let pages = 0;
  let feedMs = 0;
  let oldest = window.end; // the bound the next page starts below
  let start = window.start;
  for await (const page of read('transactions', {}, window)) {
    pages++;
    feedMs += feedPageMs(window.end - oldest, cost);
    for (const item of page.items) {
      const row = keep(item);
      if (row !== undefined) rows.push(row);
      const created = item['createdAt'];
      const t = typeof created === 'string' ? Date.parse(created) : Number.NaN;
      if (Number.isFinite(t)) oldest = Math.min(oldest, t);
    }
    if (page.cursor === null || page.cursor === undefined) break; // the window is read whole
    if (feedMs + feedPageMs(window.end - oldest, cost) > budgetMs) {
      start = Math.min(window.end, Math.max(window.start, oldest + 1));
      break;
    }
  }
  const kept = start === window.start ? rows : rows.filter((r) => !(r.time < start));
  return { rows: kept, window: { start, end: window.end }, pages, feedMs };
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
