/**
 * What `planBackfill` takes and gives: the request, the upstream source, the options with their defaults (checked
 * once by {@link resolvePlanOptions}), and the planned run.
 */
import { ConfigError } from '../../foundation/errors/index.js';
import { TRANSACTION_TYPES } from '../../foundation/models/index.js';
import type { ResourceName } from '../../foundation/models/index.js';
import type { RunJobData, SliceJobData, WalkFilters } from '../contract/job-types.js';
import type { ProbePage } from './probe-density.js';
import type { ReadListingPages } from './prove-partition.js';

/** The window rows above which `--partition auto` (the CLI's default) plans a full history by the partition. */
export const AUTO_PARTITION_ABOVE_ROWS = 500_000;

/** The unfiltered transaction feed reaches back exactly this far. */
export const UNFILTERED_TRANSACTION_WINDOW_MS = 72 * 3_600_000;

/**
 * A transactions range reaching deeper than this below `until` is read per country when the partition proof holds
 * (its feed pages would cost 0.33 s and more each, serialised on the key; see `models/call-cost.ts`).
 */
export const DEEP_FEED_MS = 3_600_000;

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
   * through a trade with a walked user); `countryIds`: the countries already read (else read again); `onUsers`: told
   * of each listing page's user ids as the page arrives (in any order, possibly twice; must not throw).
   * @default `userIds()` with 0 unlisted
   */
  userListing?(
    countryIds?: readonly string[],
    onUsers?: (ids: readonly string[]) => void,
  ): Promise<UserListing>;
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
    /**
     * Each partition walk's rows in the proof's window (by value of the key, counting only the types the walk reads):
     * what `backfill --dry-run` prices a quiet walk's whole history by (`sampleWalkPages`).
     */
    walkWindowRows?: Map<string, number>;
  };
}

const withDefaults = (options: PlanBackfillOptions) => ({ ...DEFAULT_PLAN_BACKFILL_OPTIONS, ...options });

/** The options with every default applied. */
export type ResolvedPlanOptions = ReturnType<typeof withDefaults>;

/**
 * Applies the defaults and checks the options.
 * @throws ConfigError naming a bad `plan`, `pageSize`, `partition` or `proofWindowMs`.
 */
export function resolvePlanOptions(options: PlanBackfillOptions): ResolvedPlanOptions {
  const o = withDefaults(options);
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
  return o;
}
