/**
 * What the walk strategies of `planBackfill` share, passed explicitly: the request as resolved once (`PlanContext`,
 * read-only and complete when built), and what planning finds on the way (`PlanFindings` in `plan-findings.ts`: its
 * cost, the users listed, the partition's summary, recorded there only). Also the one place the per-user walks are
 * built.
 */
import type { ResourceName } from '../../foundation/models/index.js';
import type { TimeRange } from '../../foundation/slicing/index.js';
import { busyUserPieces } from './busy-user-pieces.js';
import type { WalkFilters } from '../contract/job-types.js';
import type { PlanFindings } from './plan-findings.js';
import type { PlannedSlice } from './plan-partition.js';
import type { BackfillRequest, PlannerSource, ResolvedPlanOptions, UserListing } from './plan-inputs.js';

/** One walk: its filters and slices; `expectedPages` per slice when the plan knows it (see `SliceJobData`). */
export interface Walk {
  filters: WalkFilters;
  ranges: PlannedSlice[];
  expectedPages?: number;
}

/** One resource's walks and the probe rounds they took (the resources are planned at the same time). */
export interface PlannedWalks {
  walks: Walk[];
  rounds: number;
}

/** The request and options as resolved once, for every strategy: read-only, complete when built (`planBackfill`). */
export interface PlanContext {
  readonly request: BackfillRequest;
  readonly source: PlannerSource;
  readonly o: ResolvedPlanOptions;
  /** Planning for fewest rounds (else fewest requests). */
  readonly forRounds: boolean;
  /** The planner's clock when planning began. */
  readonly now: number;
  readonly until: number;
  readonly filters: Readonly<Record<string, string>>;
  readonly fullHistory: boolean;
  /** What planning finds; the strategies tell it through its operations. */
  readonly found: PlanFindings;
  /**
   * Told of walks as soon as planning knows them, before it ends (`planBackfill`'s `early`): the per-user walks of a
   * full history, whose users the listing names seconds before it ends. Every walk told is also in the plan, except
   * the walks of users the feed's head page names and no listing shows (walked by discovery anyway). Must not throw.
   */
  readonly early?: (resource: ResourceName, walks: Walk[]) => void;
}

/**
 * The users the per-country listings show (`countryIds`: the countries already read, if they were); `onUsers` is told
 * of each listing page's users as it arrives, when the source can.
 */
export const listUsers = async (
  source: PlannerSource,
  countryIds?: readonly string[],
  onUsers?: (ids: readonly string[]) => void,
): Promise<UserListing> =>
  source.userListing
    ? await source.userListing(countryIds, onUsers)
    : { ids: await source.userIds(), unlisted: 0 };

/**
 * One whole-range walk per listed user (`types`: only these transaction types; absent: every type), and the listing
 * recorded as the run's users. A user's first page IS its probe: planned for rounds, all of them are read at once
 * (many slices in flight), so every walk's first page goes out in the same round; a busy user splits while it is read.
 */
export function perUserWalks(
  ctx: PlanContext,
  listing: UserListing,
  range: TimeRange,
  types?: readonly string[],
): Walk[] {
  ctx.found.noteUsers(listing);
  return busiestFirst(listing.ids, ctx.found.head?.users).map((userId) =>
    userWalk(ctx, userId, range, types),
  );
}

/** One user's walk, as {@link perUserWalks} plans it (the early walks of {@link earlyUserWalks} are the same). */
function userWalk(ctx: PlanContext, userId: string, range: TimeRange, types?: readonly string[]): Walk {
  const typeFilter =
    types === undefined ? {} : { transactionType: types.length === 1 ? (types[0] as string) : [...types] };
  const { head } = ctx.found;
  // Cut only walks of every type planned for rounds: the head's rate counts every type, and a plan for fewest
  // requests reads each walk as one chain anyway.
  const cut = head !== undefined && types === undefined && ctx.forRounds;
  return {
    filters: { ...ctx.filters, userId, ...typeFilter },
    ranges: cut ? busyUserPieces(range, head.users.get(userId) ?? 0, head) : [range],
  };
}

/**
 * Starts the per-user walks of every type over `range` before the listing ends (issue 32): at once the walks of the
 * users the feed's head page names, busiest first (the run's longest chains, ~2 s before the listing ends at the real
 * service's latency), then, through the callback returned (`listUsers`' `onUsers`), each listing page's users not
 * started yet. Each user's walk is the one {@link perUserWalks} plans. Does nothing without `ctx.early`.
 */
export function earlyUserWalks(
  ctx: PlanContext,
  range: TimeRange,
): ((ids: readonly string[]) => void) | undefined {
  const { early } = ctx;
  if (early === undefined) return undefined;
  const started = new Set<string>();
  const start = (ids: readonly string[]): void => {
    const fresh = ids.filter((id) => !started.has(id));
    for (const id of fresh) started.add(id);
    if (fresh.length > 0)
      early(
        'transactions',
        fresh.map((id) => userWalk(ctx, id, range)),
      );
  };
  const head = ctx.found.head?.users;
  if (head !== undefined) start(busiestFirst([...head.keys()], head));
  return start;
}

/**
 * `ids` with the users the feed's head page names most first, the rest in their order (a stable sort). A busy user's
 * walk is a chain of dependent rounds (a small full history's busiest user has 11 % of the rows, 13 pages): started
 * last, as its place in the listing had it, the run waited for it alone at the end.
 * @example busiestFirst(['a', 'b', 'c'], new Map([['c', 5], ['b', 1]])) // ['c', 'b', 'a']
 */
export function busiestFirst(ids: readonly string[], headUsers?: ReadonlyMap<string, number>): string[] {
  if (headUsers === undefined || headUsers.size === 0) return [...ids];
  return [...ids].sort((a, b) => (headUsers.get(b) ?? 0) - (headUsers.get(a) ?? 0));
}
