/**
 * The exactly-once work of one slice (`GAMEDATA_DELIVERY=exactly-once`), independent of BullMQ and Kafka (unit-tested
 * with recording fakes). A slice is a Kafka transactional session (`sink/transactional-slice-publisher.ts`):
 *
 * open (fence earlier owners, read the last committed checkpoint) -> settle the previous owner's intent -> per page:
 * claim its ids for page key `<sliceId>#<seq>` (dedup/pending-marks) -> write the intent -> encode -> add to the
 * transaction; every K pages or T ms (and at the end, before a split, on shutdown, before waiting for another
 * slice's page): commit pages + dead letters + checkpoint `{ cursor, start, done, counts }` in one transaction ->
 * settle the pages (mark seen, unlock) -> add the counters -> save `eos.readFrom` in the job data.
 *
 * A crash anywhere is repaired by the next owner from Kafka's checkpoint (the truth; job data is a hint), and a
 * fenced owner (SliceFencedError) stops with no Redis writes: no settle, no counters, no checkpoint.
 *
 * The parts: `eos-recovery.ts` (open and recover), `eos-page.ts` (a page joins the open transaction),
 * `eos-slice-run.ts` (the run's state and the commit); this file walks the pages.
 */
import { SliceInterruptedError } from '../errors.js';
import type { SliceEosData, SliceJobData, SliceResult } from '../planner/job-types.js';
import { childSlices } from './child-slices.js';
import { addPage } from './eos-page.js';
import { openSession, recoverRun } from './eos-recovery.js';
import {
  checkpointNow,
  commit,
  commitOpen,
  DEFAULT_EXACTLY_ONCE_OPTIONS,
  sliceResult,
  type EosRun,
  type ExactlyOnceSliceOptions,
} from './eos-slice-run.js';
import { prefetchFirstPage, readingAhead, readSlicePages } from './page-reader.js';
import type { ExactlyOnceDelivery, ProcessSliceDeps, SliceJobHandle, SlicePage } from './slice-contract.js';
import { createSliceWalk, type SliceWalk } from './slice-walk.js';
import type { RemainingSplit } from '../slicing/index.js';

export { anonymousId } from './eos-page.js';
export { DEFAULT_EXACTLY_ONCE_OPTIONS } from './eos-slice-run.js';
export type { ExactlyOnceSliceOptions, SliceCheckpointState } from './eos-slice-run.js';

type Pages = ReturnType<typeof readingAhead<SlicePage>>;

/**
 * Processes one slice to its end with exactly-once delivery. Throws {@link SliceInterruptedError} after its last
 * commit when `signal` aborts, {@link SliceFencedError} when another owner took the slice.
 */
export async function processSliceExactlyOnce(
  job: SliceJobHandle,
  deps: ProcessSliceDeps,
  eos: ExactlyOnceDelivery,
  o: ExactlyOnceSliceOptions,
): Promise<SliceResult> {
  const data: SliceJobData = { ...job.data };
  // A slice that never opened a transaction (no `eos` in its data) asks for its first page while it fences, so
  // the first pages of many new slices reach the batcher together instead of one slice-open apart. Reading has no
  // side effect: the page is claimed and published only after the fence and recovery, and is dropped unread if
  // recovery finds that an earlier owner moved the slice on.
  const prefetch = data.eos === undefined ? prefetchFirstPage(deps, data, o.signal) : undefined;
  // Fence, then read Kafka's checkpoint from where the job data (re-read after the fence) says it is.
  const { session, opened } = await openSession(job, eos, data);
  try {
    const run = await recoverRun(job, deps, eos, o, { session, opened, data });
    const prefetched = session.recovered === null ? prefetch : undefined;
    if (prefetched === undefined) await prefetch?.discard();
    if (run.state.done) return sliceResult(run);
    run.bookedAt = o.now();
    try {
      return await walkPages(run, eos, prefetched?.pages);
    } finally {
      // Nothing is settled on a failure: the pages' page keys are the slice's, and the slice may have a new owner
      // by now (a stalled worker whose lock expired) whose locks carry the same keys. The next owner settles the
      // intent from Kafka's checkpoint (a retry of this slice comes within seconds; other slices resolve expired
      // leases themselves).
      run.open = [];
    }
  } finally {
    await prefetch?.discard();
    await session.close();
  }
}

/** Reads the slice's pages (first from `prefetched`) to its end; after a split, from its narrowed start. */
async function walkPages(
  run: EosRun,
  eos: ExactlyOnceDelivery,
  prefetched: AsyncIterable<SlicePage> | undefined,
): Promise<SliceResult> {
  const walk = createSliceWalk(run.o);
  let first = prefetched;
  for (;;) {
    const pages = readingAhead(first ?? readSlicePages(run.deps, run.data, run.o.signal));
    let split: ReadOn | undefined;
    try {
      split = await readUntilSplit(run, eos, walk, pages);
    } finally {
      pages.close();
    }
    if (split !== undefined) {
      first = split.pages;
      continue;
    }
    // The end of the slice: whatever is open commits with done = true.
    await commit(run, checkpointNow(run, true));
    return sliceResult(run);
  }
}

/** The first page of a slice read from its narrowed start after a split, asked for early (`prefetchFirstPage`). */
type ReadOn = ReturnType<typeof prefetchFirstPage>;

/**
 * Reads pages into transactions until the slice ends (undefined) or splits: then the pages from its narrowed start,
 * the first of them asked for when the split was decided.
 */
async function readUntilSplit(
  run: EosRun,
  eos: ExactlyOnceDelivery,
  walk: SliceWalk,
  pages: Pages,
): Promise<ReadOn | undefined> {
  const { o } = run;
  const K = eos.pagesPerTransaction ?? DEFAULT_EXACTLY_ONCE_OPTIONS.pagesPerTransaction;
  const T = eos.transactionMs ?? DEFAULT_EXACTLY_ONCE_OPTIONS.transactionMs;
  for (;;) {
    const next = await pages.next();
    if (next.done === true) return undefined;
    const page = next.value;
    const fetchedAt = o.now();
    // Whether this page splits the slice depends on the page alone: decided before it is claimed, so that a slice
    // that goes on asks for its next page now, while this one is claimed, encoded and committed. Its call then waits
    // at the budget's fetcher with the other slices' (fuller batches when the budget binds), and the slice's next
    // page is there sooner.
    const split = walk.observe(page, run.data);
    if (split === null) {
      if (page.cursor !== null && o.signal?.aborted !== true) pages.readOn();
      await addPage(run, page, fetchedAt);
      await stopIfAborted(run);
    } else {
      const readOn = await splitAt(run, page, fetchedAt, split);
      walk.restart();
      return readOn;
    }
    // The last page (null cursor) commits at the end, with done = true. A transaction also commits when the next page
    // has not come yet: the slice would wait for it anyway, and the pages' dedup locks are released now instead of a
    // page read later (other slices' claims wait for them; a busy user's page, whose trades are in many other walks,
    // waited a minute and more while they were held across reads).
    if (page.cursor !== null && (run.openPages >= K || o.now() - run.openSince >= T || pages.waiting))
      await commitOpen(run);
  }
}

/**
 * Splits the slice at `page` (not its last: a last page never splits). Its children read the older part, none of the
 * page's rows, and the slice reads on from the page's cursor within its narrowed start: both are asked for now, while
 * the page is claimed, encoded and committed. At the real service's latency a busy user's page took 2 s to commit
 * beside its round's other pages, and its pieces and its own next page waited for it, a round more on the run's
 * longest chain. The page and the children are committed before the narrowed start rides in the next checkpoint: a
 * crash in between overlaps (dedup absorbs it), never gaps.
 */
async function splitAt(
  run: EosRun,
  page: SlicePage,
  fetchedAt: number,
  split: RemainingSplit,
): Promise<ReadOn> {
  const spawned = run.job.spawn(childSlices(run.data, split.children));
  spawned.catch(() => undefined); // awaited below; a failure surfaces there
  const narrowed = { ...run.data, start: split.keepStart };
  const readOn = prefetchFirstPage(
    run.deps,
    typeof page.cursor === 'string' ? { ...narrowed, cursor: page.cursor } : narrowed,
    run.o.signal,
  );
  try {
    await addPage(run, page, fetchedAt);
    await stopIfAborted(run);
    await commitOpen(run);
    await spawned;
    run.data = { ...run.data, start: split.keepStart };
    run.state = { ...run.state, splits: run.state.splits + 1 };
    await commit(run, checkpointNow(run), true);
    return readOn;
  } catch (error) {
    await readOn.discard();
    throw error;
  }
}

/** A slice asked to stop (shutdown) commits what is open with its checkpoint and ends here. */
async function stopIfAborted(run: EosRun): Promise<void> {
  if (run.o.signal?.aborted !== true) return;
  await commitOpen(run, true);
  throw new SliceInterruptedError(`slice ${run.data.sliceId} interrupted after its checkpoint`);
}

/** Whether a slice's data carries exactly-once state (for callers that switch delivery modes). */
export function hasEosState(data: SliceJobData): data is SliceJobData & { eos: SliceEosData } {
  return data.eos !== undefined;
}
