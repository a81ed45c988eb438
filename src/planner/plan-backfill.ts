/**
 * Turns "backfill these resources over [since, until) with these filters" into one run and its slices.
 *
 * Walks: most resources are one listing sliced by time (sized from a density probe). Users are listed per
 * country (the listing requires `countryId`), one walk per country; full profiles are fetched by id at run time,
 * batched. Full-history transactions walk per user (the unfiltered feed reaches back only 72 h), one walk per user;
 * a trade shows under its buyer and its seller, and dedup by `_id` keeps one. Walks that are not probed start as
 * one slice and split themselves while running when dense.
 */
import { ConfigError } from '../errors.js';
import { RESOURCES, isResourceName, type ResourceName } from '../models/resources.js';
import type { RunJobData, SliceJobData } from './job-types.js';
import { runJobId, sliceJobId } from './queue-names.js';
import { findEarliest, probeDensity, type ProbePage } from './probe-density.js';
import { planSlices, type TimeRange } from '../slicing/index.js';

/** The unfiltered transaction feed reaches back exactly this far. */
export const UNFILTERED_TRANSACTION_WINDOW_MS = 72 * 3_600_000;

/** What the planner needs from the upstream. */
export interface PlannerSource {
  /** One-page probe of a listing (resource + wire filters). */
  probe(resource: ResourceName, filters: Record<string, string>): ProbePage;
  /** Every country id (users are listed per country). */
  countryIds(): Promise<string[]>;
  /** Every user id (full-history transactions walk per user). */
  userIds(): Promise<string[]>;
  /**
   * Every listed user id, plus how many listing items had no `_id` (users the walk can only reach by discovery,
   * through a trade with a walked user). @default `userIds()` with 0 unlisted
   */
  userListing?(): Promise<UserListing>;
}

/** The users the per-country listings show. */
export interface UserListing {
  ids: string[];
  /** Listing items without `_id`: their users are not in `ids`. */
  unlisted: number;
}

export interface BackfillRequest {
  resources: ResourceName[];
  /** Epoch ms; default: the earliest record (72 h back for the unfiltered transaction feed). */
  since?: number;
  /** Epoch ms; default: now. */
  until?: number;
  /** Operator filters (`--filter key=value`), passed to every listing. */
  filters?: Record<string, string>;
  fullHistory?: boolean;
  replay?: boolean;
  /** Fixes the run id (tests); default derived from the resources and the time. */
  runId?: string;
}

export interface PlanBackfillOptions {
  /** Rows per planned slice. @default 5000 */
  targetRows?: number;
  /** Buckets of the density probe. @default 16 */
  probeBuckets?: number;
  /** Upper bound on planned slices per walk. @default 1000 */
  maxSlicesPerWalk?: number;
  now?: () => number;
}

export const DEFAULT_PLAN_BACKFILL_OPTIONS = {
  targetRows: 5000,
  probeBuckets: 16,
  maxSlicesPerWalk: 1000,
} as const;

export interface PlannedRun {
  run: RunJobData;
  slices: SliceJobData[];
  /** Full-history transactions: the listed users (seed of the run's discovery set) and the unlisted count. */
  users?: UserListing;
}

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

/** Plans one run over every requested resource. */
export async function planBackfill(
  request: BackfillRequest,
  source: PlannerSource,
  options: PlanBackfillOptions = {},
): Promise<PlannedRun> {
  const o = { ...DEFAULT_PLAN_BACKFILL_OPTIONS, ...options };
  const now = (options.now ?? Date.now)();
  const until = request.until ?? now;
  const filters = request.filters ?? {};
  const fullHistory = request.fullHistory ?? false;
  const replay = request.replay ?? false;
  if (request.since !== undefined && request.since >= until) {
    throw new ConfigError(
      `--since must be before --until, got ${new Date(request.since).toISOString()} >= ${new Date(until).toISOString()}`,
    );
  }
  const runId = request.runId ?? runJobId(request.resources.join('+'), fullHistory ? 'full' : 'range', now);
  const slices: SliceJobData[] = [];
  let users: UserListing | undefined;
  const add = (resource: ResourceName, walk: Record<string, string>, ranges: TimeRange[]): void => {
    for (const r of ranges) {
      slices.push({
        runId,
        sliceId: sliceJobId(runId, { r: resource, ...walk }, r.start, r.end),
        resource,
        filters: walk,
        start: r.start,
        end: r.end,
        replay,
        depth: 0,
      });
    }
  };

  for (const resource of request.resources) {
    const since = request.since ?? 0;
    if (resource === 'users') {
      for (const countryId of await source.countryIds())
        add(resource, { ...filters, countryId }, [{ start: since, end: until }]);
      continue;
    }
    if (resource === 'transactions' && fullHistory && filters['userId'] === undefined) {
      // Users listed without `_id` are walked when a trade reveals them (src/jobs/user-discovery.ts).
      users = source.userListing ? await source.userListing() : { ids: await source.userIds(), unlisted: 0 };
      for (const userId of users.ids) add(resource, { ...filters, userId }, [{ start: since, end: until }]);
      continue;
    }
    // One probed walk.
    const probe = source.probe(resource, filters);
    let start: number;
    if (request.since !== undefined) start = request.since;
    else if (resource === 'transactions' && Object.keys(filters).length === 0 && !fullHistory)
      start = until - UNFILTERED_TRANSACTION_WINDOW_MS;
    else {
      const earliest = await findEarliest(probe, until);
      if (earliest === null) continue; // nothing to read
      start = earliest;
    }
    if (start >= until) continue;
    const range = { start, end: until };
    const density = await probeDensity(probe, range, { buckets: o.probeBuckets });
    add(
      resource,
      filters,
      planSlices(range, density, { targetRows: o.targetRows, maxSlices: o.maxSlicesPerWalk }),
    );
  }
  const run: RunJobData = {
    runId,
    resources: request.resources,
    since: request.since ?? 0,
    until,
    filters,
    fullHistory,
    replay,
    createdAt: now,
    slices: slices.length,
    ...(users === undefined ? {} : { unlistedUsers: users.unlisted }),
  };
  return { run, slices, ...(users === undefined ? {} : { users }) };
}
