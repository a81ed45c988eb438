/**
 * How a slice reads its pages: from its current start and cursor, and the first page asked for early
 * (`prefetchFirstPage`, while the slice fences). An exactly-once slice reads on ahead of its commits
 * (`slice-reader.ts`).
 */
import type { SliceJobData } from '../contract/job-types.js';
import type { ProcessSliceDeps } from './slice-contract.js';

/** The slice's pages from its current start and cursor. */
export function readSlicePages(deps: ProcessSliceDeps, data: SliceJobData, signal: AbortSignal | undefined) {
  return deps.source.readPages(
    { resource: data.resource, filters: data.filters, start: data.start, end: data.end },
    {
      ...(data.cursor === undefined ? {} : { cursor: data.cursor }),
      ...(signal === undefined ? {} : { signal }),
    },
  );
}

/**
 * Starts reading the slice's first page now. `pages` yields that page, then the rest; `discard` stops the read
 * when it is not used (an error of the unused read is dropped with it). Idempotent.
 */
export function prefetchFirstPage(
  deps: ProcessSliceDeps,
  data: SliceJobData,
  signal: AbortSignal | undefined,
) {
  const reader = readSlicePages(deps, data, signal)[Symbol.asyncIterator]();
  const first = reader.next();
  first.catch(() => undefined); // handled by whoever awaits it; unhandled only when discarded
  let used = false;
  let discarded = false;
  return {
    get pages() {
      used = true;
      return (async function* () {
        let finished = false;
        try {
          let next = await first;
          while (next.done !== true) {
            yield next.value;
            next = await reader.next();
          }
          finished = true;
        } finally {
          // The consumer stopped early (a split, an error): end the read as `for await` would.
          if (!finished) await reader.return?.(undefined);
        }
      })();
    },
    async discard(): Promise<void> {
      if (used || discarded) return;
      discarded = true;
      await first.then(
        () => reader.return?.(undefined),
        () => undefined,
      );
    },
  };
}
