/**
 * The exact time-sliced collector behind every `collectAll` / `iterateAll`.
 *
 * The range `[oldest, until)` is cut into slices of `timeSliceDays`; each slice `[start, end)` is read from the
 * synthetic cursor `bound(end, 000…0)` until an item older than `start` (see read-slice.ts), so slices partition
 * time exactly: no gap, no overlap, ties on the edges included once. A slice whose pages come back full while much
 * of its range is still unread splits itself: the reader keeps the newer half and the older half becomes a new
 * slice, scheduled at once (work is sized in rows, not days). Up to `concurrency` slices read at once; all their
 * pages ride in the client's shared batched POSTs.
 *
 * Output is newest first (slices are emitted in time order; a slice's pages are already ordered) and unique by
 * `_id`. Any error (after the client's retries) fails the whole call and cancels every other slice: never a
 * silent partial list. The streaming form keeps memory bounded: slices behind the one being emitted stop reading
 * once `highWaterItems` items are buffered.
 */
import { setMaxListeners } from 'node:events';
import { AbortedError, ConfigError, GamedataError } from '../errors.js';
import type { ClientCore, InvalidItemMode } from './core.js';
import type { Listing } from './listing.js';
import { readSlicePages, sortTimeOf } from './read-slice.js';

const DAY_MS = 86_400_000;
/** Pages one POST carries (the upstream's batch limit). */
const FULL_BATCH = 50;

export interface CollectOptions {
  /** Nothing older than this is read (inclusive). `undefined`: the oldest slice is open-ended (reads to the feed's end). */
  oldestDate?: Date | string | number | undefined;
  /** Exclusive upper bound. @default undefined (the head of the feed: the newest slice reads without a cursor) */
  until?: Date | string | number | undefined;
  /** Width of the initial slices, in days. @default 0.2 */
  timeSliceDays?: number | undefined;
  /** Most slices read at once. @default 500 */
  concurrency?: number | undefined;
  /** Page size. @default 100 */
  limit?: number | undefined;
  signal?: AbortSignal | undefined;
  /** @default 'throw' */
  onInvalidItem?: InvalidItemMode | undefined;
  /** Split dense slices while running. @default true */
  splitDense?: boolean | undefined;
  /**
   * A slice splits when its unread part likely holds more than this many pages. Every slice ends with one short
   * page, so larger values waste fewer requests; smaller values read more slices in parallel. @default 12
   */
  splitPages?: number | undefined;
  /** Where the slice grid starts when `oldestDate` is open-ended. @default 2025-01-01 */
  gridFloor?: Date | string | number | undefined;
  /** Items buffered ahead of the consumer before readers of later slices pause (streaming only). @default 20 000 */
  highWaterItems?: number | undefined;
  /** Injected clock (anchors the grid when `until` is open). @default Date.now */
  now?: (() => number) | undefined;
}

export const DEFAULT_COLLECT_OPTIONS = {
  timeSliceDays: 0.2,
  concurrency: 500,
  limit: 100,
  onInvalidItem: 'throw',
  splitDense: true,
  splitPages: 12,
  gridFloor: Date.UTC(2025, 0, 1),
  highWaterItems: 20_000,
} as const;

/** Most slices one call may plan (a guard against a typo'd tiny slice width). */
export const MAX_PLANNED_SLICES = 1_000_000;

/** Converts a date option to epoch ms. @throws ConfigError naming the option. */
export function toEpochMs(name: string, value: Date | string | number): number {
  const ms =
    value instanceof Date
      ? value.getTime()
      : typeof value === 'number'
        ? value
        : Date.parse(/[zZ]|[+-]\d{2}:?\d{2}$/.test(value) || !value.includes('T') ? value : `${value}Z`);
  if (!Number.isFinite(ms))
    throw new ConfigError(`${name} must be a date, got ${JSON.stringify(value)}`, [name]);
  return ms;
}

interface Segment<T> {
  listing: Listing;
  start: number;
  end: number;
  buffer: T[];
  started: boolean;
  done: boolean;
  next: Segment<T> | null;
}

/**
 * Plans the initial slices of `[oldest, until)` newest first (pure). `alignMs` (1000 for a v1 upstream) keeps every
 * inner edge on a multiple, since v1 bounds have second precision.
 */
export function planSliceEdges(
  oldest: number,
  top: number,
  anchor: number,
  sliceMs: number,
  alignMs = 1,
): { start: number; end: number }[] {
  const step = Math.max(alignMs, Math.round(sliceMs / alignMs) * alignMs);
  const a = Math.floor(anchor / alignMs) * alignMs;
  const slices: { start: number; end: number }[] = [];
  let end = top;
  // Inner edges sit on the grid anchor - k*step (the top slice reaches up to `top`, or the feed's head).
  let edge = a - step;
  for (;;) {
    const start = edge <= oldest ? oldest : edge;
    slices.push({ start, end });
    if (start === oldest) break;
    if (slices.length > MAX_PLANNED_SLICES)
      throw new ConfigError(`timeSliceDays too small: more than ${MAX_PLANNED_SLICES} slices`, [
        'timeSliceDays',
      ]);
    end = start;
    edge = start - step;
  }
  return slices;
}

interface Resolved {
  oldest: number;
  top: number;
  anchor: number;
  sliceMs: number;
  concurrency: number;
  limit: number;
  onInvalidItem: InvalidItemMode;
  splitDense: boolean;
  splitPages: number;
  highWater: number;
  signal: AbortSignal | undefined;
}

function resolve(core: ClientCore, options: CollectOptions): Resolved {
  const timeSliceDays = options.timeSliceDays ?? DEFAULT_COLLECT_OPTIONS.timeSliceDays;
  if (!(timeSliceDays > 0))
    throw new ConfigError(`timeSliceDays must be > 0, got ${timeSliceDays}`, ['timeSliceDays']);
  const concurrency = options.concurrency ?? DEFAULT_COLLECT_OPTIONS.concurrency;
  if (!Number.isInteger(concurrency) || concurrency < 1)
    throw new ConfigError(`concurrency must be an integer >= 1, got ${concurrency}`, ['concurrency']);
  const limit = options.limit ?? DEFAULT_COLLECT_OPTIONS.limit;
  if (!Number.isInteger(limit) || limit < 1 || limit > 100)
    throw new ConfigError(`limit must be an integer in [1, 100], got ${limit}`, ['limit']);
  const top = options.until === undefined ? Infinity : toEpochMs('until', options.until);
  const oldest = options.oldestDate === undefined ? -Infinity : toEpochMs('oldestDate', options.oldestDate);
  if (!(oldest < top)) throw new ConfigError(`oldestDate must be before until`, ['oldestDate']);
  const now = (options.now ?? Date.now)();
  const floor = toEpochMs('gridFloor', options.gridFloor ?? DEFAULT_COLLECT_OPTIONS.gridFloor);
  void core;
  return {
    oldest,
    top,
    anchor: Math.min(top === Infinity ? now : top, now),
    sliceMs: timeSliceDays * DAY_MS,
    concurrency,
    limit,
    onInvalidItem: options.onInvalidItem ?? DEFAULT_COLLECT_OPTIONS.onInvalidItem,
    splitDense: options.splitDense ?? DEFAULT_COLLECT_OPTIONS.splitDense,
    splitPages: options.splitPages ?? DEFAULT_COLLECT_OPTIONS.splitPages,
    highWater: options.highWaterItems ?? DEFAULT_COLLECT_OPTIONS.highWaterItems,
    signal: options.signal,
    ...(oldest === -Infinity ? { gridFloor: floor } : {}),
  };
}

/** Engine statistics (for tests and the benchmark). */
export interface CollectStats {
  slices: number;
  splits: number;
  pages: number;
  /** Slices known empty from a neighbour's page, never requested. */
  skipped?: number;
}

/**
 * Streams every item of the listings over the range, newest first per listing, unique by `_id`.
 * Listings are emitted one after the other (user.collectAll: one listing per country); all read concurrently.
 */
export async function* iterateSlices<T>(
  core: ClientCore,
  listings: readonly Listing[],
  options: CollectOptions = {},
  stats?: CollectStats,
): AsyncGenerator<T> {
  const o = resolve(core, options) as Resolved & { gridFloor?: number };
  const align = core.cursorFormat === 'v1' ? 1000 : 1;
  const minSplitMs = align * 2;
  const st = stats ?? { slices: 0, splits: 0, pages: 0 };

  // Build the linked list of segments, listing by listing, each newest first.
  let head: Segment<T> | null = null;
  let tail: Segment<T> | null = null;
  const initial: Segment<T>[] = [];
  for (const listing of listings) {
    const bottom = o.gridFloor !== undefined ? Math.min(o.gridFloor, o.anchor) : o.oldest;
    const plan = planSliceEdges(bottom, o.top, o.anchor, o.sliceMs, align);
    const last = plan[plan.length - 1];
    if (o.gridFloor !== undefined && last) last.start = -Infinity;
    for (const { start, end } of plan) {
      const seg: Segment<T> = { listing, start, end, buffer: [], started: false, done: false, next: null };
      if (tail) tail.next = seg;
      else head = seg;
      tail = seg;
      initial.push(seg);
    }
  }
  st.slices += initial.length;

  const internal = new AbortController();
  const signal = o.signal ? AbortSignal.any([o.signal, internal.signal]) : internal.signal;
  // Every in-flight page listens on it: hundreds of listeners are expected, not a leak.
  setMaxListeners(0, signal);
  let failure: GamedataError | undefined;
  let waiters: (() => void)[] = [];
  const notify = (): void => {
    const w = waiters;
    waiters = [];
    for (const f of w) f();
  };
  const changed = (): Promise<void> => new Promise((r) => waiters.push(r));
  const onAbort = (): void => {
    if (!failure) failure = new AbortedError('collect aborted', { cause: o.signal?.reason });
    notify();
  };
  o.signal?.addEventListener('abort', onAbort, { once: true });

  let running = 0;
  let buffered = 0;
  // Rows per ms over completed slices: sizes the first page of later slices.
  const density = { rows: 0, ms: 0 };
  let nextInitial = 0;
  const splitQueue: Segment<T>[] = [];
  let current: Segment<T> | null = head;

  const fail = (error: unknown): void => {
    if (!failure) failure = GamedataError.from(error);
    internal.abort(failure);
    notify();
  };

  async function run(seg: Segment<T>): Promise<void> {
    seg.started = true;
    running++;
    try {
      let top = seg.end;
      let rows = 0;
      // A slice expected to be sparse asks for a short first page (less to transfer for empty slices).
      // Unknown density (the first wave): a short page, since most slices of a wide grid may be empty.
      const expected =
        density.ms > 0 && seg.end !== Infinity && seg.start !== -Infinity
          ? (density.rows / density.ms) * (seg.end - seg.start)
          : 0;
      const firstLimit = Math.min(o.limit, Math.max(10, Math.ceil(expected * 1.5) + 1));
      let prevTime = seg.end;
      const pages = readSlicePages<T>(core, seg.listing, seg.end, () => seg.start, {
        limit: o.limit,
        firstLimit,
        signal,
        onInvalidItem: o.onInvalidItem,
      });
      for await (const page of pages) {
        st.pages++;
        // Learn rows per ms from every page over a finite span.
        const spanEnd = page.cursor === null ? seg.start : page.lastTimeMs;
        if (prevTime !== Infinity && Number.isFinite(spanEnd) && prevTime > spanEnd) {
          density.rows += page.items.length;
          density.ms += prevTime - spanEnd;
        }
        if (!Number.isNaN(page.lastTimeMs)) prevTime = page.lastTimeMs;
        if (page.cursor === null) skipEmptyBelow(seg, page.fetched === 0 ? -Infinity : page.belowTimeMs);
        if (page.items.length > 0) {
          for (const item of page.items) seg.buffer.push(item);
          buffered += page.items.length;
          notify();
        }
        rows += page.items.length;
        if (page.cursor === null) break;
        if (top === Infinity && !Number.isNaN(page.firstTimeMs)) top = page.firstTimeMs;
        if (
          o.splitDense &&
          page.fetched >= page.limit &&
          !Number.isNaN(page.lastTimeMs) &&
          seg.start !== -Infinity
        ) {
          const t = page.lastTimeMs;
          const width = t - seg.start;
          const covered = Math.max(1, top - t);
          // Split when the rest of the slice likely holds more than `splitPages` pages: into as many parts as
          // it has `splitPages`-sized chunks (at most 64 at once), so a dense slice fans out in one step.
          const estimate = (rows * width) / covered;
          // Fewer readers than one full batch (the tail of a call): split finer, so the last POSTs stay full.
          const pagesPerPart = running < FULL_BATCH ? 2 : o.splitPages;
          if (width >= minSplitMs && estimate > pagesPerPart * o.limit) {
            const parts = Math.min(64, Math.ceil(estimate / (pagesPerPart * o.limit)));
            const cuts: number[] = [];
            for (let i = 1; i < parts; i++) {
              const cut = Math.floor((seg.start + (width * i) / parts) / align) * align;
              if (cut > seg.start && cut <= t && cut > (cuts[cuts.length - 1] ?? -Infinity)) cuts.push(cut);
            }
            const keep = cuts[cuts.length - 1];
            if (keep !== undefined) {
              // The reader keeps the newest part; the older parts become slices, newest first after it.
              let prev = seg;
              let hi = keep;
              for (let j = cuts.length - 2; j >= -1; j--) {
                const lo = j >= 0 ? (cuts[j] as number) : seg.start;
                const older: Segment<T> = {
                  listing: seg.listing,
                  start: lo,
                  end: hi,
                  buffer: [],
                  started: false,
                  done: false,
                  next: prev.next,
                };
                prev.next = older;
                prev = older;
                hi = lo;
                splitQueue.push(older);
                st.slices++;
              }
              st.splits++;
              seg.start = keep;
              pump();
            }
          }
        }
        // Backpressure for streaming: only the slice being emitted may run ahead without bound.
        while (seg !== current && buffered > o.highWater && !failure) await changed();
        if (failure) return;
      }
      seg.done = true;
    } catch (error) {
      fail(error);
    } finally {
      running--;
      notify();
      pump();
    }
  }

  /**
   * The page that ended a slice names the newest row older than the slice (`below`, -Infinity when there is none):
   * unstarted slices of the same listing lying wholly between it and the slice hold no row, so they are done
   * without a request (this is what keeps thousands of tiny, empty slices cheap).
   */
  function skipEmptyBelow(seg: Segment<T>, below: number): void {
    if (Number.isNaN(below)) return;
    // v1 orders by whole second: only seconds after the row's own second are known empty.
    const emptyFrom =
      below === -Infinity ? -Infinity : align === 1 ? below + 1 : Math.floor(below / 1000) * 1000 + 1000;
    for (let s = seg.next; s && s.listing === seg.listing && s.start >= emptyFrom; s = s.next) {
      if (s.started) continue; // already reading: it will find nothing and end on its own
      s.started = true;
      s.done = true;
      st.skipped = (st.skipped ?? 0) + 1;
    }
  }

  function pump(): void {
    if (failure) return;
    // The slice being emitted never waits for a slot (no deadlock behind paused readers).
    if (current && !current.started) void run(current);
    while (running < o.concurrency) {
      let seg: Segment<T> | undefined;
      while (splitQueue.length > 0 && !seg) {
        const s = splitQueue.shift();
        if (s && !s.started) seg = s;
      }
      while (!seg && nextInitial < initial.length) {
        const s = initial[nextInitial++];
        if (s && !s.started) seg = s;
      }
      if (!seg) break;
      void run(seg);
    }
  }

  try {
    pump();
    let lastTime = NaN;
    let idsAtLastTime = new Set<string>();
    // Items without a readable sort time (malformed records passed through) cannot be placed by time, so every
    // slice that reads past one keeps it (never dropped); their ids are remembered for the whole call instead.
    const unplacedIds = new Set<string>();
    while (current) {
      if (current.buffer.length > 0) {
        const items = current.buffer;
        current.buffer = [];
        buffered -= items.length;
        notify();
        for (const item of items) {
          // Unique by _id: the output is ordered by (time, _id), so a repeat can only sit at the same instant.
          // v1 orders by (whole second, _id), so a repeat shares the second rather than the millisecond.
          const t = Math.floor(sortTimeOf(item, current.listing.sortField) / align) * align;
          const id = (item as Record<string, unknown>)['_id'];
          if (Number.isNaN(t)) {
            if (typeof id === 'string') {
              if (unplacedIds.has(id)) continue;
              unplacedIds.add(id);
            }
            yield item;
            continue;
          }
          if (t !== lastTime) {
            lastTime = t;
            idsAtLastTime = new Set();
          }
          if (typeof id === 'string') {
            if (idsAtLastTime.has(id)) continue;
            idsAtLastTime.add(id);
          }
          yield item;
        }
        continue;
      }
      if (failure) throw failure;
      if (current.done) {
        current = current.next;
        pump();
        continue;
      }
      await changed();
    }
    if (failure) throw failure;
  } finally {
    o.signal?.removeEventListener('abort', onAbort);
    if (!internal.signal.aborted) internal.abort(new AbortedError('collect finished or abandoned'));
  }
}

/** Collects every item into an array (newest first per listing, unique by `_id`). */
export async function collectSlices<T>(
  core: ClientCore,
  listings: readonly Listing[],
  options: CollectOptions = {},
  stats?: CollectStats,
): Promise<T[]> {
  const out: T[] = [];
  // The array form buffers everything anyway, so readers never pause.
  for await (const item of iterateSlices<T>(core, listings, { ...options, highWaterItems: Infinity }, stats))
    out.push(item);
  return out;
}
