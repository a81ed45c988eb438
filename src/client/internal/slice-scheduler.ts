/**
 * The scheduler of one `collectAll` call: up to `concurrency` slice readers at once (split-off parts first, then
 * the initial grid in order; the slice being emitted never waits for a slot), each reader learning density,
 * splitting its slice when dense (the shared rule of src/slicing) and pausing for back-pressure. Any error fails
 * the whole call and aborts every other reader.
 */
import { setMaxListeners } from 'node:events';
import { AbortedError, GamedataError } from '../../errors.js';
import { planSplit, roundSplitRule } from '../../slicing/index.js';
import type { ClientCore, InvalidItemMode } from '../core.js';
import { readSlicePages } from '../read-slice.js';
import type { ChangeSignal } from './change-signal.js';
import { skipEmptyBelow, splitSegment, type Segment } from './slice-segments.js';

/** Pages one POST carries (the upstream's batch limit). */
const FULL_BATCH = 50;
/** Most pieces one split makes at once. */
const MAX_SPLIT_PARTS = 64;

/** Engine statistics (for tests and the benchmark). */
export interface CollectStats {
  slices: number;
  splits: number;
  pages: number;
  /** Slices known empty from a neighbour's page, never requested. */
  skipped?: number;
  /** Sequential rounds of pages: the longest chain of pages each asked only after the answer before it. */
  rounds?: number;
}

export interface SchedulerSettings {
  concurrency: number;
  limit: number;
  onInvalidItem: InvalidItemMode;
  splitDense: boolean;
  splitPages: number;
  /** True while planning for fewest rounds (else fewest requests); asked at each split. */
  forRounds: () => boolean;
  /** Items buffered ahead of the emitter before readers of later slices pause. */
  highWater: number;
  /** 1000 for a v1 upstream (second-precision bounds), else 1. */
  alignMs: number;
  signal: AbortSignal | undefined;
}

export interface SliceScheduler<T> {
  /** Starts readers while slots are free. */
  pump(): void;
  /** The segment being emitted (it may run ahead without bound and never waits for a slot). */
  current: Segment<T> | null;
  /** Takes the items buffered in a segment (the emitter's side of back-pressure). */
  take(seg: Segment<T>): T[];
  /** The error that failed the call, if any. */
  readonly failure: GamedataError | undefined;
  /** Detaches from the caller's signal and aborts readers still running. */
  close(): void;
}

export function createSliceScheduler<T>(
  core: ClientCore,
  initial: readonly Segment<T>[],
  s: SchedulerSettings,
  events: ChangeSignal,
  stats: CollectStats,
): SliceScheduler<T> {
  const internal = new AbortController();
  const signal = s.signal ? AbortSignal.any([s.signal, internal.signal]) : internal.signal;
  // Every in-flight page listens on it: hundreds of listeners are expected, not a leak.
  setMaxListeners(0, signal);
  let failure: GamedataError | undefined;
  const onAbort = (): void => {
    if (!failure) failure = new AbortedError('collect aborted', { cause: s.signal?.reason });
    events.notify();
  };
  s.signal?.addEventListener('abort', onAbort, { once: true });

  let running = 0;
  let buffered = 0;
  // Rows per ms over completed spans: sizes the first page of later slices.
  const density = { rows: 0, ms: 0 };
  let nextInitial = 0;
  const splitQueue: Segment<T>[] = [];

  const fail = (error: unknown): void => {
    if (!failure) failure = GamedataError.from(error);
    internal.abort(failure);
    events.notify();
  };

  /** A slice expected to be sparse asks for a short first page (less to transfer for empty slices). */
  function firstPageLimit(seg: Segment<T>): number {
    // For rounds a page costs the same whatever its size: ask for a full one, so the slice likely ends with it.
    if (s.forRounds()) return s.limit;
    // Unknown density (the first wave): a short page, since most slices of a wide grid may be empty.
    const expected =
      density.ms > 0 && seg.end !== Infinity && seg.start !== -Infinity
        ? (density.rows / density.ms) * (seg.end - seg.start)
        : 0;
    return Math.min(s.limit, Math.max(10, Math.ceil(expected * 1.5) + 1));
  }

  /** Splits a dense running slice; its older parts are scheduled at once. */
  function maybeSplit(
    seg: Segment<T>,
    rowsRead: number,
    topTime: number,
    lastTime: number,
    round: number,
  ): void {
    // Rounds: pieces of half a page, all read in the next round (the shared rule). Requests: pieces of `splitPages`
    // pages, or of two with fewer readers than one full batch (the tail of a call), so the last POSTs stay full.
    const rowsPerPart = (running < FULL_BATCH ? 2 : s.splitPages) * s.limit;
    const rule = s.forRounds()
      ? roundSplitRule(s.limit, s.alignMs)
      : { rowsPerPart, splitAbove: rowsPerPart, maxParts: MAX_SPLIT_PARTS, alignMs: s.alignMs };
    const split = planSplit(seg, { rowsRead, topTime, lastTime }, rule);
    if (split === null) return;
    const added = splitSegment(seg, split, round);
    for (const older of added) splitQueue.push(older);
    stats.slices += added.length;
    stats.splits++;
    pump();
  }

  async function read(seg: Segment<T>): Promise<void> {
    seg.started = true;
    running++;
    try {
      let top = seg.end;
      let rows = 0;
      let prevTime = seg.end;
      let round = seg.round;
      const pages = readSlicePages<T>(core, seg.listing, seg.end, () => seg.start, {
        limit: s.limit,
        firstLimit: firstPageLimit(seg),
        signal,
        onInvalidItem: s.onInvalidItem,
      });
      for await (const page of pages) {
        stats.pages++;
        round++;
        if (round > (stats.rounds ?? 0)) stats.rounds = round;
        // Learn rows per ms from every page over a finite span.
        const spanEnd = page.cursor === null ? seg.start : page.lastTimeMs;
        if (prevTime !== Infinity && Number.isFinite(spanEnd) && prevTime > spanEnd) {
          density.rows += page.items.length;
          density.ms += prevTime - spanEnd;
        }
        if (!Number.isNaN(page.lastTimeMs)) prevTime = page.lastTimeMs;
        if (page.cursor === null) {
          const skipped = skipEmptyBelow(seg, page.fetched === 0 ? -Infinity : page.belowTimeMs, s.alignMs);
          if (skipped > 0) stats.skipped = (stats.skipped ?? 0) + skipped;
        }
        if (page.items.length > 0) {
          for (const item of page.items) seg.buffer.push(item);
          buffered += page.items.length;
          events.notify();
        }
        rows += page.items.length;
        if (page.cursor === null) break;
        if (top === Infinity && !Number.isNaN(page.firstTimeMs)) top = page.firstTimeMs;
        if (s.splitDense && page.fetched >= page.limit && !Number.isNaN(page.lastTimeMs))
          maybeSplit(seg, rows, top, page.lastTimeMs, round);
        // Backpressure for streaming: only the slice being emitted may run ahead without bound.
        while (seg !== scheduler.current && buffered > s.highWater && !failure) await events.changed();
        if (failure) return;
      }
      seg.done = true;
    } catch (error) {
      fail(error);
    } finally {
      running--;
      events.notify();
      pump();
    }
  }

  function nextSegment(): Segment<T> | undefined {
    while (splitQueue.length > 0) {
      const seg = splitQueue.shift();
      if (seg && !seg.started) return seg;
    }
    while (nextInitial < initial.length) {
      const seg = initial[nextInitial++];
      if (seg && !seg.started) return seg;
    }
    return undefined;
  }

  function pump(): void {
    if (failure) return;
    // The slice being emitted never waits for a slot (no deadlock behind paused readers).
    if (scheduler.current && !scheduler.current.started) void read(scheduler.current);
    // Streaming back-pressure: no new slice starts while the buffer is over its mark (take() pumps again).
    while (running < s.concurrency && buffered <= s.highWater) {
      const seg = nextSegment();
      if (!seg) break;
      void read(seg);
    }
  }

  const scheduler: SliceScheduler<T> = {
    pump,
    current: initial[0] ?? null,
    take(seg) {
      const items = seg.buffer;
      seg.buffer = [];
      buffered -= items.length;
      events.notify();
      pump();
      return items;
    },
    get failure() {
      return failure;
    },
    close() {
      s.signal?.removeEventListener('abort', onAbort);
      if (!internal.signal.aborted) internal.abort(new AbortedError('collect finished or abandoned'));
    },
  };
  return scheduler;
}
