/**
 * The reads behind the partition proof (issue 23; docs/ARCHITECTURE.md, "Upstream budget"): the unfiltered
 * transaction feed over a window where it is complete, and the partition's walks (one per value of the key, e.g. per
 * `countryId`) over the same window, every piece cut while read (`readRangeRows`). `proveCoverage` then says which
 * transaction types the walks partition. The window's rows of each walk are kept (time and type), so the planner
 * can cut the walk's newest part exactly between rows.
 */
import type { ResourceName } from '../models/resources.js';
import type { TimeRange } from '../slicing/index.js';
import type { PartitionSummary, WalkFilters } from './job-types.js';
import { proveCoverage, type CoverageProof, type ProofRow } from './prove-coverage.js';
import { readRangeRows, type RangePage, type ReadRangeRowsOptions } from './read-range-rows.js';

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
  /** Types the upstream may have beyond the window's (absent ones cannot be proven). @default [] */
  knownTypes?: readonly string[];
}

/** What the proof read and found. */
export interface PartitionProof {
  key: string;
  window: TimeRange;
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
    // Parts of 8 pages: every part ends on a partial page; at the real volume (~22 k feed pages) 50 parts a cut, up
    // to three cuts deep, still read the window in parallel.
    pagesPerPart: options.pagesPerPart ?? 8,
  };
  const unidentified = { n: 0 };
  const rowsOf = (filters: WalkFilters) =>
    readRangeRows(
      (range, cursor) => read('transactions', filters, range, cursor),
      window,
      (item) => keepRow(item, unidentified),
      rangeOptions,
    );
  const [feed, ...walks] = await Promise.all([rowsOf({}), ...values.map((v) => rowsOf({ [key]: v }))]);
  const proof = proveCoverage(
    feed?.rows ?? [],
    walks.map((w) => w.rows),
    options.knownTypes ?? [],
  );
  const walkRows = new Map<string, WalkRow[]>();
  values.forEach((v, i) => walkRows.set(v, walks[i]?.rows ?? []));
  return {
    key,
    window,
    proof,
    walkRows,
    pages: { feed: feed?.pages ?? 0, walks: walks.reduce((n, w) => n + w.pages, 0) },
    unidentified: unidentified.n,
  };
}

/** The run data's summary of a proof. */
export function summarizePartition(p: PartitionProof): PartitionSummary {
  const { proof } = p;
  return {
    key: p.key,
    walks: p.walkRows.size,
    window: { start: p.window.start, end: p.window.end },
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
