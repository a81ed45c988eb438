/**
 * The walk of one running slice, shared by both delivery paths: the rows and the time read since the slice last
 * (re)started, and whether the page just read calls for a split (a dense slice hands the older part of what it still
 * has to read to child slices and reads on). Pure: the page and the slice's current data decide.
 *
 * The density is measured from the newest row read, not the slice's end (an empty top says nothing about the rest);
 * a finished slice (null cursor) has nothing left to hand off; at least `minPagesBeforeSplit` pages are read before
 * judging, and splits nest at most `maxDepth` deep. While the key has requests to spare (`keySpare`), a per-user walk
 * that proved long splits into pieces of half a page (`spareKeySplitRule`). At the run's end (`spareSlots`), a slice
 * the rule leaves whole splits to fill the worker's idle slots (`tailSplitRuleOf`, nesting up to `TAIL_MAX_DEPTH`), a
 * slice planned not to split included once it has read `UNSPLIT_TAIL_MIN_PAGES` pages.
 */
import type { SliceJobData } from '../contract/job-types.js';
import { planSplit, type RemainingSplit } from '../../foundation/slicing/index.js';
import type { SlicePage } from './slice-contract.js';
import {
  isQuietWalk,
  sliceSplitRule,
  spareKeySplitRule,
  tailSplitRuleOf,
  UNSPLIT_TAIL_MIN_PAGES,
} from './slice-split-rule.js';
import { sortTime } from './slice-sort-time.js';

export interface SliceWalkOptions {
  targetRows: number;
  splitFactor: number;
  maxSplitParts: number;
  maxDepth: number;
  minPagesBeforeSplit: number;
  /**
   * Claims the worker's slots a split of this slice may fill now: its share of the slots no slice has filled for a
   * while (the run's end; `IdleSlots.claim` in src/pipeline/queue/idle-slots.ts). Called only when the slice would split with
   * them. Absent or 0: none.
   */
  spareSlots?: (() => number) | undefined;
  /**
   * Whether the key had requests to spare at its last batch and the slices waiting would find a slot (`keyHasSpare`
   * over the fetcher's `BudgetDemand`). A per-user walk then splits into pieces of half a page once it has proved long
   * (`spareKeySplitRule`). Absent: never.
   */
  keySpare?: (() => boolean) | undefined;
}

export interface SliceWalk {
  /** Counts a page of the slice; returns the split it calls for, or null. */
  observe(page: SlicePage, data: SliceJobData): RemainingSplit | null;
  /** The slice restarts (after a split): density is measured afresh. */
  restart(): void;
}

export function createSliceWalk(o: SliceWalkOptions): SliceWalk {
  let rows = 0;
  let pagesSinceStart = 0;
  let topTime: number | undefined;
  return {
    observe(page, data) {
      rows += page.items.length;
      pagesSinceStart += 1;
      const first = page.items[0];
      if (topTime === undefined && first !== undefined) topTime = sortTime(data.resource, first);
      const last = page.items[page.items.length - 1];
      const lastTime = last === undefined ? undefined : sortTime(data.resource, last);
      if (page.cursor === null || lastTime === undefined || topTime === undefined) return null;
      const slice = { start: data.start, end: data.end };
      const progress = { rowsRead: rows, topTime, lastTime };
      // A planned walk proves itself long over `minPagesBeforeSplit` pages; a piece of a split was cut from one that
      // did, so on a spare key it may split from its first page on.
      const spareFrom = data.depth > 0 ? 1 : o.minPagesBeforeSplit;
      if (pagesSinceStart >= spareFrom && o.keySpare?.() === true) {
        const rule = spareKeySplitRule(data, o);
        const split = rule === null ? null : planSplit(slice, progress, rule);
        if (split !== null) return split;
      }
      if (pagesSinceStart < o.minPagesBeforeSplit) return null;
      if (data.depth < o.maxDepth) {
        const split = planSplit(slice, progress, sliceSplitRule(data, o));
        if (split !== null) return split;
      }
      if (o.spareSlots === undefined) return null;
      if (isQuietWalk(data) && pagesSinceStart < UNSPLIT_TAIL_MIN_PAGES) return null;
      // Slots are claimed only by a slice that would split with them (a claim holds them from the other slices).
      const wanted = tailSplitRuleOf(data, o, Number.POSITIVE_INFINITY);
      if (wanted === null || planSplit(slice, progress, wanted) === null) return null;
      const spare = o.spareSlots();
      const tail = spare < 1 ? null : tailSplitRuleOf(data, o, spare);
      return tail === null ? null : planSplit(slice, progress, tail);
    },
    restart() {
      rows = 0;
      pagesSinceStart = 0;
      topTime = undefined;
    },
  };
}
