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
 * `eos-slice-run.ts` (the run: its state and the operations that change it, the commit among them), `slice-reader.ts`
 * (the pages, read ahead of the commits, and the splits); this file commits the pages.
 */
import { SliceInterruptedError } from '../../foundation/errors/index.js';
import type { SliceEosData, SliceJobData, SliceResult } from '../contract/job-types.js';
import { addPage } from './eos-page.js';
import { openSession, recoverRun } from './eos-recovery.js';
import { DEFAULT_EXACTLY_ONCE_OPTIONS, type EosRun, type ExactlyOnceSliceOptions } from './eos-slice-run.js';
import { prefetchFirstPage } from './page-reader.js';
import type { ExactlyOnceDelivery, ProcessSliceDeps, SliceJobHandle, SlicePage } from './slice-contract.js';
import { readSliceAhead, type ReadPage, type SliceReader } from './slice-reader.js';
import { createSliceWalk } from './slice-walk.js';

export { anonymousId } from './eos-page.js';
export { DEFAULT_EXACTLY_ONCE_OPTIONS } from './eos-slice-run.js';
export type { ExactlyOnceSliceOptions, SliceCheckpointState } from './eos-slice-run.js';

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
    if (run.state.done) return run.result();
    run.startReading();
    try {
      return await walkPages(run, eos, prefetched?.pages);
    } finally {
      // Nothing is settled on a failure: the pages' page keys are the slice's, and the slice may have a new owner
      // by now (a stalled worker whose lock expired) whose locks carry the same keys. The next owner settles the
      // intent from Kafka's checkpoint (a retry of this slice comes within seconds; other slices resolve expired
      // leases themselves).
      run.dropOpen();
    }
  } finally {
    await prefetch?.discard();
    await session.close();
  }
}

/**
 * Commits the slice's pages (first from `prefetched`) to its end, as its reader hands them on (`slice-reader.ts`: read
 * ahead of the commits, splits decided as pages come, children added then).
 */
async function walkPages(
  run: EosRun,
  eos: ExactlyOnceDelivery,
  prefetched: AsyncIterable<SlicePage> | undefined,
): Promise<SliceResult> {
  const reader = readSliceAhead({
    deps: run.deps,
    data: run.data,
    signal: run.o.signal,
    first: prefetched,
    walk: createSliceWalk(run.o),
    spawn: (children) => run.job.spawn(children),
    now: run.o.now,
  });
  try {
    await commitPages(run, eos, reader);
  } finally {
    reader.close();
  }
  // The end of the slice: whatever is open commits with done = true.
  await run.commit(run.checkpointNow(true));
  await eos.marks.closeSlice(run.sliceKey, run.session.token);
  return run.result();
}

/** Claims, encodes and commits the pages `reader` hands on, to the slice's last. */
async function commitPages(run: EosRun, eos: ExactlyOnceDelivery, reader: SliceReader): Promise<void> {
  const K = eos.pagesPerTransaction ?? DEFAULT_EXACTLY_ONCE_OPTIONS.pagesPerTransaction;
  const T = eos.transactionMs ?? DEFAULT_EXACTLY_ONCE_OPTIONS.transactionMs;
  for (;;) {
    const next = await nextPage(run, reader);
    if (next.done === true) return;
    const { page, fetchedAt, split } = next.value;
    await addPage(run, page, fetchedAt);
    await stopIfAborted(run);
    if (split !== undefined) await commitSplit(run, split);
    // The last page (null cursor) commits at the end, with done = true. A transaction also commits when the next
    // page has not come yet: the slice would wait for it anyway, and the pages' dedup locks are released now instead
    // of a page read later (other slices' claims wait for them; a busy user's page, whose trades are in many other
    // walks, waited a minute and more while they were held across reads).
    else if (page.cursor !== null && (run.openDue(K, T) || reader.waiting)) await run.commitOpen();
  }
}

/** The reader's next page; a read that failed because the slice was asked to stop ends it as a stop does. */
async function nextPage(run: EosRun, reader: SliceReader): ReturnType<SliceReader['next']> {
  try {
    return await reader.next();
  } catch (error) {
    await stopIfAborted(run);
    throw error;
  }
}

/**
 * The page that split the slice has joined the open transaction: commits it, waits for the children (added when the
 * reader decided the split, while this page and the ones before it were claimed, encoded and committed), then
 * checkpoints the narrowed start. A crash before that checkpoint overlaps the children (dedup absorbs it), never gaps.
 */
async function commitSplit(run: EosRun, split: NonNullable<ReadPage['split']>): Promise<void> {
  await run.commitOpen();
  await split.spawned;
  await run.narrow(split.keepStart);
}

/** A slice asked to stop (shutdown) commits what is open with its checkpoint and ends here. */
async function stopIfAborted(run: EosRun): Promise<void> {
  if (run.o.signal?.aborted !== true) return;
  await run.commitOpen(true);
  throw new SliceInterruptedError(`slice ${run.data.sliceId} interrupted after its checkpoint`);
}

/** Whether a slice's data carries exactly-once state (for callers that switch delivery modes). */
export function hasEosState(data: SliceJobData): data is SliceJobData & { eos: SliceEosData } {
  return data.eos !== undefined;
}
