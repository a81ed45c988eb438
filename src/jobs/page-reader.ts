/**
 * How a slice reads its pages: from its current start and cursor, the first page asked for early
 * (`prefetchFirstPage`, while the slice fences), and one page ahead (`readingAhead`, while the current one is claimed,
 * encoded and committed).
 */
import type { SliceJobData } from '../planner/job-types.js';
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

/**
 * A slice's pages with one read ahead: `readOn()` asks for the page after the one `next()` gave last, at once;
 * `next()` then answers with it. `waiting`: that page is asked for and has not come yet. `close()` ends the read
 * without waiting for a page in flight (its page, or its error, is dropped). At most one read ahead: the next
 * page's cursor is in the current one.
 */
export function readingAhead<T>(pages: AsyncIterable<T>) {
  const reader = pages[Symbol.asyncIterator]();
  let ahead: { read: Promise<IteratorResult<T>>; settled: boolean } | undefined;
  let closed = false;
  return {
    next(): Promise<IteratorResult<T>> {
      const read = ahead?.read ?? reader.next();
      ahead = undefined;
      return read;
    },
    readOn(): void {
      if (ahead !== undefined || closed) return;
      const entry = { read: reader.next(), settled: false };
      const settle = (): void => void (entry.settled = true);
      entry.read.then(settle, settle);
      ahead = entry;
    },
    get waiting(): boolean {
      return ahead !== undefined && !ahead.settled;
    },
    close(): void {
      if (closed) return;
      closed = true;
      const read = ahead?.read ?? Promise.resolve();
      ahead = undefined;
      // A generator runs one request at a time: `return` is taken after the read in flight, which is not awaited.
      read
        .then(
          () => reader.return?.(undefined),
          () => undefined,
        )
        .catch(() => undefined);
    },
  };
}
