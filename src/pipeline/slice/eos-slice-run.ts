/**
 * One exactly-once slice's run (`createEosRun`), handed to its parts (`eos-recovery.ts` makes it, `eos-page.ts` adds
 * pages, `process-slice-exactly-once.ts` walks and commits): the job data, Kafka's checkpoint state, what the run's
 * counters hold, and the open transaction. Only the run's own operations change them, so the commit that moves them
 * together is the one place they are written. The run's counters and the job data follow Kafka's
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

/** What a slice's run starts from (`eos-recovery.ts`): its parts, and the state recovered from Kafka's checkpoint. */
export interface EosRunStart {
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
}

/** One page as it joins the open transaction (`eos-page.ts` claimed and encoded it). */
export interface OpenPage {
  /** The page's records and dead letters, for the session. */
  sent: Parameters<SliceSession<SliceCheckpointState>['addPage']>[0];
  /** The page's claimed ids (settled when the transaction commits). */
  claimed: PendingPage;
  counts: RunCounterValues;
  /** The slice's cursor after the page (undefined or null: it does not move). */
  cursor: string | null | undefined;
}

/**
 * The slice's run: its parts, read by the files that claim, encode and walk; and its state (the job data, Kafka's
 * checkpoint state, the counters booked, the open transaction), changed only by these operations
 * ({@link createEosRun}), so the fields that move together in a commit are written in one place.
 */
export interface EosRun {
  readonly job: SliceJobHandle;
  readonly deps: ProcessSliceDeps;
  readonly eos: ExactlyOnceDelivery;
  readonly o: ExactlyOnceSliceOptions;
  readonly session: SliceSession<SliceCheckpointState>;
  readonly sliceKey: string;
  /** The slice's job data as the run knows it (its cursor moves with each page). */
  readonly data: SliceJobData;
  /** Kafka's checkpoint state as last committed. */
  readonly state: SliceCheckpointState;
  /** The slice's result from its checkpoint state. */
  result(): SliceResult;
  /** The slice goes on reading: booking is due `bookMs` from now. */
  startReading(): void;
  /** Adds `page` to the open transaction, and moves the slice's cursor past it. */
  join(page: OpenPage): void;
  /** Whether the open transaction is due: `pages` pages in it, or its first page came `ms` ago. */
  openDue(pages: number, ms: number): boolean;
  /** Commits the open transaction with the checkpoint `next`, settles its pages, and books when due (or `force`). */
  commit(next: SliceCheckpointAt, force?: boolean): Promise<void>;
  /** Commits the open transaction when it holds anything (pages or a moved cursor). */
  commitOpen(force?: boolean): Promise<void>;
  /** The checkpoint of where the slice stands now (`done`: it read its last page). */
  checkpointNow(done?: boolean): SliceCheckpointAt;
  /**
   * The slice split and keeps `[keepStart, ...)`: checkpoints the narrowed start with one more split, once the
   * children exist (the caller committed the splitting page and waited for them).
   */
  narrow(keepStart: number): Promise<void>;
  /**
   * Forgets the open transaction's pages without settling them (a failed run): their page keys are the slice's, and
   * the slice may have a new owner by now whose locks carry the same keys. The next owner settles the intent.
   */
  dropOpen(): void;
}

/** Where a checkpoint puts the slice. */
export type SliceCheckpointAt = Pick<SliceCheckpointState, 'cursor' | 'start' | 'done'>;

/** The slice's run from where it starts (see {@link EosRun}). */
export function createEosRun(start: EosRunStart): EosRun {
  const { job, deps, eos, o, session, sliceKey, bookMs } = start;
  let data = start.data;
  let state = start.state;
  let counted = start.counted;
  let bookedAt = 0;
  // The open transaction: its pages with ids, counts, pages, and when its first page came.
  let open: PendingPage[] = [];
  let openCounts = ZERO;
  let openPages = 0;
  let openSince = 0;

  /** Brings the counters and the job data up to the checkpoint `ckpt` just committed. */
  const book = async (ckpt: SliceCheckpoint<SliceCheckpointState>): Promise<void> => {
    bookedAt = o.now();
    await countUpTo(deps, data, state.counts, counted);
    counted = state.counts;
    data = { ...data, eos: { readFrom: ckpt.offset, counted } };
    await job.checkpoint(data);
  };

  const run: EosRun = {
    ...{ job, deps, eos, o, session, sliceKey },
    get data() {
      return data;
    },
    get state() {
      return state;
    },
    result: () => ({ ...state.counts, pages: state.pages, splits: state.splits }),
    startReading: () => {
      bookedAt = o.now();
    },
    join(page) {
      if (openPages === 0) openSince = o.now();
      session.addPage(page.sent);
      if (page.claimed.entries.length > 0) open.push(page.claimed);
      openPages += 1;
      openCounts = addCounts(openCounts, page.counts);
      if (page.cursor !== undefined && page.cursor !== null) data = { ...data, cursor: page.cursor };
    },
    openDue: (pages, ms) => openPages >= pages || o.now() - openSince >= ms,
    async commit(next, force = false) {
      const target: SliceCheckpointState = {
        ...next,
        counts: addCounts(state.counts, openCounts),
        pages: state.pages + openPages,
        splits: state.splits,
      };
      const ckpt = await session.commit(target);
      state = target;
      const pages = open;
      open = [];
      openCounts = ZERO;
      openPages = 0;
      if (pages.length > 0) await eos.marks.settle(sliceKey, pages, true);
      if (!force && !next.done && o.now() - bookedAt < bookMs) return;
      await book(ckpt);
    },
    async commitOpen(force = false) {
      if (openPages > 0) await run.commit(run.checkpointNow(), force);
    },
    checkpointNow: (done = false) => ({ cursor: data.cursor ?? null, start: data.start, done }),
    async narrow(keepStart) {
      data = { ...data, start: keepStart };
      state = { ...state, splits: state.splits + 1 };
      await run.commit(run.checkpointNow(), true);
    },
    dropOpen: () => {
      open = [];
    },
  };
  return run;
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
