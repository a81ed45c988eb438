/** Typed payloads of the pipeline's BullMQ jobs. */
import type { ResourceName, CallPriority } from '../../foundation/models/index.js';

/**
 * Listing filters of a walk, by wire name: one value, or several where the upstream takes a list
 * (`transactionType`: a partition walk reads its proven types, a per-user walk the others).
 */
export type WalkFilters = Record<string, string | string[]>;

/**
 * What the partition proof of a full-history transactions run found (issue 23; `planBackfill`'s `partition`):
 * inside the window where the unfiltered feed is complete, how the feed's rows lay in the walks of one key.
 */
export interface PartitionSummary {
  /** The filter the walks are partitioned by (`countryId`). */
  key: string;
  /** Walks of the partition (one per value of the key). */
  walks: number;
  /**
   * The proof's range, epoch ms, half-open: the feed and the walks were read over it. The newest hours the proof's
   * feed budget reached (`provePartition`'s `feedBudgetMs`), at most the feed's 72 h less a margin.
   */
  window: { start: number; end: number };
  /** The estimated serialised feed time the proof spent on the key (s; `models/call-cost.ts`). */
  feedSeconds?: number;
  /** Types whose every feed row lay in exactly one walk: read by the partition walks. Sorted. */
  provenTypes: string[];
  /** The other known types (and any seen type not proven): read per user, as before. Sorted. */
  unprovenTypes: string[];
  /**
   * Feed rows in exactly one walk (covered), in none (uncovered), in several (repeated); walk rows the feed lacked
   * (foreign: then nothing is proven).
   */
  rows: { covered: number; uncovered: number; repeated: number; foreign: number };
  /** The same per type (feed rows). */
  byType: Record<string, { rows: number; covered: number; uncovered: number; repeated: number }>;
  /** Page reads the proof took (the feed's and the walks'). */
  pages: number;
  /** Rows left out of the proof: no usable `_id` or `transactionType` (malformed: dead-lettered by the run). */
  unidentified: number;
  /**
   * `false` when the plan did not use the proof: some types unproven and users hidden from the listings, so every type
   * is walked per user (discovery reaches hidden users only from per-user walks). Absent: used when a type is proven.
   */
  used?: boolean;
}

/** Data of a run (the parent job of a flow). */
export interface RunJobData {
  runId: string;
  resources: ResourceName[];
  /** Range of the run, epoch ms, half-open. */
  since: number;
  until: number;
  /** The operator's `--filter key=value` pairs. */
  filters: Record<string, string>;
  fullHistory: boolean;
  /** `--replay`: publish records earlier runs already published (still once within this run). */
  replay: boolean;
  createdAt: number;
  slices: number;
  /** Full-history transactions: user listing items without `_id` (those users are walked only if discovered). */
  unlistedUsers?: number;
  /**
   * Priority of the run's upstream calls on the shared budget, set by whoever starts the run: tails of
   * transactions/donations `feed-tail`, tails of changing resources `resource-tail`, backfills `backfill`, rescans
   * `rescan`. Absent (runs enqueued before it existed): `backfill`.
   */
  priority?: CallPriority;
  /**
   * Full-history transactions planned from a partition proof (`planBackfill`'s `partition` option): what the proof
   * found. Per-user walks (planned or discovered) then read only `unprovenTypes` (none when the list is empty: every
   * row is in a partition walk); with no proven type the plan is the per-user walks of every type, as without it.
   */
  partition?: PartitionSummary;
  /**
   * A tail's run (issue 48): a slice whose attempts are spent does not fail the run; its range is recorded as a gap
   * (`src/pipeline/queue/range-gaps.ts`) when the run completes, and the tail moves on. Absent: the slice fails the run.
   */
  gapOnFailure?: boolean;
}

/** Data of a slice job: one listing (resource + filters) over `[start, end)`, resumed from `cursor`. */
export interface SliceJobData {
  runId: string;
  sliceId: string;
  resource: ResourceName;
  /** Listing filters (operator filters plus the walk's own, e.g. `countryId` or `userId`, and its types). */
  filters: WalkFilters;
  start: number;
  end: number;
  /** Checkpoint: the cursor to resume after (the last page fully published and marked seen). */
  cursor?: string;
  replay: boolean;
  /** How many times this slice's range was produced by a split (bounds runaway splitting). */
  depth: number;
  /** Exactly-once delivery: set before the slice first commits and after each commit. */
  eos?: SliceEosData;
  /** Priority of the slice's upstream calls (its run's, see {@link RunJobData.priority}); absent: the run's. */
  priority?: CallPriority;
  /**
   * Pages the planner expects the slice to read (a density plan: its share of the estimated rows; a plan for rounds:
   * 1). The budget's fetcher weighs the work coming by it (`createQueuedSlices`). Absent: unknown (per-user walks,
   * listings read whole); a split's pieces inherit their parent's, an over-estimate.
   */
  expectedPages?: number;
  /**
   * Set on a run's planning hold only (`src/pipeline/queue/planning-hold.ts`): not a slice to read, and the worker that takes
   * it fails the run, with the planner's `reason` when it gave one.
   */
  hold?: { reason?: string };
  /** Its run's {@link RunJobData.gapOnFailure}: failing for good, the slice leaves a gap instead of failing the run. */
  gapOnFailure?: boolean;
}

/** What a slice's job data remembers of its exactly-once delivery (`SliceJobData.eos`: a hint, Kafka is the truth). */
export interface SliceEosData {
  /**
   * Where the recovery read of the slice's checkpoint starts (inclusive) in its `<prefix>.__slices` partition: the
   * offset of a checkpoint record of the slice, or the partition's last stable offset before the slice first committed.
   */
  readFrom: string;
  /** The slice's cumulative counts already added to the run counters (the rest is added at recovery). */
  counted: RunCounterValues;
}

/** What a slice job returns when it completes. */
export interface SliceResult {
  fetched: number;
  published: number;
  deduplicated: number;
  deadLettered: number;
  pages: number;
  splits: number;
}

/** What a run job returns when every slice completed. */
export interface RunResult {
  runId: string;
  counters: RunCounterValues;
  completedAt: number;
  /**
   * Full-history transactions: user listing items without `_id`, and users walked because a trade revealed them
   * (see `user-discovery.ts`). Present only on runs that walk per user.
   */
  users?: { unlistedUsers: number; discoveredUsers: number };
  /** Runs with {@link RunJobData.gapOnFailure}: the slices that failed for good, each recorded as a gap. */
  gaps?: number;
}

/** Counters of one run, kept in Redis. */
export interface RunCounterValues {
  fetched: number;
  published: number;
  deduplicated: number;
  deadLettered: number;
}
