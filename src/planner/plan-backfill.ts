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
import { TRANSACTION_TYPES } from '../models/transaction-types.js';
import { ConfigError } from '../errors.js';
import { RESOURCES, isResourceName, type ResourceName } from '../models/resources.js';
import type { PartitionSummary, RunJobData, SliceJobData, WalkFilters } from './job-types.js';
import { runJobId, sliceJobId } from './queue-names.js';
import { findEarliest, probeDensity, probeRows, type ProbePage } from './probe-density.js';
import { planRowSlices, planSlices, type TimeRange } from '../slicing/index.js';
import { provePartition, summarizePartition, type ReadListingPages } from './prove-partition.js';
import { planPartitionWalks, UNSPLIT_DEPTH, type PlannedSlice } from './plan-partition.js';

/** The window rows above which `--partition auto` (the CLI's default) plans a full history by the partition. */
export const AUTO_PARTITION_ABOVE_ROWS = 500_000;

/** The unfiltered transaction feed reaches back exactly this far. */
export const UNFILTERED_TRANSACTION_WINDOW_MS = 72 * 3_600_000;

/**
 * A transactions range reaching deeper than this below `until` is read per country when the partition proof holds
 * (its feed pages would cost 0.33 s and more each, serialised on the key; see `models/call-cost.ts`).
 */
const DEEP_FEED_MS = 3_600_000;

/**
 * Transaction types the upstream is seen to emit (upstream-facts.md): the partition proof's known types. A known type
 * absent from the proof's window is not proven (walked per user); a type outside this list and outside the window is
 * the proof's one blind spot when some types are unproven (the partition walks then read only the proven ones).
 */
export const KNOWN_TRANSACTION_TYPES = TRANSACTION_TYPES;

/** What the planner needs from the upstream. */
export interface PlannerSource {
  /** One-page probe of a listing (resource + wire filters). */
  probe(resource: ResourceName, filters: WalkFilters): ProbePage;
  /**
   * The pages of a listing over `[start, end)`, newest first, resumed after `cursor` (the client's `readSlice`): the
   * partition proof reads the feed and the partition's walks with it. Absent: no partition (per-user walks).
   */
  readPages?: ReadListingPages;
  /** Every country id (users are listed per country). */
  countryIds(): Promise<string[]>;
  /** Every user id (full-history transactions walk per user). */
  userIds(): Promise<string[]>;
  /**
   * Every listed user id, plus how many listing items had no `_id` (users the walk can only reach by discovery,
   * through a trade with a walked user). @default `userIds()` with 0 unlisted
   */
  userListing?(): Promise<UserListing>;
  /**
   * Whether the upstream budget binds now (the client's `budgetBinds`: a pause runs or the tokens left would not
   * last to the reset). `plan: 'auto'` then plans for fewest requests. @default never binds
   */
  budgetBinds?(): boolean;
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
  /**
   * What the plan minimises. `rounds`: batched probe rounds, then slices of one page each (at most `pageSize - 1`
   * known rows), all readable in one round. `requests`: the density estimate and slices of `targetRows`. `auto`:
   * `requests` while the source's budget binds, else `rounds`. @default 'auto'
   */
  plan?: 'auto' | 'rounds' | 'requests';
  /** Planning for rounds: the workers' page size (a slice holds at most this less one known rows). @default 100 */
  pageSize?: number;
  /** Planning for rounds: probes of the first round per walk (one POST carries 50). @default 50 */
  roundBuckets?: number;
  /** Planning for rounds: probe rounds at most per walk. @default 3 */
  maxProbeRounds?: number;
  /**
   * Full-history transactions (no operator filter): `countryId` proves, on the window where the unfiltered feed is
   * complete, which transaction types the per-country walks partition (each row in exactly one walk), then walks those
   * types per country and only the others per user; with no type proven the plan is the per-user walks. Needs the
   * source's `readPages`. `off`: per-user walks of every type. @default 'off'
   */
  partition?: 'off' | 'countryId';
  /**
   * The proof's window, ending at the run's `until`: the feed's 72 h less a margin, so its oldest rows are still in
   * the feed while it is read (the upstream's now runs on during planning). The proof reads only the newest part of it
   * that `proofFeedBudgetMs` reaches. @default 71 h
   */
  proofWindowMs?: number;
  /**
   * The most serialised feed time the proof may spend on the key (ms; deep feed pages cost seconds each and the
   * service serialises them): the proof's window is the newest hours it reaches. @default 15 000
   */
  proofFeedBudgetMs?: number;
  /**
   * Full history: the partition (proof and per-country walks) only when the feed's head page's rate puts this many
   * rows or more in the proof's window; below, the per-user walks (no proof). The partition saves reading each trade
   * a second time, about rows / 100 / 50 requests (~1 s of the key per 42 k rows at 500 a minute), and its proof costs
   * ~15 s of serial feed plus a few request rounds: at scale small (3.6 k window rows) the per-user plan took 26 s and
   * the partition 51 s; at the real volume (2.2 M window rows, 97 M in all) the partition saves ~40 min. 0: always
   * the partition (the library's default; the CLI's `--partition auto`, its default, sets
   * {@link AUTO_PARTITION_ABOVE_ROWS}). @default 0
   */
  partitionAboveRows?: number;
  /** Types the upstream may emit (see {@link KNOWN_TRANSACTION_TYPES}). @default KNOWN_TRANSACTION_TYPES */
  knownTypes?: readonly string[];
  /** A partition walk whose window holds this many rows or more has its older part probed and cut. @default 5000 */
  historyProbeAbove?: number;
  now?: () => number;
}

export const DEFAULT_PLAN_BACKFILL_OPTIONS = {
  targetRows: 5000,
  probeBuckets: 16,
  maxSlicesPerWalk: 1000,
  plan: 'auto',
  pageSize: 100,
  roundBuckets: 50,
  maxProbeRounds: 3,
  partition: 'off',
  proofWindowMs: 71 * 3_600_000,
  proofFeedBudgetMs: 15_000,
  partitionAboveRows: 0,
  knownTypes: KNOWN_TRANSACTION_TYPES,
  historyProbeAbove: 5000,
} as const;

export interface PlannedRun {
  run: RunJobData;
  slices: SliceJobData[];
  /** Full-history transactions: the listed users (seed of the run's discovery set) and the unlisted count. */
  users?: UserListing;
  /** What planning cost and chose: the plan, probe rounds (sequential) and probe pages. */
  planning: {
    plan: 'rounds' | 'requests';
    probeRounds: number;
    probePages: number;
    /** Probed walks whose probe saw no row with a usable time (each is still one slice). Per-user walks are not probed. */
    emptyWalks: number;
    /** Page reads of the partition proof (the feed's and the walks' over its window); 0 without one. */
    proofPages?: number;
    /**
     * Full history with a partition asked for: the rows the feed's head page's rate puts in the proof's window. Below
     * `partitionAboveRows` the plan is the per-user walks, without a proof.
     */
    feedWindowRows?: number;
  };
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
  if (o.plan !== 'auto' && o.plan !== 'rounds' && o.plan !== 'requests')
    throw new ConfigError(`option plan must be 'auto', 'rounds' or 'requests', got ${String(o.plan)}`);
  if (!Number.isSafeInteger(o.pageSize) || o.pageSize < 2 || o.pageSize > 100)
    throw new ConfigError(`option pageSize must be an integer in [2, 100], got ${String(o.pageSize)}`);
  if (o.partition !== 'off' && o.partition !== 'countryId')
    throw new ConfigError(`option partition must be 'off' or 'countryId', got ${String(o.partition)}`);
  if (
    !Number.isSafeInteger(o.proofWindowMs) ||
    o.proofWindowMs < 1 ||
    o.proofWindowMs > UNFILTERED_TRANSACTION_WINDOW_MS
  )
    throw new ConfigError(
      `option proofWindowMs must be an integer in [1, ${UNFILTERED_TRANSACTION_WINDOW_MS}], got ${String(o.proofWindowMs)}`,
    );
  const forRounds = o.plan === 'rounds' || (o.plan === 'auto' && !(source.budgetBinds?.() ?? false));
  const planning: PlannedRun['planning'] = {
    plan: forRounds ? 'rounds' : 'requests',
    probeRounds: 0,
    probePages: 0,
    emptyWalks: 0,
  };
  /** Planning for rounds: probes one walk's range and cuts it into slices of one page each. */
  const planForRounds = async (
    probe: ProbePage,
    range: TimeRange,
    buckets: number,
  ): Promise<{ ranges: TimeRange[]; rows: number; rounds: number; pages: number }> => {
    const probed = await probeRows(probe, range, {
      buckets,
      limit: o.pageSize,
      maxRounds: o.maxProbeRounds,
    });
    const ranges = planRowSlices(range, probed.stretches, {
      rowsPerSlice: o.pageSize - 1,
      rowsPerEstimatedSlice: Math.floor(o.pageSize / 2),
      maxSlices: o.maxSlicesPerWalk,
    });
    const rows = probed.stretches.reduce((n, st) => n + st.rows, 0);
    return { ranges, rows, rounds: probed.rounds, pages: probed.probes };
  };
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
  let partition: PartitionSummary | undefined;
  const add = (
    resource: ResourceName,
    walk: WalkFilters,
    ranges: PlannedSlice[],
    expectedPages: number | undefined,
  ): void => {
    for (const r of ranges) {
      const pages = r.expectedPages ?? expectedPages;
      slices.push({
        runId,
        sliceId: sliceJobId(runId, { r: resource, ...walk }, r.start, r.end),
        resource,
        filters: walk,
        start: r.start,
        end: r.end,
        replay,
        depth: r.unsplit === true ? UNSPLIT_DEPTH : 0,
        ...(pages === undefined ? {} : { expectedPages: pages }),
      });
    }
  };

  /** `expectedPages`: per slice, when the plan knows it (see {@link SliceJobData.expectedPages}). */
  type Walk = { filters: WalkFilters; ranges: PlannedSlice[]; expectedPages?: number };
  /** The users the per-country listings show (read once, for the per-user walks). */
  const listUsers = async (): Promise<UserListing> =>
    source.userListing ? await source.userListing() : { ids: await source.userIds(), unlisted: 0 };
  /**
   * Full-history transactions by a proven partition: the proof on the window, then the partition walks of the proven
   * types and the per-user walks of the others (the user listing read only then).
   */
  const planPartition = async (
    read: ReadListingPages,
    range: TimeRange,
    fallback?: () => Promise<{ walks: Walk[]; rounds: number }>,
  ): Promise<{ walks: Walk[]; rounds: number }> => {
    const window = { start: Math.max(0, range.start, until - o.proofWindowMs), end: until };
    // A full history at a small volume: the per-user walks cost the key less than the proof would (issue 32).
    if (fallback === undefined && o.partitionAboveRows > 0) {
      const windowRows = await estimateWindowRows(read, window);
      planning.feedWindowRows = windowRows;
      if (windowRows < o.partitionAboveRows) {
        const listing = await listUsers();
        users = listing;
        return {
          walks: listing.ids.map((userId) => ({ filters: { ...filters, userId }, ranges: [range] })),
          rounds: 0,
        };
      }
    }
    const values = await source.countryIds();
    const proof = await provePartition(read, values, window, {
      key: o.partition,
      feedBudgetMs: o.proofFeedBudgetMs,
      knownTypes: o.knownTypes,
      pageSize: o.pageSize,
    });
    partition = summarizePartition(proof);
    planning.proofPages = partition.pages;
    const { provenTypes, unprovenTypes } = proof.proof;
    // A range of the feed's window (not a full history): the partition only when it holds for every type; else the
    // feed as before (per-user walks would need the users listed, for a range the feed reads whole).
    if (fallback !== undefined && unprovenTypes.length > 0) {
      partition = { ...partition, used: false };
      return fallback();
    }
    // The users are listed only when some type is walked per user (at the real volume the listing is ~1,240 pages).
    let listed: Promise<UserListing> | undefined;
    const listOnce = (): Promise<UserListing> => (listed ??= listUsers());
    const perUser = async (types: readonly string[] | undefined): Promise<Walk[]> => {
      const listing = await listOnce();
      users = listing;
      const typeFilter =
        types === undefined
          ? {}
          : { transactionType: types.length === 1 ? (types[0] as string) : [...types] };
      return listing.ids.map((userId) => ({
        filters: { ...filters, userId, ...typeFilter },
        ranges: [range],
      }));
    };
    // Nothing proven: exactly the per-user walks of every type.
    if (provenTypes.length === 0) return { walks: await perUser(undefined), rounds: 0 };
    if (unprovenTypes.length > 0) {
      // Users the listings hide are found by discovery, from the pages of per-user walks only: with the proven types
      // walked per country, a hidden user's unproven rows would be found only through an unproven-type trade with a
      // walked user. So with hidden users, the per-user plan of every type (discovery through any trade), as before.
      if ((await listOnce()).unlisted > 0) {
        partition = { ...partition, used: false };
        return { walks: await perUser(undefined), rounds: 0 };
      }
    }
    // Every known type proven: the partition walks read every type (no filter), so no row of a type never seen
    // hides behind a type filter.
    const types = unprovenTypes.length === 0 ? undefined : provenTypes;
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
      probe: (f) => source.probe('transactions', f),
    });
    planning.probePages += planned.probePages;
    const walks: Walk[] = planned.walks.map((w) => ({ filters: w.filters, ranges: w.slices }));
    if (unprovenTypes.length > 0) walks.push(...(await perUser(unprovenTypes)));
    return { walks, rounds: planned.probeRounds };
  };
  /** One resource's walks and the probe rounds they took (the resources are planned at the same time). */
  const planResource = async (resource: ResourceName): Promise<{ walks: Walk[]; rounds: number }> => {
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
    if (resource === 'transactions' && fullHistory && filters['userId'] === undefined) {
      if (o.partition !== 'off' && source.readPages !== undefined && Object.keys(filters).length === 0)
        return planPartition(source.readPages, { start: since, end: until });
      // Users listed without `_id` are walked when a trade reveals them (src/jobs/user-discovery.ts).
      const listing = await listUsers();
      users = listing;
      // One whole-range slice per user under both plans: a user's first page IS its probe. Planned for rounds, all
      // of them are read at once (many slices in flight), so every walk's first page goes out in the same round; a
      // busy user splits while it is read. Probing each user first would read that same head page twice.
      const range = { start: since, end: until };
      return {
        walks: listing.ids.map((userId) => ({ filters: { ...filters, userId }, ranges: [range] })),
        rounds: 0,
      };
    }
    // Transactions over the unfiltered feed's window, deeper than an hour: the feed's deep pages cost seconds of the
    // key's serialised time each (~21 h for the real 72 h), the per-country walks a fraction of a second side by side.
    // So, when the partition proof holds for every type, the window is read per country (issue 32).
    const feedWindow = resource === 'transactions' && !fullHistory && Object.keys(filters).length === 0;
    if (feedWindow && o.partition !== 'off' && source.readPages !== undefined) {
      const start = request.since ?? until - UNFILTERED_TRANSACTION_WINDOW_MS;
      if (start < until - DEEP_FEED_MS)
        return planPartition(source.readPages, { start, end: until }, () => planWalk(resource));
    }
    return planWalk(resource);
  };
  /** One probed walk of a listing (the unfiltered feed of transactions, or any other resource). */
  const planWalk = async (resource: ResourceName): Promise<{ walks: Walk[]; rounds: number }> => {
    const since = request.since ?? 0;
    const probe = source.probe(resource, filters);
    let start: number;
    if (request.since !== undefined) start = request.since;
    else if (resource === 'transactions' && Object.keys(filters).length === 0 && !fullHistory)
      start = until - UNFILTERED_TRANSACTION_WINDOW_MS;
    else {
      // The head page first (one procedure, as the search's own first probe would be): a listing that fits in it
      // (the 40 parties of scale small) is all known, so it is one slice and needs neither the search for its
      // earliest row (~130 one-row probes over the epoch) nor density probes. The slice starts at `since` (0): what
      // the probe cannot time (rows without a usable time, dropped by it) is read there too.
      const head = await probe(until, o.pageSize);
      if (head.length === 0) return { walks: [], rounds: 0 }; // nothing to read
      if (head.length < o.pageSize)
        return { walks: [{ filters, ranges: [{ start: since, end: until }] }], rounds: 1 };
      const earliest = await findEarliest(probe, until);
      if (earliest === null) return { walks: [], rounds: 0 }; // nothing to read
      start = earliest;
    }
    if (start >= until) return { walks: [], rounds: 0 };
    const range = { start, end: until };
    if (forRounds) {
      const walk = await planForRounds(probe, range, o.roundBuckets);
      planning.probePages += walk.pages;
      if (walk.rows === 0) planning.emptyWalks++;
      // Slices of one page each (at most pageSize - 1 rows).
      return { walks: [{ filters, ranges: walk.ranges, expectedPages: 1 }], rounds: walk.rounds };
    }
    const density = await probeDensity(probe, range, { buckets: o.probeBuckets });
    planning.probePages += density.rows.length;
    const ranges = planSlices(range, density, { targetRows: o.targetRows, maxSlices: o.maxSlicesPerWalk });
    const estimatedRows = density.rows.reduce((n, r) => n + Math.max(0, r), 0);
    return {
      walks: [
        {
          filters,
          ranges,
          // The estimated rows shared among the slices, plus the page that ends each read.
          expectedPages: Math.ceil(estimatedRows / Math.max(1, ranges.length) / o.pageSize) + 1,
        },
      ],
      rounds: 1,
    };
  };
  // Every resource at once, so their probes share rounds (and POSTs); slices are added in the request's order.
  const planned = await Promise.all(request.resources.map((resource) => planResource(resource)));
  planned.forEach(({ walks, rounds }, i) => {
    planning.probeRounds = Math.max(planning.probeRounds, rounds);
    for (const walk of walks)
      add(request.resources[i] as ResourceName, walk.filters, walk.ranges, walk.expectedPages);
  });
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
    ...(partition === undefined ? {} : { partition }),
  };
  return { run, slices, ...(users === undefined ? {} : { users }), planning };
}

/**
 * The rows of the feed's window at the rate of its head page (one page read): the page's rows over the time they
 * span, times the window; all of them when the page holds the window whole.
 */
async function estimateWindowRows(read: ReadListingPages, window: TimeRange): Promise<number> {
  for await (const page of read('transactions', {}, window)) {
    const times = page.items
      .map((i) => (typeof i['createdAt'] === 'string' ? Date.parse(i['createdAt']) : Number.NaN))
      .filter(Number.isFinite);
    if (page.cursor === null || page.cursor === undefined || times.length === 0) return page.items.length;
    const span = Math.max(1, window.end - Math.min(...times));
    return Math.round((page.items.length * (window.end - window.start)) / span);
  }
  return 0;
}
