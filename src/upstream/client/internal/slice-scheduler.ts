/**
 * The scheduler of one `collectAll` call: up to `concurrency` slice readers at once (split-off parts first, then
 * the initial grid in order; the slice being emitted never waits for a slot), each reader learning density,
 * splitting its slice when dense (the shared rule of src/foundation/slicing) and pausing for back-pressure. Any error fails
 * the whole call and aborts every other reader.
 */
import { setMaxListeners } from 'node:events';
import { AbortedError, GamedataError } from '../../../foundation/errors/index.js';
import { planSplit, roundSplitRule } from '../../../foundation/slicing/index.js';
import type { ClientCore, InvalidItemMode } from '../core.js';
import { readSlicePages, type SlicePageDetail } from '../read-slice.js';
import type { ChangeSignal } from './change-signal.js';
import {
  bufferSegmentItems,
  finishSegment,
  skipEmptyBelow,
  splitSegment,
  startSegment,
  takeSegmentItems,
  type Segment,
} from './slice-segments.js';

/** Pages one POST carries (the upstream's batch limit). */
const FULL_BATCH = 50;
/** Most pieces one split makes at once. */
const MAX_SPLIT_PARTS = 64;

/**
 * Engine statistics (for tests and the benchmark): the caller's object, counted here only (the scheduler counts its
 * slices, splits and pages; `collect.ts` tells it of the head probe with {@link countHeadRound}).
 */
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
  /** Planning for rounds: split at quadrupling depths when the unread part is this many times the span read. */
  geometricAbove: number;
  /** True while planning for fewest rounds (else fewest requests); asked at each split. */
  forRounds: () => boolean;
  /** Items buffered ahead of the emitter before readers of later slices pause. */
  highWater: number;
  /** 1000 for a v1 upstream (second-precision bounds), else 1. */
  alignMs: number;
  /** Told of each page's items as it arrives (`CollectOptions.onPage`). */
  onPage?: ((items: readonly unknown[]) => void) | undefined;
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

/** Counts a head probe round (planning for rounds: one page per listing, before any slice is read). */
export function countHeadRound(stats: CollectStats, pages: number): void {
  stats.rounds = Math.max(stats.rounds ?? 0, 1);
  stats.pages += pages;
}

/** The call's one failure: the first error of any reader, or the caller's abort; either stops every reader. */
interface CallFailure {
  /** Aborts when the call fails or closes; every in-flight page listens on it. */
  readonly signal: AbortSignal;
  readonly failure: GamedataError | undefined;
  fail(error: unknown): void;
  /** Detaches from the caller's signal and aborts readers still running. */
  close(): void;
}

function createCallFailure(callerSignal: AbortSignal | undefined, events: ChangeSignal): CallFailure {
  const internal = new AbortController();
  const signal = callerSignal ? AbortSignal.any([callerSignal, internal.signal]) : internal.signal;
  // Every in-flight page listens on it: hundreds of listeners are expected, not a leak.
  setMaxListeners(0, signal);
  let failure: GamedataError | undefined;
  const onAbort = (): void => {
    if (!failure) failure = new AbortedError('collect aborted', { cause: callerSignal?.reason });
    events.notify();
  };
  callerSignal?.addEventListener('abort', onAbort, { once: true });
  return {
    signal,
    get failure() {
      return failure;
    },
    fail(error) {
      if (!failure) failure = GamedataError.from(error);
      internal.abort(failure);
      events.notify();
    },
    close() {
      callerSignal?.removeEventListener('abort', onAbort);
      if (!internal.signal.aborted) internal.abort(new AbortedError('collect finished or abandoned'));
    },
  };
}

/** Rows per ms learned over completed spans. */
interface Density {
  rows: number;
  ms: number;
}

/** Learns rows per ms from a page over a finite span (`prevTime` down to `spanEnd`). */
function learnDensity(density: Density, prevTime: number, spanEnd: number, rows: number): void {
  if (prevTime !== Infinity && Number.isFinite(spanEnd) && prevTime > spanEnd) {
    density.rows += rows;
    density.ms += prevTime - spanEnd;
  }
}

/** A slice expected to be sparse asks for a short first page (less to transfer for empty slices). */
function firstPageLimit(
  seg: { start: number; end: number },
  s: Pick<SchedulerSettings, 'forRounds' | 'limit'>,
  density: Density,
): number {
  // For rounds a page costs the same whatever its size: ask for a full one, so the slice likely ends with it.
  if (s.forRounds()) return s.limit;
  // Unknown density (the first wave): a short page, since most slices of a wide grid may be empty.
  const expected =
    density.ms > 0 && seg.end !== Infinity && seg.start !== -Infinity
      ? (density.rows / density.ms) * (seg.end - seg.start)
      : 0;
  return Math.min(s.limit, Math.max(10, Math.ceil(expected * 1.5) + 1));
}

/**
 * How a dense running slice splits. Rounds: pieces of half a page, all read in the next round (the shared rule).
 * Requests: pieces of `splitPages` pages, or of two with fewer readers than one full batch (the tail of a call), so
 * the last POSTs stay full.
 */
function splitRuleOf(s: SchedulerSettings, running: number): Parameters<typeof planSplit>[2] {
  const rowsPerPart = (running < FULL_BATCH ? 2 : s.splitPages) * s.limit;
  return s.forRounds()
    ? { ...roundSplitRule(s.limit, s.alignMs), geometricAbove: s.geometricAbove }
    : { rowsPerPart, splitAbove: rowsPerPart, maxParts: MAX_SPLIT_PARTS, alignMs: s.alignMs };
}

/** The slices waiting for a reader: split-off parts first, then the initial grid in order. */
function createSegmentQueue<T>(initial: readonly Segment<T>[]): {
  pushSplit(parts: readonly Segment<T>[]): void;
  next(): Segment<T> | undefined;
} {
  let nextInitial = 0;
  const splitQueue: Segment<T>[] = [];
  return {
    pushSplit(parts) {
      for (const older of parts) splitQueue.push(older);
    },
    next() {
      while (splitQueue.length > 0) {
        const seg = splitQueue.shift();
        if (seg && !seg.started) return seg;
      }
      while (nextInitial < initial.length) {
        const seg = initial[nextInitial++];
        if (seg && !seg.started) return seg;
      }
      return undefined;
    },
  };
}

/** The pages of a segment's slice, down to its (moving) start; the first one sized by the density learned so far. */
function slicePages<T>(
  core: ClientCore,
  seg: Segment<T>,
  s: SchedulerSettings,
  density: Density,
  signal: AbortSignal,
): AsyncGenerator<SlicePageDetail<T>> {
  return readSlicePages<T>(core, seg.listing, seg.end, () => seg.start, {
    limit: s.limit,
    firstLimit: firstPageLimit(seg, s, density),
    signal,
    onInvalidItem: s.onInvalidItem,
  });
}

/**
 * What a page teaches: rows per ms over its span (when finite) and, on the slice's last page, the empty time below
 * it (skipped, never requested). Returns where the next page's span starts.
 */
function learnFromPage<T>(
  seg: Segment<T>,
  page: SlicePageDetail<T>,
  prevTime: number,
  o: { density: Density; stats: CollectStats; alignMs: number },
): number {
  learnDensity(o.density, prevTime, page.cursor === null ? seg.start : page.lastTimeMs, page.items.length);
  if (page.cursor === null) {
    const skipped = skipEmptyBelow(seg, page.fetched === 0 ? -Infinity : page.belowTimeMs, o.alignMs);
    if (skipped > 0) o.stats.skipped = (o.stats.skipped ?? 0) + skipped;
  }
  return Number.isNaN(page.lastTimeMs) ? prevTime : page.lastTimeMs;
}

/** Splits a dense running slice by `rule`, queueing its older parts; returns whether it split. */
function splitIfDense<T>(
  seg: Segment<T>,
  progress: { rowsRead: number; topTime: number; lastTime: number },
  round: number,
  rule: Parameters<typeof planSplit>[2],
  segments: { pushSplit(parts: readonly Segment<T>[]): void },
  stats: CollectStats,
): boolean {
  const split = planSplit(seg, progress, rule);
  if (split === null) return false;
  const added = splitSegment(seg, split, round);
  segments.pushSplit(added);
  stats.slices += added.length;
  stats.splits++;
  return true;
}

export function createSliceScheduler<T>(
  core: ClientCore,
  initial: readonly Segment<T>[],
  s: SchedulerSettings,
  events: ChangeSignal,
  stats: CollectStats,
): SliceScheduler<T> {
  const call = createCallFailure(s.signal, events);
  const signal = call.signal;
  let running = 0;
  let buffered = 0;
  // Rows per ms over completed spans: sizes the first page of later slices.
  const density: Density = { rows: 0, ms: 0 };
  const segments = createSegmentQueue(initial);
  stats.slices += initial.length;

  async function read(seg: Segment<T>): Promise<void> {
    startSegment(seg);
    running++;
    try {
      let top = seg.end;
      let rows = 0;
      let prevTime = seg.end;
      let round = seg.round;
      const pages = slicePages(core, seg, s, density, signal);
      for await (const page of pages) {
        stats.pages++;
        round++;
        if (round > (stats.rounds ?? 0)) stats.rounds = round;
        prevTime = learnFromPage(seg, page, prevTime, { density, stats, alignMs: s.alignMs });
        if (page.items.length > 0) {
          bufferSegmentItems(seg, page.items);
          buffered += page.items.length;
          s.onPage?.(page.items);
          events.notify();
        }
        rows += page.items.length;
        if (page.cursor === null) break;
        if (top === Infinity && !Number.isNaN(page.firstTimeMs)) top = page.firstTimeMs;
        if (s.splitDense && page.fetched >= page.limit && !Number.isNaN(page.lastTimeMs)) {
          const progress = { rowsRead: rows, topTime: top, lastTime: page.lastTimeMs };
          // Its older parts are scheduled at once.
          if (splitIfDense(seg, progress, round, splitRuleOf(s, running), segments, stats)) pump();
        }
        // Backpressure for streaming: only the slice being emitted may run ahead without bound.
        while (seg !== scheduler.current && buffered > s.highWater && !call.failure) await events.changed();
        if (call.failure) return;
      }
      finishSegment(seg);
    } catch (error) {
      call.fail(error);
    } finally {
      running--;
      events.notify();
      pump();
    }
  }

  function pump(): void {
    if (call.failure) return;
    // The slice being emitted never waits for a slot (no deadlock behind paused readers).
    if (scheduler.current && !scheduler.current.started) void read(scheduler.current);
    // Streaming back-pressure: no new slice starts while the buffer is over its mark (take() pumps again).
    while (running < s.concurrency && buffered <= s.highWater) {
      const seg = segments.next();
      if (!seg) break;
      void read(seg);
    }
  }

  const scheduler: SliceScheduler<T> = {
    pump,
    current: initial[0] ?? null,
    take(seg) {
      const items = takeSegmentItems(seg);
      buffered -= items.length;
      events.notify();
      pump();
      return items;
    },
    get failure() {
      return call.failure;
    },
    close: () => call.close(),
  };
  return scheduler;
}
