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
 */
import { createHash } from 'node:crypto';
import { SliceInterruptedError } from '../errors.js';
import type { DedupRecord, PendingPage } from '../dedup/index.js';
import { hasDedupId, pageKeyOf, parsePageKey } from '../dedup/index.js';
import type { SliceCheckpoint } from '../sink/index.js';
import type { RunCounterValues, SliceEosData, SliceJobData, SliceResult } from '../planner/job-types.js';
import { childSlices } from './child-slices.js';
import type { ExactlyOnceDelivery, ProcessSliceDeps, SliceJobHandle } from './slice-contract.js';
import { pageLineage } from './slice-contract.js';
import { createSliceWalk } from './slice-walk.js';
import { prefetchFirstPage, readingAhead, readSlicePages } from './page-reader.js';

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

const ZERO: RunCounterValues = { fetched: 0, published: 0, deduplicated: 0, deadLettered: 0 };

function add(a: RunCounterValues, b: RunCounterValues): RunCounterValues {
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

export interface ExactlyOnceSliceOptions {
  pageSize: number;
  targetRows: number;
  splitFactor: number;
  maxSplitParts: number;
  maxDepth: number;
  minPagesBeforeSplit: number;
  signal?: AbortSignal | undefined;
  now: () => number;
}

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
  const K = eos.pagesPerTransaction ?? DEFAULT_EXACTLY_ONCE_OPTIONS.pagesPerTransaction;
  const T = eos.transactionMs ?? DEFAULT_EXACTLY_ONCE_OPTIONS.transactionMs;
  const B = eos.bookMs ?? DEFAULT_EXACTLY_ONCE_OPTIONS.bookMs;
  let data: SliceJobData = { ...job.data };
  const sliceKey = data.sliceId;
  const resource = data.resource;
  const scope = data.replay ? data.runId : undefined;

  // A slice that never opened a transaction (no `eos` in its data) asks for its first page while it fences, so
  // the first pages of many new slices reach the batcher together instead of one slice-open apart. Reading has no
  // side effect: the page is claimed and published only after the fence and recovery, and is dropped unread if
  // recovery finds that an earlier owner moved the slice on.
  const prefetch = data.eos === undefined ? prefetchFirstPage(deps, data, o.signal) : undefined;
  // Fence, then read Kafka's checkpoint from where the job data (re-read after the fence) says it is.
  // Whether an earlier owner got as far as saving its exactly-once state in the job data (read after the fence).
  let opened = data.eos !== undefined;
  const session = await eos.publisher.openSlice<SliceCheckpointState>(sliceKey, {
    readFrom: async () => {
      const fresh = job.reload === undefined ? job.data : await job.reload();
      opened = opened || fresh.eos !== undefined;
      return fresh.eos?.readFrom ?? data.eos?.readFrom;
    },
  });
  try {
    const recovered = session.recovered;
    let state: SliceCheckpointState = {
      cursor: data.cursor ?? null,
      start: data.start,
      done: false,
      counts: ZERO,
      pages: 0,
      splits: 0,
    };
    if (recovered !== null) {
      state = recovered.state;
      data = { ...data, start: state.start };
      if (state.cursor === null) delete data.cursor;
      else data = { ...data, cursor: state.cursor };
    }
    // The previous owner's pages whose fate was open: Kafka's checkpoint says which committed.
    const committedSeq = recovered?.seq ?? -1;
    // An owner writes intents only after it saved `eos` in the job data (below): a slice no owner opened has none.
    const intent = opened ? await eos.marks.readIntent(sliceKey) : [];
    const committedPages = intent.filter((p) => p.seq <= committedSeq);
    const voidPages = intent.filter((p) => p.seq > committedSeq);
    if (committedPages.length > 0) await eos.marks.settle(sliceKey, committedPages, true);
    if (voidPages.length > 0) await eos.marks.settle(sliceKey, voidPages, false);

    // Counts the slice's cumulative figures up to `through`. With `addThrough` the run's counters keep what each
    // slice counted, so a crash between counting and saving `counted` in the job data is not counted twice.
    const countUpTo = async (through: RunCounterValues, counted: RunCounterValues): Promise<void> => {
      const delta = minus(through, counted);
      if (isZero(delta)) return;
      if (deps.counters.addThrough !== undefined)
        await deps.counters.addThrough(data.runId, sliceKey, through, resource);
      else await deps.counters.add(data.runId, delta, resource);
    };
    // Counters the previous owner committed but did not count (a crash between commit and count).
    let counted = data.eos?.counted ?? ZERO;
    await countUpTo(state.counts, counted);
    counted = state.counts;
    const readFrom =
      recovered?.offset ?? data.eos?.readFrom ?? (await eos.publisher.lastStableOffset(sliceKey));
    data = { ...data, eos: { readFrom, counted } };
    await job.checkpoint(data);

    const result = (): SliceResult => ({ ...state.counts, pages: state.pages, splits: state.splits });
    let prefetched = recovered === null ? prefetch : undefined;
    if (prefetched === undefined) await prefetch?.discard();
    if (state.done) return result();

    // Pages of the open transaction.
    let open: PendingPage[] = [];
    let openCounts = ZERO;
    let openPages = 0;
    let openSince = 0;
    // The run's counters and the job data follow Kafka's checkpoint at most every `bookMs` (and at the slice's end,
    // a split or an interruption): both are hints that the next owner repairs from the checkpoint (`addThrough`
    // counts cumulative figures once; `readFrom` only has to be at or below the newest checkpoint), so booking every
    // commit cost two Redis round trips a commit for nothing.
    let bookedAt = o.now();
    const commit = async (
      next: { cursor: string | null; start: number; done: boolean },
      book = false,
    ): Promise<void> => {
      const target: SliceCheckpointState = {
        ...next,
        counts: add(state.counts, openCounts),
        pages: state.pages + openPages,
        splits: state.splits,
      };
      const ckpt: SliceCheckpoint<SliceCheckpointState> = await session.commit(target);
      state = target;
      const pages = open;
      open = [];
      openCounts = ZERO;
      openPages = 0;
      if (pages.length > 0) await eos.marks.settle(sliceKey, pages, true);
      if (!book && !next.done && o.now() - bookedAt < B) return;
      bookedAt = o.now();
      await countUpTo(state.counts, counted);
      counted = state.counts;
      data = { ...data, eos: { readFrom: ckpt.offset, counted } };
      await job.checkpoint(data);
    };
    // Commits the open transaction when it holds anything (pages or a moved cursor).
    const commitOpen = async (book = false): Promise<void> => {
      if (openPages > 0) await commit({ cursor: data.cursor ?? null, start: data.start, done: false }, book);
    };

    // A resolver of another slice's orphaned page: fence that slice, then its checkpoint says whether it committed.
    const resolveForeign = async (pageKey: string): Promise<boolean> => {
      const foreign = parsePageKey(pageKey);
      // The page's producer only, and only while it is still an owner of its slice (see fenceWriter); a page key of
      // an older version (no writer) fences every owner of the slice.
      if (foreign.writer !== undefined && eos.publisher.fenceWriter !== undefined)
        await eos.publisher.fenceWriter(foreign.sliceKey, foreign.writer);
      else await eos.publisher.fence(foreign.sliceKey);
      const ckpt = await eos.publisher.readCommitted<SliceCheckpointState>(foreign.sliceKey);
      return ckpt !== null && ckpt.seq >= foreign.seq;
    };

    try {
      const walk = createSliceWalk(o);
      outer: for (;;) {
        const pages = readingAhead(prefetched?.pages ?? readSlicePages(deps, data, o.signal));
        prefetched = undefined;
        try {
          for (;;) {
            const next = await pages.next();
            if (next.done === true) break;
            const page = next.value;
            const fetchedAt = o.now();
            // Whether this page splits the slice depends on the page alone: decided before it is claimed, so that
            // a slice that goes on asks for its next page now, while this one is claimed, encoded and committed.
            // Its call then waits at the budget's fetcher with the other slices' (fuller batches when the budget
            // binds), and the slice's next page is there sooner.
            const split = walk.observe(page, data);
            if (split === null && page.cursor !== null && o.signal?.aborted !== true) pages.readOn();
            const items: DedupRecord[] = deps.source.enrich
              ? await deps.source.enrich(resource, page.items, o.signal)
              : page.items;
            const seq = session.nextSeq;
            // A record without a usable `_id` (it will be dead-lettered) is claimed under a digest of its content, so
            // the same malformed record read by two slices (a trade under its buyer and its seller) is dead-lettered once.
            const originals = new Map<DedupRecord, DedupRecord>();
            const claimed = items.map((item) => {
              if (hasDedupId(item)) return item;
              const stand = { ...item, _id: anonymousId(item) };
              originals.set(stand, item);
              return stand;
            });
            const claim = await eos.marks.claim(
              pageKeyOf(sliceKey, seq, session.owner),
              resource,
              claimed,
              resolveForeign,
              {
                ...(scope === undefined ? {} : { scope }),
                ...(o.signal === undefined ? {} : { signal: o.signal }),
                // Waiting for another page: commit ours first, so a page of ours that holds an id is settled.
                onWait: commitOpen,
              },
            );
            claim.fresh = claim.fresh.map((r) => originals.get(r) ?? r);
            if (claim.page.entries.length > 0) await eos.marks.writeIntent(sliceKey, claim.page);
            const encoded =
              claim.fresh.length === 0
                ? undefined
                : await eos.encode({
                    resource,
                    records: claim.fresh,
                    lineage: pageLineage(data, deps.source, fetchedAt),
                  });
            if (openPages === 0) openSince = o.now();
            session.addPage({
              topic: encoded?.topic ?? '',
              records: encoded?.records ?? [],
              dlqTopic: encoded?.dlqTopic ?? '',
              deadLetters: encoded?.deadLetterMessages ?? [],
            });
            if (claim.page.entries.length > 0) open.push(claim.page);
            openPages += 1;
            openCounts = add(openCounts, {
              fetched: page.items.length,
              published: encoded?.records.length ?? 0,
              deduplicated: claim.repeats,
              deadLettered: encoded?.deadLetterMessages.length ?? 0,
            });
            if (page.cursor !== undefined && page.cursor !== null) data = { ...data, cursor: page.cursor };

            if (o.signal?.aborted === true) {
              await commitOpen(true);
              throw new SliceInterruptedError(`slice ${data.sliceId} interrupted after its checkpoint`);
            }
            if (split !== null) {
              // Commit first, then the children, then the narrowed start rides in the next checkpoint: a crash in
              // between overlaps (dedup absorbs it), never gaps.
              await commitOpen();
              await job.spawn(childSlices(data, split.children));
              data = { ...data, start: split.keepStart };
              state = { ...state, splits: state.splits + 1 };
              await commit({ cursor: data.cursor ?? null, start: data.start, done: false }, true);
              walk.restart();
              continue outer;
            }
            // The last page (null cursor) commits below, with done = true. A transaction also commits when the next
            // page has not come yet: the slice would wait for it anyway, and the pages' dedup locks are released now
            // instead of a page read later (other slices' claims wait for them; a busy user's page, whose trades are
            // in many other walks, waited a minute and more while they were held across reads).
            if (page.cursor !== null && (openPages >= K || o.now() - openSince >= T || pages.waiting))
              await commitOpen();
          }
        } finally {
          pages.close();
        }
        // The end of the slice: whatever is open commits with done = true.
        await commit({ cursor: data.cursor ?? null, start: data.start, done: true });
        return result();
      }
    } finally {
      // Nothing is settled on a failure: the pages' page keys are the slice's, and the slice may have a new owner
      // by now (a stalled worker whose lock expired) whose locks carry the same keys. The next owner settles the
      // intent from Kafka's checkpoint (a retry of this slice comes within seconds; other slices resolve expired
      // leases themselves).
      open = [];
    }
  } finally {
    await prefetch?.discard();
    await session.close();
  }
}

/**
 * The dedup identity of a record without `_id`: a digest of its JSON (keys in order of appearance, as upstream sent
 * them). Two records of identical content and no id are one dead letter; nothing else can tell them apart.
 */
export function anonymousId(record: DedupRecord): string {
  // Records are parsed JSON (no cycles, no BigInt): stringify cannot throw.
  const text = JSON.stringify(record);
  return `anon-${createHash('sha256').update(text).digest('hex').slice(0, 32)}`;
}

/** Whether a slice's data carries exactly-once state (for callers that switch delivery modes). */
export function hasEosState(data: SliceJobData): data is SliceJobData & { eos: SliceEosData } {
  return data.eos !== undefined;
}
