/**
 * Turns "backfill these resources over [since, until) with these filters" into one run and its slices.
 *
 * Walks: most resources are one listing sliced by time (sized from a density probe). Users are listed per
 * country (the listing requires `countryId`), one walk per country; full profiles are fetched by id at run time,
 * batched. Full-history transactions walk per user (the unfiltered feed reaches back only 72 h), one walk per user;
 * a trade shows under its buyer and its seller, and dedup by `_id` keeps one. Walks that are not probed start as
 * one slice and split themselves while running when dense.
 *
 * Two plans (`plan`), as in the client's `collectAll`: when the upstream budget does not bind, time is set by
 * sequential rounds of requests, so the walks are planned for fewest ROUNDS: batched probe rounds learn where the
 * rows are (`probeRows`), and the slices are cut between rows so nearly every slice is ONE page (`planRowSlices`);
 * the workers then read all their first pages at once. Per-user walks are NOT probed: each user is one whole-range
 * slice under both plans, because a small user's first page is all there is (probing it would read that page twice)
 * and all users' first pages go out in the same round anyway (many slices in flight); a busy user splits while read.
 * When the budget binds, the plan is for fewest REQUESTS: a 16-bucket density estimate and slices of `targetRows`
 * (few, long slices whose pages fill the POSTs).
 */
import { ConfigError } from '../../foundation/errors/index.js';
import { RESOURCES, isResourceName, type ResourceName } from '../../foundation/models/index.js';
import type { RunJobData, SliceJobData } from '../contract/job-types.js';
import { runJobId, sliceJobId } from '../contract/queue-names.js';
import { checkRunId } from '../contract/run-id.js';
import { PlanFindings } from './plan-findings.js';
import { UNSPLIT_DEPTH } from './plan-partition.js';
import {
  earlyUserWalks,
  listUsers,
  perUserWalks,
  type PlanContext,
  type PlannedWalks,
  type Walk,
} from './plan-context.js';
import {
  DEEP_FEED_MS,
  resolvePlanOptions,
  UNFILTERED_TRANSACTION_WINDOW_MS,
  type BackfillRequest,
  type PlanBackfillOptions,
  type PlannedRun,
  type PlannerSource,
} from './plan-inputs.js';
import { planPartitioned } from './plan-partitioned.js';
import { planProbedWalk } from './plan-probed-walk.js';

export {
  AUTO_PARTITION_ABOVE_ROWS,
  DEFAULT_PLAN_BACKFILL_OPTIONS,
  KNOWN_TRANSACTION_TYPES,
  UNFILTERED_TRANSACTION_WINDOW_MS,
} from './plan-inputs.js';
export type {
  BackfillRequest,
  PlanBackfillOptions,
  PlannedRun,
  PlannerSource,
  UserListing,
} from './plan-inputs.js';

/** Parses `key=value` filter flags. @throws ConfigError naming a malformed flag. */
export function parseFilters(flags: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  const bad: string[] = [];
  for (const f of flags) {
    const i = f.indexOf('=');
    if (i <= 0) bad.push(`--filter ${JSON.stringify(f)} must be key=value`);
    else out[f.slice(0, i)] = f.slice(i + 1);
  }
  if (bad.length > 0) throw new ConfigError('invalid --filter', bad);
  return out;
}

/** Parses resource names (`all` = every resource). @throws ConfigError listing unknown names. */
export function parseResources(names: readonly string[]): ResourceName[] {
  if (names.includes('all')) return [...RESOURCES];
  const bad = names.filter((n) => !isResourceName(n));
  if (bad.length > 0 || names.length === 0) {
    throw new ConfigError(
      `resources must be among ${RESOURCES.join(', ')} (or all)`,
      bad.map((b) => `unknown resource ${b}`),
    );
  }
  return [...new Set(names)] as ResourceName[];
}

/**
 * One resource's walks: users per country; full-history transactions per user or by the partition; transactions over
 * the feed's window deeper than an hour by the partition when it holds; else one probed walk.
 */
async function planResource(ctx: PlanContext, resource: ResourceName): Promise<PlannedWalks> {
  const { request, source, o, until, filters } = ctx;
  const since = request.since ?? 0;
  if (resource === 'users') {
    const countries = await source.countryIds();
    return {
      walks: countries.map((countryId) => ({
        filters: { ...filters, countryId },
        ranges: [{ start: since, end: until }],
      })),
      rounds: 0,
    };
  }
  if (resource === 'transactions' && ctx.fullHistory && filters['userId'] === undefined) {
    if (o.partition !== 'off' && source.readPages !== undefined && Object.keys(filters).length === 0)
      return planPartitioned(ctx, source.readPages, { start: since, end: until });
    // Users listed without `_id` are walked when a trade reveals them (src/pipeline/slice/user-discovery.ts). Probing each user
    // first would read that same head page twice (see `perUserWalks`). Each listing page's users start at once.
    const range = { start: since, end: until };
    const listing = await listUsers(source, undefined, earlyUserWalks(ctx, range));
    return { walks: perUserWalks(ctx, listing, range), rounds: 0 };
  }
  // Transactions over the unfiltered feed's window, deeper than an hour: the feed's deep pages cost seconds of the
  // key's serialised time each (~21 h for the real 72 h), the per-country walks a fraction of a second side by side.
  // So, when the partition proof holds for every type, the window is read per country (issue 32).
  const feedWindow = resource === 'transactions' && !ctx.fullHistory && Object.keys(filters).length === 0;
  if (feedWindow && o.partition !== 'off' && source.readPages !== undefined) {
    const start = request.since ?? until - UNFILTERED_TRANSACTION_WINDOW_MS;
    if (start < until - DEEP_FEED_MS)
      return planPartitioned(ctx, source.readPages, { start, end: until }, () =>
        planProbedWalk(ctx, resource),
      );
  }
  return planProbedWalk(ctx, resource);
}

/** The slice jobs of one walk (`expectedPages`: the walk's, unless a slice knows its own). */
function walkSlices(runId: string, replay: boolean, resource: ResourceName, walk: Walk): SliceJobData[] {
  return walk.ranges.map((r) => {
    const pages = r.expectedPages ?? walk.expectedPages;
    return {
      runId,
      sliceId: sliceJobId(runId, { r: resource, ...walk.filters }, r.start, r.end),
      resource,
      filters: walk.filters,
      start: r.start,
      end: r.end,
      replay,
      depth: r.unsplit === true ? UNSPLIT_DEPTH : 0,
      ...(pages === undefined ? {} : { expectedPages: pages }),
    };
  });
}

/**
 * The request resolved once, with nothing found yet: the whole plan context but `early` (which needs the run's id,
 * from the clock read here). Throws on a bad range.
 */
function planContext(
  request: BackfillRequest,
  source: PlannerSource,
  options: PlanBackfillOptions,
): Omit<PlanContext, 'early'> {
  const o = resolvePlanOptions(options);
  const forRounds = o.plan === 'rounds' || (o.plan === 'auto' && !(source.budgetBinds?.() ?? false));
  const now = (options.now ?? Date.now)();
  const until = request.until ?? now;
  if (request.since !== undefined && request.since >= until) {
    throw new ConfigError(
      `--since must be before --until, got ${new Date(request.since).toISOString()} >= ${new Date(until).toISOString()}`,
    );
  }
  return {
    request,
    source,
    o,
    forRounds,
    now,
    until,
    filters: request.filters ?? {},
    fullHistory: request.fullHistory ?? false,
    found: new PlanFindings(forRounds ? 'rounds' : 'requests'),
  };
}

/** The run's job data as planning knows it so far (`slices`: the count planned). */
function runData(
  ctx: Omit<PlanContext, 'early'>,
  runId: string,
  replay: boolean,
  slices: number,
): RunJobData {
  const { users, partition } = ctx.found;
  return {
    runId,
    resources: ctx.request.resources,
    since: ctx.request.since ?? 0,
    until: ctx.until,
    filters: ctx.filters,
    fullHistory: ctx.fullHistory,
    replay,
    createdAt: ctx.now,
    slices,
    ...(users === undefined ? {} : { unlistedUsers: users.unlisted }),
    ...(partition === undefined ? {} : { partition }),
  };
}

/**
 * Told of slices before planning ends (see `PlanContext.early`), with the run as known so far: a caller may enqueue
 * the run and start them (`startBackfill`). Every slice told is also in the plan returned, but for the walks of users
 * only the feed's head page names. Must not throw.
 */
export type EarlySlices = (run: RunJobData, slices: SliceJobData[]) => void;

/**
 * `PlanContext.early` for a caller's {@link EarlySlices}: each walk's slices (`slicesOf`), told with the run as known
 * so far (`runSoFar`, given the count of slices told).
 */
function tellEarly(
  early: EarlySlices,
  slicesOf: (resource: ResourceName, walk: Walk) => SliceJobData[],
  runSoFar: (slices: number) => RunJobData,
): NonNullable<PlanContext['early']> {
  let told = 0;
  return (resource, walks) => {
    const slices = walks.flatMap((walk) => slicesOf(resource, walk));
    told += slices.length;
    if (slices.length > 0) early(runSoFar(told), slices);
  };
}

/** Plans one run over every requested resource. `early`: see {@link EarlySlices}. */
export async function planBackfill(
  request: BackfillRequest,
  source: PlannerSource,
  options: PlanBackfillOptions = {},
  early?: EarlySlices,
): Promise<PlannedRun> {
  const resolved = planContext(request, source, options);
  const { now, fullHistory, found } = resolved;
  const replay = request.replay ?? false;
  const runId =
    request.runId !== undefined
      ? checkRunId(request.runId)
      : runJobId(request.resources.join('+'), fullHistory ? 'full' : 'range', now);
  const slicesOf = (resource: ResourceName, walk: Walk): SliceJobData[] =>
    walkSlices(runId, replay, resource, walk);
  const runSoFar = (slices: number): RunJobData => runData(resolved, runId, replay, slices);
  const ctx: PlanContext =
    early === undefined ? resolved : { ...resolved, early: tellEarly(early, slicesOf, runSoFar) };
  // Every resource at once, so their probes share rounds (and POSTs); slices are added in the request's order.
  const planned = await Promise.all(request.resources.map((resource) => planResource(ctx, resource)));
  const slices: SliceJobData[] = [];
  planned.forEach(({ walks, rounds }, i) => {
    found.noteProbeRounds(rounds);
    for (const walk of walks) slices.push(...slicesOf(request.resources[i] as ResourceName, walk));
  });
  const { users } = found;
  return {
    run: runSoFar(slices.length),
    slices,
    ...(users === undefined ? {} : { users }),
    planning: found.planning,
  };
}
