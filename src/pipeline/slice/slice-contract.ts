/**
 * The contract of one slice's work, shared by both delivery paths (`process-slice-at-least-once.ts`,
 * `process-slice-exactly-once.ts`): the job handle, the page source, the counters, the options, and what exactly-once
 * delivery adds. Independent of BullMQ and Kafka, so both paths are unit-tested with recording fakes.
 */
import { securityFailure } from '../../foundation/config/index.js';
import {
  ConfigError,
  GamedataError,
  KafkajsPatchError,
  MissingResultError,
  UpstreamError,
  ValidationError,
} from '../../foundation/errors/index.js';
import type { DedupRecord, DedupStore, PendingMarks } from '../dedup/index.js';
import type { ResourceName } from '../../foundation/models/index.js';
import type { Lineage, PageEncoder, PagePublisher } from '../publish/index.js';
import type { TransactionalSlicePublisher } from '../../output/kafka/index.js';
import type { RunCounterValues, SliceJobData, WalkFilters } from '../contract/job-types.js';

/** One page of a slice, newest first, with the cursor to resume after it. */
export interface SlicePage {
  items: DedupRecord[];
  cursor: string | null | undefined;
  /**
   * The user whose per-user walk read the page, in a run that walks every party of its trades (set by user
   * discovery): the rows another walk of the run owns are dropped before any claim (`row-owner.ts`).
   */
  walker?: string;
}

/** Reads the pages of a slice (the client's `readSlice` behind the pipeline's own interface). */
export interface SliceSource {
  readPages(
    slice: { resource: ResourceName; filters: WalkFilters; start: number; end: number },
    options: { cursor?: string; signal?: AbortSignal },
  ): AsyncIterable<SlicePage>;
  /**
   * Turns listing items into the records to publish (users: thin listing items -> full profiles, batched).
   * @default identity
   */
  enrich?(resource: ResourceName, items: DedupRecord[], signal?: AbortSignal): Promise<DedupRecord[]>;
  /** The source operation written into lineage headers. */
  operation(resource: ResourceName): string;
}

/** Per-run counters (Redis hash in production). */
export interface CounterSink {
  add(runId: string, delta: Partial<RunCounterValues>, resource?: ResourceName): Promise<void>;
  /**
   * Counts a slice's cumulative figures once (see `RunCounters.addThrough`); exactly-once slices use it when present,
   * else they add differences with `add` (exact unless a worker dies between counting and saving its job data).
   */
  addThrough?(
    runId: string,
    sliceId: string,
    cumulative: RunCounterValues,
    resource?: ResourceName,
  ): Promise<RunCounterValues>;
}

/** What processSlice needs from the job that carries the slice. */
export interface SliceJobHandle {
  data: SliceJobData;
  /** Persists new job data (the checkpoint). */
  checkpoint(data: SliceJobData): Promise<void>;
  /** Adds child slices to the same run (deterministic ids, so adding twice is harmless). */
  spawn(children: SliceJobData[]): Promise<void>;
  /**
   * The job data as stored now (exactly-once: re-read after fencing the slice's earlier owners).
   * @default the data the job was taken with
   */
  reload?(): Promise<SliceJobData>;
}

export interface ProcessSliceOptions {
  /** Page size asked of the upstream (its maximum is 100). @default 100 */
  pageSize?: number;
  /** Rows a slice should hold; a slice expecting more than `splitFactor` times this splits. @default 5000 */
  targetRows?: number;
  /** @default 2 */
  splitFactor?: number;
  /** At most this many pieces per split. @default 8 */
  maxSplitParts?: number;
  /** Splits nest at most this deep. @default 6 */
  maxDepth?: number;
  /** Read at least this many pages before judging density. @default 2 */
  minPagesBeforeSplit?: number;
  /** Aborted on shutdown: the slice stops after the page in hand is checkpointed. */
  signal?: AbortSignal;
  now?: () => number;
  /** The worker's idle slots a split of this slice may fill (see `SliceWalkOptions.spareSlots`). @default none */
  spareSlots?: () => number;
  /** Whether the key has requests to spare (see `SliceWalkOptions.keySpare`). @default never */
  keySpare?: () => boolean;
}

export const DEFAULT_PROCESS_SLICE_OPTIONS = {
  pageSize: 100,
  targetRows: 5000,
  splitFactor: 2,
  maxSplitParts: 8,
  maxDepth: 6,
  minPagesBeforeSplit: 2,
} as const;

export interface ProcessSliceDeps {
  source: SliceSource;
  dedup: DedupStore;
  publisher: PagePublisher;
  counters: CounterSink;
  /** Exactly-once delivery (`GAMEDATA_DELIVERY=exactly-once`); undefined: at-least-once through `publisher`. */
  eos?: ExactlyOnceDelivery | undefined;
}

/** What the exactly-once path needs besides the common slice deps. */
export interface ExactlyOnceDelivery {
  /** The transactional slice publisher (`createTransactionalSlicePublisher`). */
  publisher: Pick<TransactionalSlicePublisher, 'openSlice' | 'fence' | 'readCommitted' | 'lastStableOffset'> &
    Partial<Pick<TransactionalSlicePublisher, 'fenceWriter' | 'fenceTaken' | 'sessionLive'>>;
  /** Encodes a page without sending it (`createPageEncoder`). */
  encode: PageEncoder;
  /** The pending-marks protocol on the seen-sets (`createPendingMarks(createRedisPendingMarks(redis))`). */
  marks: PendingMarks;
  /** Pages per transaction (a transaction also ends after `transactionMs`). @default 8 */
  pagesPerTransaction?: number;
  /** A transaction commits at the first page after it has been open this long. @default 500 */
  transactionMs?: number;
  /**
   * The run's counters and the job data (`eos.readFrom`) are brought up to the committed checkpoint at most this
   * often, and at the slice's end, a split and an interruption. @default 1_000
   */
  bookMs?: number;
}

/**
 * Whether an error from a slice should be retried by BullMQ (true: another attempt after a backoff) or fail the run at
 * once (false). At once only when another attempt cannot help: the upstream refused or garbled what the slice asks for
 * (a non-retriable {@link UpstreamError}, {@link ValidationError}, {@link MissingResultError}), a setting or the
 * installation is wrong ({@link ConfigError}, {@link KafkajsPatchError}), or a service refused this process for
 * security (a certificate, a missing permission: {@link securityFailure}). Anything else spends an attempt, even when
 * it says it is not retriable: a Kafka, Redis or BullMQ error that only a library's own retries gave up on (an
 * exactly-once CI run failed its run on one slice while its broker restarted, 2026-11-28), or an error nobody
 * classified, heals on the next attempt or fails after the last one with its reason.
 */
export function isRetriableSliceError(error: unknown): boolean {
  const e = GamedataError.from(error);
  if (e.retriable) return true;
  if (e instanceof UpstreamError || e instanceof ValidationError || e instanceof MissingResultError)
    return false;
  if (e instanceof ConfigError || e instanceof KafkajsPatchError) return false;
  return securityFailure(error) === undefined;
}

/** The lineage of a page of the slice (its records' headers), in both delivery paths. */
export function pageLineage(data: SliceJobData, source: SliceSource, fetchedAt: number): Lineage {
  return {
    runId: data.runId,
    sliceId: data.sliceId,
    sourceOperation: source.operation(data.resource),
    fetchedAt,
  };
}
