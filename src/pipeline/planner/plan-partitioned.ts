/**
 * Transactions by a proven partition: the proof on the window where the unfiltered feed is complete, then the
 * per-country walks of the proven types and the per-user walks of the others (the user listing read only then, at
 * most once). A full history at a small volume skips the proof (the per-user walks cost the key less, issue 32); a
 * range of the feed's window uses the partition only when every type is proven, else its `fallback`.
 */
import { tradeUsers } from '../../foundation/models/index.js';
import type { TimeRange } from '../../foundation/slicing/index.js';
import type { FeedHead } from './busy-user-pieces.js';
import {
  earlyUserWalks,
  listUsers,
  perUserWalks,
  type PlanContext,
  type PlannedWalks,
  type Walk,
} from './plan-context.js';
import type { UserListing } from './plan-inputs.js';
import { planPartitionWalks } from './plan-partition.js';
import {
  provePartition,
  summarizePartition,
  type PartitionProof,
  type ReadListingPages,
} from './prove-partition.js';

/**
 * The feed's head page (one page read): the rows of the feed's window at its rate (the page's rows over the time they
 * span, times the window; all of them when the page holds the window whole), and how many of its rows name each user.
 */
async function readFeedHead(read: ReadListingPages, window: TimeRange): Promise<FeedHead> {
  for await (const page of read('transactions', {}, window)) {
    const users = new Map<string, number>();
    for (const item of page.items) for (const id of tradeUsers(item)) users.set(id, (users.get(id) ?? 0) + 1);
    const times = page.items
      .map((i) => (typeof i['createdAt'] === 'string' ? Date.parse(i['createdAt']) : Number.NaN))
      .filter(Number.isFinite);
    const rows = page.items.length;
    if (page.cursor === null || page.cursor === undefined || times.length === 0)
      return { rows, spanMs: window.end - window.start, users, windowRows: rows };
    const spanMs = Math.max(1, window.end - Math.min(...times));
    return { rows, spanMs, users, windowRows: Math.round((rows * (window.end - window.start)) / spanMs) };
  }
  return { rows: 0, spanMs: 0, users: new Map(), windowRows: 0 };
}

/**
 * Whether a full history's feed holds too few rows in the proof's window for the partition to pay. The head page is
 * kept (`found.noteHead`): the per-user walks start with the busiest users, cut into pieces (`busy-user-pieces.ts`).
 */
async function belowPartitionVolume(
  ctx: PlanContext,
  read: ReadListingPages,
  window: TimeRange,
): Promise<boolean> {
  const head = await readFeedHead(read, window);
  ctx.found.noteHead(head);
  return head.windowRows < ctx.o.partitionAboveRows;
}

/** The partition walks of `types` (undefined: every type) over `range`, and the probe rounds they took. */
async function partitionWalks(
  ctx: PlanContext,
  proof: PartitionProof,
  range: TimeRange,
  types: readonly string[] | undefined,
): Promise<PlannedWalks> {
  const { o, forRounds } = ctx;
  const planned = await planPartitionWalks(proof, range, {
    types,
    pageSize: o.pageSize,
    rowsPerSlice: forRounds ? o.pageSize - 1 : o.targetRows,
    // A busy walk's older part in slices of `targetRows` under both plans: its stretches are estimates, and the
    // half-page slices a plan for rounds would cut there end every ~50 rows on a page of their own (scale medium:
    // 18,327 transaction pages, 1.83x the minimum, with them).
    rowsPerEstimatedSlice: o.targetRows,
    maxSlicesPerWalk: o.maxSlicesPerWalk,
    historyProbeAbove: o.historyProbeAbove,
    maxProbeRounds: o.maxProbeRounds,
    probe: (f) => ctx.source.probe('transactions', f),
  });
  ctx.found.addProbePages(planned.probePages);
  const wanted = types === undefined ? undefined : new Set(types);
  ctx.found.noteWalkWindowRows(
    new Map(
      [...proof.walkRows].map(([value, rows]) => [
        value,
        wanted === undefined ? rows.length : rows.filter((r) => wanted.has(r.type)).length,
      ]),
    ),
  );
  const walks: Walk[] = planned.walks.map((w) => ({ filters: w.filters, ranges: w.slices }));
  return { walks, rounds: planned.probeRounds };
}

/** Runs the proof on `window` over the countries `values` and records its summary. */
async function prove(
  ctx: PlanContext,
  read: ReadListingPages,
  window: TimeRange,
  values: string[],
): Promise<PartitionProof> {
  const proof = await provePartition(read, values, window, {
    key: ctx.o.partition,
    feedBudgetMs: ctx.o.proofFeedBudgetMs,
    knownTypes: ctx.o.knownTypes,
    pageSize: ctx.o.pageSize,
  });
  ctx.found.noteProof(summarizePartition(proof));
  return proof;
}

/**
 * Plans transactions over `range` by the partition when it holds (see the header). `fallback`: a range of the feed's
 * window, planned this way when some type is unproven.
 */
export async function planPartitioned(
  ctx: PlanContext,
  read: ReadListingPages,
  range: TimeRange,
  fallback?: () => Promise<PlannedWalks>,
): Promise<PlannedWalks> {
  const window = { start: Math.max(0, range.start, ctx.until - ctx.o.proofWindowMs), end: ctx.until };
  // Both plans start from the countries (the proof's values; the per-user plan's listings): read in the same round
  // as the volume estimate's page, not one round after it (~1 s at the real service's latency).
  const countries = ctx.source.countryIds();
  countries.catch(() => undefined); // awaited below; a failure surfaces there
  if (
    fallback === undefined &&
    ctx.o.partitionAboveRows > 0 &&
    (await belowPartitionVolume(ctx, read, window))
  ) {
    // The users the head page names start walking now, each listing page's as it comes (`earlyUserWalks`).
    const onUsers = earlyUserWalks(ctx, range);
    return {
      walks: perUserWalks(ctx, await listUsers(ctx.source, await countries, onUsers), range),
      rounds: 0,
    };
  }
  const values = await countries;
  const proof = await prove(ctx, read, window, values);
  const { provenTypes, unprovenTypes } = proof.proof;
  // A range of the feed's window (not a full history): the partition only when it holds for every type; else the
  // feed as before (per-user walks would need the users listed, for a range the feed reads whole).
  if (fallback !== undefined && unprovenTypes.length > 0) {
    ctx.found.partitionUnused();
    return fallback();
  }
  // The users are listed only when some type is walked per user (at the real volume the listing is ~1,240 pages).
  let listed: Promise<UserListing> | undefined;
  const listOnce = (): Promise<UserListing> => (listed ??= listUsers(ctx.source, values));
  // Nothing proven: exactly the per-user walks of every type.
  if (provenTypes.length === 0) return { walks: perUserWalks(ctx, await listOnce(), range), rounds: 0 };
  // Users the listings hide are found by discovery, from the pages of per-user walks only: with the proven types
  // walked per country, a hidden user's unproven rows would be found only through an unproven-type trade with a
  // walked user. So with hidden users, the per-user plan of every type (discovery through any trade), as before.
  if (unprovenTypes.length > 0 && (await listOnce()).unlisted > 0) {
    ctx.found.partitionUnused();
    return { walks: perUserWalks(ctx, await listOnce(), range), rounds: 0 };
  }
  // Every known type proven: the partition walks read every type (no filter), so no row of a type never seen
  // hides behind a type filter.
  const types = unprovenTypes.length === 0 ? undefined : provenTypes;
  const planned = await partitionWalks(ctx, proof, range, types);
  if (unprovenTypes.length > 0)
    planned.walks.push(...perUserWalks(ctx, await listOnce(), range, unprovenTypes));
  return planned;
}
