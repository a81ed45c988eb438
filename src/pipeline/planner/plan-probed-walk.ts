/**
 * One probed walk of a listing (the unfiltered feed of transactions, or any other resource): find where it starts,
 * probe it, cut it into slices. Planned for rounds: batched probe rounds learn where the rows are and the slices are
 * cut between them, one page each; planned for requests: a density estimate and slices of `targetRows`.
 */
import type { ResourceName } from '../../foundation/models/index.js';
import { planRowSlices, planSlices, type TimeRange } from '../../foundation/slicing/index.js';
import type { PlanContext, PlannedWalks } from './plan-context.js';
import { UNFILTERED_TRANSACTION_WINDOW_MS } from './plan-inputs.js';
import { findEarliest, probeDensity, probeRows, type ProbePage } from './probe-density.js';

/** Where the walk starts, or a finished plan when the head page already tells (empty, or all in one page). */
async function findStart(
  ctx: PlanContext,
  resource: ResourceName,
  probe: ProbePage,
): Promise<number | PlannedWalks> {
  const { request, until, filters, o } = ctx;
  if (request.since !== undefined) return request.since;
  if (resource === 'transactions' && Object.keys(filters).length === 0 && !ctx.fullHistory)
    return until - UNFILTERED_TRANSACTION_WINDOW_MS;
  // The head page first (one procedure, as the search's own first probe would be): a listing that fits in it
  // (the 40 parties of scale small) is all known, so it is one slice and needs neither the search for its
  // earliest row (~130 one-row probes over the epoch) nor density probes. The slice starts at `since` (0): what
  // the probe cannot time (rows without a usable time, dropped by it) is read there too.
  const head = await probe(until, o.pageSize);
  if (head.length === 0) return { walks: [], rounds: 0 }; // nothing to read
  if (head.length < o.pageSize)
    return { walks: [{ filters, ranges: [{ start: request.since ?? 0, end: until }] }], rounds: 1 };
  const earliest = await findEarliest(probe, until);
  if (earliest === null) return { walks: [], rounds: 0 }; // nothing to read
  return earliest;
}

/** Planning for rounds: probes the walk's range and cuts it into slices of one page each (at most pageSize - 1 rows). */
async function planForRounds(ctx: PlanContext, probe: ProbePage, range: TimeRange): Promise<PlannedWalks> {
  const { o, found } = ctx;
  const probed = await probeRows(probe, range, {
    buckets: o.roundBuckets,
    limit: o.pageSize,
    maxRounds: o.maxProbeRounds,
  });
  const ranges = planRowSlices(range, probed.stretches, {
    rowsPerSlice: o.pageSize - 1,
    rowsPerEstimatedSlice: Math.floor(o.pageSize / 2),
    maxSlices: o.maxSlicesPerWalk,
  });
  const rows = probed.stretches.reduce((n, st) => n + st.rows, 0);
  found.addProbePages(probed.probes);
  if (rows === 0) found.noteEmptyWalk();
  return { walks: [{ filters: ctx.filters, ranges, expectedPages: 1 }], rounds: probed.rounds };
}

/** Planning for requests: a density estimate and slices of `targetRows`. */
async function planForRequests(ctx: PlanContext, probe: ProbePage, range: TimeRange): Promise<PlannedWalks> {
  const { o, found } = ctx;
  const density = await probeDensity(probe, range, { buckets: o.probeBuckets });
  found.addProbePages(density.rows.length);
  const ranges = planSlices(range, density, { targetRows: o.targetRows, maxSlices: o.maxSlicesPerWalk });
  const estimatedRows = density.rows.reduce((n, r) => n + Math.max(0, r), 0);
  return {
    walks: [
      {
        filters: ctx.filters,
        ranges,
        // The estimated rows shared among the slices: each read's full pages and the short page that ends it.
        expectedPages: Math.floor(estimatedRows / Math.max(1, ranges.length) / o.pageSize) + 1,
      },
    ],
    rounds: 1,
  };
}

/** One probed walk of `resource` over the request's range. */
export async function planProbedWalk(ctx: PlanContext, resource: ResourceName): Promise<PlannedWalks> {
  const probe = ctx.source.probe(resource, ctx.filters);
  const start = await findStart(ctx, resource, probe);
  if (typeof start !== 'number') return start;
  if (start >= ctx.until) return { walks: [], rounds: 0 };
  const range = { start, end: ctx.until };
  return ctx.forRounds ? planForRounds(ctx, probe, range) : planForRequests(ctx, probe, range);
}
