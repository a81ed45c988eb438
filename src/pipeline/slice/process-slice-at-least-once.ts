/**
 * The at-least-once work of one slice (`GAMEDATA_DELIVERY=at-least-once`): page -> drop the seen -> encode + produce
 * -> wait for the acks -> mark seen -> checkpoint the cursor. A crash republishes at most the page in hand (dedup
 * drops what was marked). A dense slice hands the older part of what it still has to read to new child slices and
 * reads on (`slice-walk.ts`).
 */
import { SliceInterruptedError } from '../../foundation/errors/index.js';
import type { SliceResult } from '../contract/job-types.js';
import { childSlices } from './child-slices.js';
import { DEFAULT_PROCESS_SLICE_OPTIONS, pageLineage } from './slice-contract.js';
import type { ProcessSliceDeps, ProcessSliceOptions, SliceJobHandle } from './slice-contract.js';
import { ownedRows } from './row-owner.js';
import { createSliceWalk } from './slice-walk.js';

/**
 * Processes one slice to its end with at-least-once delivery (or until `signal` aborts, then throws
 * {@link SliceInterruptedError} after the last checkpoint). Returns the slice's counts.
 */
export async function processSliceAtLeastOnce(
  job: SliceJobHandle,
  deps: ProcessSliceDeps,
  options: ProcessSliceOptions = {},
): Promise<SliceResult> {
  const o = { ...DEFAULT_PROCESS_SLICE_OPTIONS, ...options };
  const now = options.now ?? Date.now;
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
  const walk = createSliceWalk(o);
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
      // Rows another walk of the run owns (a trade's other party, row-owner.ts) are that walk's to publish.
      const { owned, others } = ownedRows(page.walker, items);
      const claim = await deps.dedup.claim(resource, owned, scope);
      try {
        const sent =
          claim.fresh.length === 0
            ? { published: 0, deadLettered: 0 }
            : await deps.publisher.publishPage({
                resource,
                records: claim.fresh,
                lineage: pageLineage(data, deps.source, fetchedAt),
              });
        // Only after the acks: a crash before this line republishes the page, never loses it. The marks and the
        // counters go out together (one write on the slices' auto-pipelined Redis connection).
        const marked = deps.dedup.markSeen(resource, claim.fresh, scope);
        const delta = {
          fetched: page.items.length,
          published: sent.published,
          deduplicated: claim.repeats + others,
          deadLettered: sent.deadLettered,
        };
        result.fetched += delta.fetched;
        result.published += delta.published;
        result.deduplicated += delta.deduplicated;
        result.deadLettered += delta.deadLettered;
        result.pages += 1;
        await Promise.all([marked, deps.counters.add(data.runId, delta, resource)]);
      } finally {
        claim.release();
      }
      if (page.cursor !== undefined && page.cursor !== null) data = { ...data, cursor: page.cursor };
      await job.checkpoint(data);

      if (o.signal?.aborted === true) {
        throw new SliceInterruptedError(`slice ${data.sliceId} interrupted after its checkpoint`);
      }
      const split = walk.observe(page, data);
      if (split !== null) {
        const children = childSlices(data, split.children);
        // Children first, then narrow this slice: a crash in between overlaps (dedup absorbs it), never gaps.
        await job.spawn(children);
        data = { ...data, start: split.keepStart };
        await job.checkpoint(data);
        result.splits += 1;
        walk.restart();
        continue outer;
      }
    }
    return result;
  }
}
