/**
 * The slices of the partition walks of a full-history transactions run (issue 23), from what the proof read: each
 * walk (one per value of the key, filtered to the proven types when some types are not proven) covers the run's
 * whole range. A quiet walk (its window holds fewer than `historyProbeAbove` rows) is one slice: every slice ends on a
 * partial page, so cutting it would only add pages (measured at scale small: 243 transaction pages with the window
 * part cut apart, 2.02x the minimum, against 1.95x whole), and it is not split while read (see
 * {@link PlannedSlice.unsplit}). A busy walk's newest part, the proof's window, is cut
 * exactly between the rows the proof saw (`planRowSlices` with every row's time), and its older part is probed at
 * growing depths (`probeRows`) and cut into parallel slices, so a deep walk is not one serial chain of cursors. Every
 * walk's slices partition the range exactly whatever the probes saw; only the pages per slice depend on them.
 */
import { planRowSlices, rowsWithin, type TimeRange } from '../../foundation/slicing/index.js';
import type { WalkFilters } from '../contract/job-types.js';
import { probeRows, type ProbePage } from './probe-density.js';
import type { PartitionProof } from './prove-partition.js';

/** One slice of a walk, with the pages it is expected to read when known. */
export interface PlannedSlice extends TimeRange {
  expectedPages?: number;
  /**
   * The slice is not split while read (planned at {@link UNSPLIT_DEPTH}): a quiet walk's one slice starts at the run's
   * `since` (1970 for a full history), and the workers' split estimates the rows left from there at the rate of the
   * newest pages, so it would cut a few hundred rows into mostly empty pieces, each one more page read.
   */
  unsplit?: boolean;
}

/**
 * The split depth of a slice that must not split: the workers split a slice only while its `depth` is below their
 * `maxDepth` (6 by default), so a slice planned this deep reads on as one chain.
 */
export const UNSPLIT_DEPTH = 1000;

/** The window `historyProbeAbove` counts its rows over (the proof's former whole window, 71 h). */
const RATE_WINDOW_MS = 71 * 3_600_000;

/** One partition walk: its filters and its slices, newest first. */
export interface PartitionWalk {
  filters: WalkFilters;
  slices: PlannedSlice[];
}

export interface PlanPartitionWalksOptions {
  /** Types the walks read (a filter on each); undefined: every type (no filter). */
  types?: readonly string[] | undefined;
  /** Page size of the workers. @default 100 */
  pageSize?: number;
  /** Most known rows of one slice (the plan for rounds: `pageSize - 1`, one page; for requests: `targetRows`). */
  rowsPerSlice: number;
  /** Rows of one slice over a stretch the probes only estimated. @default rowsPerSlice */
  rowsPerEstimatedSlice?: number;
  /** Most slices of one walk. @default 1000 */
  maxSlicesPerWalk?: number;
  /**
   * A walk whose window holds this many rows or more, counted at the rate of a 71 h window (the proof's window may be
   * narrower: its rows are scaled up), is cut (window exactly, older part probed); a quieter one is one slice.
   * @default 5000
   */
  historyProbeAbove?: number;
  /** Probe rounds at most for an older part. @default 3 */
  maxProbeRounds?: number;
  /** A one-page probe of a walk (the planner source's `probe`); without it every walk is one slice. */
  probe?: ((filters: WalkFilters) => ProbePage) | undefined;
}

export const DEFAULT_PLAN_PARTITION_WALKS_OPTIONS = {
  pageSize: 100,
  maxSlicesPerWalk: 1000,
  historyProbeAbove: 5000,
  maxProbeRounds: 3,
} as const;

/** The filters of the walk of one value: the key, and the types when they are limited (one value or a list). */
export function partitionWalkFilters(
  key: string,
  value: string,
  types: readonly string[] | undefined,
): WalkFilters {
  if (types === undefined) return { [key]: value };
  return { [key]: value, transactionType: types.length === 1 ? (types[0] as string) : [...types] };
}

/**
 * Plans every partition walk over `range` (`[since, until)` of the run; the proof's window is its newest part).
 * @returns the walks and the probe pages spent on older parts.
 */
export async function planPartitionWalks(
  proof: Pick<PartitionProof, 'key' | 'window' | 'walkRows'>,
  range: TimeRange,
  options: PlanPartitionWalksOptions,
): Promise<{ walks: PartitionWalk[]; probePages: number; probeRounds: number }> {
  const o = { ...DEFAULT_PLAN_PARTITION_WALKS_OPTIONS, ...options };
  const wanted = o.types === undefined ? undefined : new Set(o.types);
  const windowStart = Math.min(range.end, Math.max(range.start, proof.window.start));
  // A narrow window's rows, scaled to a 71 h window's: quiet or busy is a walk's rate, whatever the proof's width.
  const windowMs = Math.max(1, proof.window.end - proof.window.start);
  const rateScale = Math.max(1, RATE_WINDOW_MS / windowMs);
  let probePages = 0;
  let probeRounds = 0;
  const walks = await Promise.all(
    [...proof.walkRows].map(async ([value, rows]): Promise<PartitionWalk> => {
      const filters = partitionWalkFilters(proof.key, value, o.types);
      const times = rows
        .filter(
          (r) => (wanted === undefined || wanted.has(r.type)) && r.time >= windowStart && r.time < range.end,
        )
        .map((r) => r.time)
        .sort((a, b) => b - a);
      // A quiet walk: one slice (its pages are all it needs; its first page goes out with every other walk's).
      if (times.length * rateScale < o.historyProbeAbove || o.probe === undefined)
        return { filters, slices: [{ ...range, unsplit: true }] };
      const slices: PlannedSlice[] = [];
      if (windowStart < range.end) {
        const part = { start: windowStart, end: range.end };
        // Slices come newest first, as `times` are: one pass counts each slice's rows.
        let next = 0;
        for (const s of planRowSlices(part, [{ ...part, times, rows: times.length }], {
          rowsPerSlice: o.rowsPerSlice,
          maxSlices: o.maxSlicesPerWalk,
        })) {
          while (next < times.length && (times[next] as number) >= s.end) next++;
          let rowsIn = 0;
          for (; next < times.length && (times[next] as number) >= s.start; next++) rowsIn++;
          // Full pages plus the one that ends the read (a row below the slice, or a short page).
          slices.push({ ...s, expectedPages: Math.floor(rowsIn / o.pageSize) + 1 });
        }
      }
      if (range.start < windowStart) {
        const older = { start: range.start, end: windowStart };
        const probed = await probeRows(o.probe(filters), older, {
          buckets: 1,
          limit: o.pageSize,
          maxRounds: o.maxProbeRounds,
        });
        probePages += probed.probes;
        probeRounds = Math.max(probeRounds, probed.rounds);
        // Each slice's pages from the rows the probes put in it (estimated: the budget's work and the dry run's
        // figure): full pages, then the page that ends the read (a row below the slice, or a short page).
        for (const s of planRowSlices(older, probed.stretches, {
          rowsPerSlice: o.rowsPerSlice,
          rowsPerEstimatedSlice: o.rowsPerEstimatedSlice ?? o.rowsPerSlice,
          maxSlices: o.maxSlicesPerWalk,
        })) {
          const rows = Math.round(rowsWithin(s, probed.stretches));
          slices.push({ ...s, expectedPages: Math.floor(rows / o.pageSize) + 1 });
        }
      }
      return { filters, slices };
    }),
  );
  return { walks, probePages, probeRounds };
}
