/**
 * The reading half of an exactly-once slice: reads its pages in order, {@link READ_AHEAD_PAGES} ahead of the half
 * that claims, encodes and commits them, and decides each page's split as the page comes (the slice's walk), not
 * when its turn to commit comes. At a split the children are added at once and the reading goes on from the
 * narrowed start; the committing half checkpoints that start after the page and the children (a crash in between
 * overlaps, never gaps).
 *
 * Why decide as pages come: at the real service's latency a round of ~300 first pages (scale small) took ~3.5 s of
 * the worker's CPU to commit, and a split decided only when its page's turn came added its children that much later.
 */
import { ClosedError } from '../../foundation/errors/index.js';
import type { SliceJobData } from '../contract/job-types.js';
import { childSlices } from './child-slices.js';
import { readSlicePages } from './page-reader.js';
import type { ProcessSliceDeps, SlicePage } from './slice-contract.js';
import type { SliceWalk } from './slice-walk.js';

/**
 * Pages read and not yet taken by the committing half, at most: the next page is asked for while the one before is
 * claimed, encoded and committed. Three let a small full history's busiest chains run ahead of a saturated worker
 * (6.5-6.7 s against 6.8-7.0 s at the realistic cost), but the medium pipeline bench (latency off, the worker's CPU
 * the limit) spent 53-65 s of worker CPU with two or three against 48-50 s with one (2026-11-29): one it is.
 */
export const READ_AHEAD_PAGES = 1;

/** A page as the reader hands it on: when it came, and the split the walk decided on it. */
export interface ReadPage {
  page: SlicePage;
  fetchedAt: number;
  /** The split this page called for: its children are being added (`spawned`), and reading went on from `keepStart`. */
  split?: { keepStart: number; spawned: Promise<void> };
}

export interface SliceReaderOptions {
  deps: ProcessSliceDeps;
  /** The slice as it stands (after recovery): where reading starts. */
  data: SliceJobData;
  signal?: AbortSignal | undefined;
  /** The slice's pages already asked for (`prefetchFirstPage`), read first instead of a new read of `data`. */
  first?: AsyncIterable<SlicePage> | undefined;
  walk: SliceWalk;
  spawn(children: SliceJobData[]): Promise<void>;
  now(): number;
  /** @default READ_AHEAD_PAGES */
  ahead?: number;
}

export interface SliceReader {
  /** The next page in order; done after the slice's last page. Rejects with the read's error in its place. */
  next(): Promise<IteratorResult<ReadPage, undefined>>;
  /** No page is ready and the reader is still reading: the next one is on its way. */
  readonly waiting: boolean;
  /**
   * Stops reading without waiting for a read in flight (its page, or its error, is dropped); `next()` rejects from
   * then on. Idempotent.
   */
  close(): void;
}

/** Starts reading the slice's pages (see the file's comment). */
export function readSliceAhead(o: SliceReaderOptions): SliceReader {
  const ahead = Math.max(1, o.ahead ?? READ_AHEAD_PAGES);
  const ready: ReadPage[] = [];
  let ended = false;
  let failure: { error: unknown } | undefined;
  let closed = false;
  let wakeTaker: (() => void) | undefined;
  let wakeReader: (() => void) | undefined;
  const wake = (): void => {
    wakeTaker?.();
    wakeTaker = undefined;
  };

  /** Resolves when fewer than `ahead` pages wait to be taken, or the reader is closed. */
  const room = (): Promise<void> | undefined =>
    ready.length < ahead || closed ? undefined : new Promise<void>((resolve) => (wakeReader = resolve));

  /** Reads `pages` until the slice ends (null) or a page splits it: then the slice's data to read on from. */
  async function readUntilSplit(
    data: SliceJobData,
    pages: AsyncIterable<SlicePage>,
  ): Promise<SliceJobData | null> {
    const reader = pages[Symbol.asyncIterator]();
    try {
      for (;;) {
        await room();
        if (closed) return null;
        o.signal?.throwIfAborted();
        const next = await reader.next();
        if (closed || next.done === true) return null;
        const page = next.value;
        const fetchedAt = o.now();
        const split = o.walk.observe(page, data);
        if (split === null) {
          ready.push({ page, fetchedAt });
          wake();
          continue;
        }
        const spawned = o.spawn(childSlices(data, split.children));
        spawned.catch(() => undefined); // awaited by the committing half; a failure surfaces there
        ready.push({ page, fetchedAt, split: { keepStart: split.keepStart, spawned } });
        wake();
        o.walk.restart();
        // A page that splits has a cursor (a last page never splits): the slice reads on from it.
        return { ...data, start: split.keepStart, ...(page.cursor ? { cursor: page.cursor } : {}) };
      }
    } finally {
      await reader.return?.(undefined);
    }
  }

  async function readAll(): Promise<void> {
    let data: SliceJobData | null = o.data;
    let pages = o.first ?? readSlicePages(o.deps, o.data, o.signal);
    while (data !== null) {
      data = await readUntilSplit(data, pages);
      if (data !== null) pages = readSlicePages(o.deps, data, o.signal);
    }
  }

  readAll().then(
    () => {
      ended = true;
      wake();
    },
    (error: unknown) => {
      failure = { error };
      wake();
    },
  );

  return {
    async next() {
      for (;;) {
        const page = ready.shift();
        if (page !== undefined) {
          wakeReader?.();
          wakeReader = undefined;
          return { value: page, done: false };
        }
        // Never "done" for a closed reader: the committing half would record the slice as read to its end.
        if (closed) throw new ClosedError('the slice reader is closed');
        if (failure !== undefined) throw failure.error;
        if (ended) return { value: undefined, done: true };
        await new Promise<void>((resolve) => (wakeTaker = resolve));
      }
    },
    get waiting() {
      return ready.length === 0 && !ended && failure === undefined && !closed;
    },
    close() {
      if (closed) return;
      closed = true;
      ready.length = 0;
      wakeReader?.();
      wakeReader = undefined;
      wake();
    },
  };
}
