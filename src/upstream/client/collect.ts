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
 *
 * The parts: the slice plan and the split rule are the shared pure core (src/foundation/slicing/); the segment list
 * (internal/slice-segments.ts), the scheduler with its readers and back-pressure (internal/slice-scheduler.ts) and
 * the output dedup (internal/unique-by-id.ts) are the client's; this file resolves options and emits.
 */
import { ConfigError } from '../../foundation/errors/index.js';
import type { ClientCore, InvalidItemMode } from './core.js';
import type { Listing } from './listing.js';
import { createChangeSignal } from './internal/change-signal.js';
import {
  countHeadRound,
  createSliceScheduler,
  type CollectStats,
  type SchedulerSettings,
} from './internal/slice-scheduler.js';
import { planSegments, type SegmentGrid } from './internal/slice-segments.js';
import { createUniqueById } from './internal/unique-by-id.js';
import { probeSortTimes } from './read-slice.js';

export type { CollectStats } from './internal/slice-scheduler.js';

const DAY_MS = 86_400_000;

export interface CollectOptions {
  /** Nothing older than this is read (inclusive). `undefined`: the oldest slice is open-ended (reads to the feed's end). */
  oldestDate?: Date | string | number | undefined;
  /** Exclusive upper bound. @default undefined (the head of the feed: the newest slice reads without a cursor) */
  until?: Date | string | number | undefined;
  /**
   * Width of the initial slices, in days: a fixed grid. @default undefined (`oldestDate` set and planning for
   * rounds: `firstRoundSlices` equal slices; otherwise 0.2)
   */
  timeSliceDays?: number | undefined;
  /**
   * What the plan minimises. `rounds`: sequential request waves (the upstream takes ~0.6-2.3 s per POST whatever
   * its size): the first round reads `firstRoundSlices` slices at once, and a full page splits the rest of its slice
   * into pieces expected to fit one page each, all read in the next round. `requests`: the fixed grid and coarse
   * splits (`splitPages`), fewest POSTs. `auto`: `requests` while the client's budget binds
   * (`ClientCore.budgetBinds`: a pause runs or less than a fifth of the window's requests is left), else `rounds`;
   * asked at the start and again at each split. @default 'auto'
   */
  plan?: 'auto' | 'rounds' | 'requests' | undefined;
  /** Slices of the first round when planning for rounds (one POST carries 50 pages). @default 50 */
  firstRoundSlices?: number | undefined;
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
  /**
   * Planning for rounds over an open history (`oldestDate` far below the rows, e.g. 0 for a country's users): a
   * slice whose unread part is more than this many times wider than the span its pages covered splits at
   * quadrupling depths below its reader first (`splitGeometric`: a logarithmic number of pieces, most of the empty
   * past one page each), not into even half-page pieces. @default Infinity (never)
   */
  geometricAbove?: number | undefined;
  /** Where the slice grid starts when `oldestDate` is open-ended. @default 2025-01-01 */
  gridFloor?: Date | string | number | undefined;
  /** Items buffered ahead of the consumer before readers of later slices pause (streaming only). @default 20 000 */
  highWaterItems?: number | undefined;
  /**
   * Told of each page's items as the page arrives, before the output's order and dedup: a caller that can act on
   * items in any order starts early (the planner's per-user walks start from the user listing's pages, issue 32).
   * Must not throw. @default none
   */
  onPage?: ((items: readonly unknown[]) => void) | undefined;
  /** Injected clock (anchors the grid when `until` is open). @default Date.now */
  now?: (() => number) | undefined;
}

export const DEFAULT_COLLECT_OPTIONS = {
  timeSliceDays: 0.2,
  plan: 'auto',
  firstRoundSlices: 50,
  concurrency: 500,
  limit: 100,
  onInvalidItem: 'throw',
  splitDense: true,
  splitPages: 12,
  gridFloor: Date.UTC(2025, 0, 1),
  highWaterItems: 20_000,
} as const;

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

/** The resolved options: the grid to plan and the scheduler's settings (its `alignMs` comes from the client). */
type Resolved = SegmentGrid & Omit<SchedulerSettings, 'alignMs'>;

function resolve(core: ClientCore, options: CollectOptions): Resolved {
  const plan = options.plan ?? DEFAULT_COLLECT_OPTIONS.plan;
  if (plan !== 'auto' && plan !== 'rounds' && plan !== 'requests')
    throw new ConfigError(`plan must be 'auto', 'rounds' or 'requests', got ${String(plan)}`, ['plan']);
  const firstRoundSlices = options.firstRoundSlices ?? DEFAULT_COLLECT_OPTIONS.firstRoundSlices;
  if (!Number.isInteger(firstRoundSlices) || firstRoundSlices < 1)
    throw new ConfigError(`firstRoundSlices must be an integer >= 1, got ${firstRoundSlices}`, [
      'firstRoundSlices',
    ]);
  const forRounds =
    plan === 'auto' ? () => !(core.budgetBinds?.() ?? false) : plan === 'rounds' ? () => true : () => false;
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
  const anchor = Math.min(top === Infinity ? now : top, now);
  const firstRound =
    options.timeSliceDays === undefined && oldest > -Infinity && oldest < anchor && forRounds()
      ? firstRoundSlices
      : undefined;
  return {
    forRounds,
    firstRound,
    oldest,
    top,
    anchor,
    sliceMs: timeSliceDays * DAY_MS,
    concurrency,
    limit,
    onInvalidItem: options.onInvalidItem ?? DEFAULT_COLLECT_OPTIONS.onInvalidItem,
    splitDense: options.splitDense ?? DEFAULT_COLLECT_OPTIONS.splitDense,
    splitPages: options.splitPages ?? DEFAULT_COLLECT_OPTIONS.splitPages,
    geometricAbove: options.geometricAbove ?? Infinity,
    highWater: options.highWaterItems ?? DEFAULT_COLLECT_OPTIONS.highWaterItems,
    onPage: options.onPage,
    signal: options.signal,
    gridFloor: oldest === -Infinity ? floor : undefined,
  };
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
  const o = resolve(core, options);
  const alignMs = core.cursorFormat === 'v1' ? 1000 : 1;
  const st = stats ?? { slices: 0, splits: 0, pages: 0, rounds: 0 };
  // Planning for rounds up to the feed's head: one cheap probe round (a head page of one row per listing, all in the
  // same POSTs) finds where each listing's newest row is, unless the caller gave the clock or an `until`.
  let heads: Map<Listing, number> | undefined;
  if (o.firstRound !== undefined && o.top === Infinity && options.now === undefined) {
    const times = await Promise.all(
      listings.map((listing) => probeSortTimes(core, listing, Infinity, 1, o.signal)),
    );
    heads = new Map(listings.map((listing, i) => [listing, times[i]?.[0] ?? -Infinity]));
    countHeadRound(st, listings.length);
  }
  const initial = planSegments<T>(listings, { ...o, heads }, alignMs);
  const events = createChangeSignal();
  const scheduler = createSliceScheduler<T>(core, initial, { ...o, alignMs }, events, st);
  const accept = createUniqueById(alignMs);
  try {
    scheduler.pump();
    for (let seg = scheduler.current; seg; seg = scheduler.current) {
      if (seg.buffer.length > 0) {
        for (const item of scheduler.take(seg)) if (accept(item, seg.listing.sortField)) yield item;
        continue;
      }
      if (scheduler.failure) throw scheduler.failure;
      if (seg.done) {
        scheduler.current = seg.next;
        scheduler.pump();
        continue;
      }
      await events.changed();
    }
    if (scheduler.failure) throw scheduler.failure;
  } finally {
    scheduler.close();
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
