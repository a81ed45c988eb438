/**
 * One exactly-once slice's run state, passed explicitly between its parts (`eos-recovery.ts`, `eos-page.ts`,
 * `process-slice-exactly-once.ts`): the job data, Kafka's checkpoint state, what the run's counters hold, and the open
 * transaction; and the commit that moves them together. The run's counters and the job data follow Kafka's
 * checkpoint at most every `bookMs` (and at the slice's end, a split or an interruption): both are hints that the
 * next owner repairs from the checkpoint (`addThrough` counts cumulative figures once; `readFrom` only has to be at
 * or below the newest checkpoint), so booking every commit cost two Redis round trips a commit for nothing.
 */
import type { PendingPage } from '../dedup/index.js';
import type { SliceCheckpoint, SliceSession } from '../../output/kafka/index.js';
import type { RunCounterValues, SliceJobData, SliceResult } from '../contract/job-types.js';
import type { ExactlyOnceDelivery, ProcessSliceDeps, SliceJobHandle } from './slice-contract.js';

export const DEFAULT_EXACTLY_ONCE_OPTIONS = {
  pagesPerTransaction: 8,
  transactionMs: 500,
  bookMs: 1_000,
} as const;

/** The value of a slice's checkpoint record (JSON). Counts are cumulative over the slice's whole life. */
export interface SliceCheckpointState {
  cursor: string | null;
  start: number;
  /** The slice read its last page. */
  done: boolean;
  counts: RunCounterValues;
  pages: number;
  splits: number;
}

export interface ExactlyOnceSliceOptions {
  pageSize: number;
  targetRows: number;
  splitFactor: number;
  maxSplitParts: number;
  maxDepth: number;
  minPagesBeforeSplit: number;
  signal?: AbortSignal | undefined;
  now: () => number;
  /** See `SliceWalkOptions.spareSlots`. */
  spareSlots?: (() => number) | undefined;
  /** See `SliceWalkOptions.keySpare`. */
  keySpare?: (() => boolean) | undefined;
}

export const ZERO: RunCounterValues = { fetched: 0, published: 0, deduplicated: 0, deadLettered: 0 };

export function addCounts(a: RunCounterValues, b: RunCounterValues): RunCounterValues {
  return {
    fetched: a.fetched + b.fetched,
    published: a.published + b.published,
    deduplicated: a.deduplicated + b.deduplicated,
    deadLettered: a.deadLettered + b.deadLettered,
  };
}

function minus(a: RunCounterValues, b: RunCounterValues): RunCounterValues {
  return {
    fetched: Math.max(0, a.fetched - b.fetched),
    published: Math.max(0, a.published - b.published),
    deduplicated: Math.max(0, a.deduplicated - b.deduplicated),
    deadLettered: Math.max(0, a.deadLettered - b.deadLettered),
  };
}

const isZero = (c: RunCounterValues): boolean =>
  c.fetched === 0 && c.published === 0 && c.deduplicated === 0 && c.deadLettered === 0;

/** The slice's run: what its parts share (mutable fields move together in {@link commit}). */
export interface EosRun {
  job: SliceJobHandle;
  deps: ProcessSliceDeps;
  eos: ExactlyOnceDelivery;
  o: ExactlyOnceSliceOptions;
  session: SliceSession<SliceCheckpointState>;
  sliceKey: string;
  /** Book the counters and job data at most this often, ms. */
  bookMs: number;
  data: SliceJobData;
  state: SliceCheckpointState;
  /** The cumulative figures the run's counters hold for this slice. */
  counted: RunCounterValues;
  bookedAt: number;
  /** The open transaction: its pages with ids, counts, pages, and when its first page came. */
  open: PendingPage[];
  openCounts: RunCounterValues;
  openPages: number;
  openSince: number;
}

/**
 * Counts the slice's cumulative figures up to `through`. With `addThrough` the run's counters keep what each slice
 * counted, so a crash between counting and saving `counted` in the job data is not counted twice.
 */
export async function countUpTo(
  deps: ProcessSliceDeps,
  data: SliceJobData,
  through: RunCounterValues,
  counted: RunCounterValues,
): Promise<void> {
  const delta = minus(through, counted);
  if (isZero(delta)) return;
  if (deps.counters.addThrough !== undefined)
    await deps.counters.addThrough(data.runId, data.sliceId, through, data.resource);
  else await deps.counters.add(data.runId, delta, data.resource);
}

/** The slice's result from its checkpoint state. */
export const sliceResult = (run: EosRun): SliceResult => ({
  ...run.state.counts,
  pages: run.state.pages,
  splits: run.state.splits,
});

/** Brings the counters and the job data up to the checkpoint `ckpt` just committed. */
async function book(run: EosRun, ckpt: SliceCheckpoint<SliceCheckpointState>): Promise<void> {
  run.bookedAt = run.o.now();
  await countUpTo(run.deps, run.data, run.state.counts, run.counted);
  run.counted = run.state.counts;
  run.data = { ...run.data, eos: { readFrom: ckpt.offset, counted: run.counted } };
  await run.job.checkpoint(run.data);
}

/** Commits the open transaction with the checkpoint `next`, settles its pages, and books when due (or `force`). */
export async function commit(
  run: EosRun,
  next: { cursor: string | null; start: number; done: boolean },
  force = false,
): Promise<void> {
  const target: SliceCheckpointState = {
    ...next,
    counts: addCounts(run.state.counts, run.openCounts),
    pages: run.state.pages + run.openPages,
    splits: run.state.splits,
  };
  const ckpt = await run.session.commit(target);
  run.state = target;
  const pages = run.open;
  run.open = [];
  run.openCounts = ZERO;
  run.openPages = 0;
  if (pages.length > 0) await run.eos.marks.settle(run.sliceKey, pages, true);
  if (!force && !next.done && run.o.now() - run.bookedAt < run.bookMs) return;
  await book(run, ckpt);
}

/** The checkpoint of where the slice stands now (`done`: it read its last page). */
export const checkpointNow = (
  run: EosRun,
  done = false,
): { cursor: string | null; start: number; done: boolean } => ({
  cursor: run.data.cursor ?? null,
  start: run.data.start,
  done,
});

/** Commits the open transaction when it holds anything (pages or a moved cursor). */
export async function commitOpen(run: EosRun, force = false): Promise<void> {
  if (run.openPages > 0) await commit(run, checkpointNow(run), force);
}
