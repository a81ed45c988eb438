/** Typed payloads of the pipeline's BullMQ jobs. */
import type { ResourceName } from '../models/resources.js';
import type { CallPriority } from '../budget/priority.js';

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
}

/** Data of a slice job: one listing (resource + filters) over `[start, end)`, resumed from `cursor`. */
export interface SliceJobData {
  runId: string;
  sliceId: string;
  resource: ResourceName;
  /** Listing filters (operator filters plus the walk's own, e.g. `countryId` or `userId`). */
  filters: Record<string, string>;
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
}

/** Counters of one run, kept in Redis. */
export interface RunCounterValues {
  fetched: number;
  published: number;
  deduplicated: number;
  deadLettered: number;
}
