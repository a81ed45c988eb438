/**
 * The work of one slice, independent of BullMQ (so it is unit-tested with recording fakes). Two delivery modes:
 * - at-least-once (this file): page -> drop the seen -> encode + produce -> wait for the acks -> mark seen ->
 *   checkpoint the cursor;
 * - exactly-once (`deps.eos` set; `process-slice-exactly-once.ts`): K pages, their dead letters and the slice's
 *   checkpoint commit in one Kafka transaction; recovery from Kafka's checkpoint after fencing earlier owners.
 * A dense slice hands the older part of what it still has to read to new child slices and reads on.
 */
import { GamedataError, SliceInterruptedError } from '../errors.js';
import type { DedupRecord, DedupStore } from '../dedup/index.js';
import type { ResourceName } from '../models/resources.js';
import type { PagePublisher } from '../publish/publish-page.js';
import { planSplit } from '../slicing/index.js';
import type { RunCounterValues, SliceJobData, SliceResult } from '../planner/job-types.js';
import { childSlices } from './child-slices.js';
import { sliceSplitRule } from './slice-split-rule.js';
import { processSliceExactlyOnce, type ExactlyOnceDelivery } from './process-slice-exactly-once.js';
import { sortTime } from './slice-sort-time.js';

/** One page of a slice, newest first, with the cursor to resume after it. */
export interface SlicePage {
  items: DedupRecord[];
  cursor: string | null | undefined;
}

/** Reads the pages of a slice (the client's `readSlice` behind the pipeline's own interface). */
export interface SliceSource {
  readPages(
    slice: { resource: ResourceName; filters: Record<string, string>; start: number; end: number },
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

/**
 * Processes one slice to its end (or until `signal` aborts, then throws {@link SliceInterruptedError} after the
 * last checkpoint). Returns the slice's counts.
 */
export async function processSlice(
  job: SliceJobHandle,
  deps: ProcessSliceDeps,
  options: ProcessSliceOptions = {},
): Promise<SliceResult> {
  const o = { ...DEFAULT_PROCESS_SLICE_OPTIONS, ...options };
  const now = options.now ?? Date.now;
  if (deps.eos !== undefined) return processSliceExactlyOnce(job, deps, deps.eos, { ...o, now });
  let data = { ...job.data };
  const result: SliceResult = {
    fetched: 0,
    published: 0,
    deduplicated: 0,
    deadLettered: 0,
    pages: 0,
    splits: 0,
  };
  const scope = data.replay ? { scope: data.runId } : undefined;
  const resource = data.resource;

  // The rows and time covered since the last (re)start, for the density estimate that drives splitting.
  let rows = 0;
  let pagesSinceStart = 0;
  // Measured from the newest row read, not the slice's end: an empty top says nothing about the rest.
  let topTime: number | undefined;
  outer: for (;;) {
    const pages = deps.source.readPages(
      { resource, filters: data.filters, start: data.start, end: data.end },
      {
        ...(data.cursor === undefined ? {} : { cursor: data.cursor }),
        ...(o.signal === undefined ? {} : { signal: o.signal }),
      },
    );
    for await (const page of pages) {
      const fetchedAt = now();
      const items = deps.source.enrich
        ? await deps.source.enrich(resource, page.items, o.signal)
        : page.items;
      const claim = await deps.dedup.claim(resource, items, scope);
      try {
        const sent =
          claim.fresh.length === 0
            ? { published: 0, deadLettered: 0 }
            : await deps.publisher.publishPage({
                resource,
                records: claim.fresh,
                lineage: {
                  runId: data.runId,
                  sliceId: data.sliceId,
                  sourceOperation: deps.source.operation(resource),
                  fetchedAt,
                },
              });
        // Only after the acks: a crash before this line republishes the page, never loses it.
        await deps.dedup.markSeen(resource, claim.fresh, scope);
        const delta = {
          fetched: page.items.length,
          published: sent.published,
          deduplicated: claim.repeats,
          deadLettered: sent.deadLettered,
        };
        result.fetched += delta.fetched;
        result.published += delta.published;
        result.deduplicated += delta.deduplicated;
        result.deadLettered += delta.deadLettered;
        result.pages += 1;
        await deps.counters.add(data.runId, delta, resource);
      } finally {
        claim.release();
      }
      if (page.cursor !== undefined && page.cursor !== null) data = { ...data, cursor: page.cursor };
      await job.checkpoint(data);

      rows += page.items.length;
      pagesSinceStart += 1;
      const first = page.items[0];
      if (topTime === undefined && first !== undefined) topTime = sortTime(resource, first);
      const last = page.items[page.items.length - 1];
      const lastTime = last === undefined ? undefined : sortTime(resource, last);
      if (o.signal?.aborted === true) {
        throw new SliceInterruptedError(`slice ${data.sliceId} interrupted after its checkpoint`);
      }
      // A finished slice (null cursor) has nothing left to hand off.
      if (
        page.cursor !== null &&
        lastTime !== undefined &&
        topTime !== undefined &&
        pagesSinceStart >= o.minPagesBeforeSplit &&
        data.depth < o.maxDepth
      ) {
        const split = planSplit(
          { start: data.start, end: data.end },
          { rowsRead: rows, topTime, lastTime },
          sliceSplitRule(data, o),
        );
        if (split !== null) {
          const children = childSlices(data, split.children);
          // Children first, then narrow this slice: a crash in between overlaps (dedup absorbs it), never gaps.
          await job.spawn(children);
          data = { ...data, start: split.keepStart };
          await job.checkpoint(data);
          result.splits += 1;
          rows = 0;
          pagesSinceStart = 0;
          topTime = undefined;
          continue outer;
        }
      }
    }
    return result;
  }
}

/** Whether an error from a slice should be retried by BullMQ (true) or fail the run at once (false). */
export function isRetriableSliceError(error: unknown): boolean {
  return GamedataError.from(error).retriable;
}
