/**
 * The run's end (issue 32): a slice the 5 000-row rule leaves whole splits to fill the worker's idle slots
 * (`tailSplitRule`, `SliceWalkOptions.spareSlots`), and the idle slots are only those free over a whole window
 * (`idleShare`).
 */
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { idleShare, startIdleSlots } from '../../../../src/pipeline/queue/idle-slots.js';
import { createSliceWalk } from '../../../../src/pipeline/slice/slice-walk.js';
import {
  sliceSplitRule,
  TAIL_MAX_DEPTH,
  TAIL_PIECE_ROWS,
  tailSplitRule,
  UNSPLIT_TAIL_MIN_PAGES,
  UNSPLIT_TAIL_PARTS,
  tailSplitRuleOf,
} from '../../../../src/pipeline/slice/slice-split-rule.js';
import { UNSPLIT_DEPTH } from '../../../../src/pipeline/planner/plan-partition.js';
import { DEFAULT_PROCESS_SLICE_OPTIONS } from '../../../../src/pipeline/slice/slice-contract.js';
import type { SliceJobData } from '../../../../src/pipeline/planner/index.js';

const T0 = Date.UTC(2026, 9, 1);
const MIN = 60_000;

/** A slice over [T0, T0 + 100 min) whose pages hold one row a minute, 100 rows each... and more below. */
function sliceData(over: Partial<SliceJobData> = {}): SliceJobData {
  return {
    runId: 'r',
    sliceId: 's',
    resource: 'transactions',
    filters: {},
    start: T0,
    end: T0 + 10_000 * MIN,
    replay: false,
    depth: 0,
    ...over,
  };
}

/** A full page of 100 rows, one every `stepMs`, newest at `top`. */
function page(top: number, stepMs: number): { items: Record<string, unknown>[]; cursor: string } {
  const items = Array.from({ length: 100 }, (_, i) => ({
    _id: `t${top - i * stepMs}`,
    createdAt: new Date(top - i * stepMs).toISOString(),
  }));
  return { items, cursor: 'next' };
}

/** Observes `n` full pages from the slice's top; returns the last observation. */
function pages(n: number, data: SliceJobData, spare?: number) {
  const walk = createSliceWalk({
    ...DEFAULT_PROCESS_SLICE_OPTIONS,
    ...(spare === undefined ? {} : { spareSlots: () => spare }),
  });
  const top = data.end - 1;
  for (let i = 0; i < n - 1; i++) expect(walk.observe(page(top - i * 100 * MIN, MIN), data)).toBeNull();
  return walk.observe(page(top - (n - 1) * 100 * MIN, MIN), data);
}

/** Observes two full pages from the slice's top; returns the second observation. */
function twoPages(data: SliceJobData, spare?: number) {
  return pages(2, data, spare);
}

describe('tail split', () => {
  it('a slice with four tail pieces of rows left: whole under the 5 000-row rule, split to fill idle slots at the end', () => {
    // 4 x TAIL_PIECE_ROWS + 150 rows, one a minute; two pages read, ~4 pieces' rows left (under 10 000: the rule keeps it).
    const data = sliceData({ end: T0 + (4 * TAIL_PIECE_ROWS + 150) * MIN });
    expect(twoPages(data)).toBeNull();
    expect(twoPages(data, 0)).toBeNull();
    const split = twoPages(data, 31);
    expect(split).not.toBeNull();
    // In pieces of at most TAIL_PIECE_ROWS: 4 parts (3 children + the kept part), a row a minute.
    expect(split!.children).toHaveLength(3);
    for (const c of split!.children) {
      expect((c.end - c.start) / MIN).toBeLessThanOrEqual(TAIL_PIECE_ROWS);
      expect((c.end - c.start) / MIN).toBeGreaterThan(TAIL_PIECE_ROWS / 3);
    }
    // The children and the kept part tile the unread rest exactly.
    expect(split!.children[0]!.start).toBe(data.start);
    expect(split!.children.at(-1)!.end).toBe(split!.keepStart);
  });

  it('one split fills at most its share of the idle slots', () => {
    const data = sliceData({ end: T0 + 5_000 * MIN });
    expect(twoPages(data, 2)!.children).toHaveLength(2);
    expect(twoPages(data, 31)!.children.length).toBe(DEFAULT_PROCESS_SLICE_OPTIONS.maxSplitParts - 1);
  });

  it('too little left for two pieces: never split', () => {
    // 300 rows over 300 minutes: ~100 left after two pages.
    expect(twoPages(sliceData({ end: T0 + 300 * MIN }), 31)).toBeNull();
  });

  it('property: the tail rule never splits finer than TAIL_PIECE_ROWS, nor more parts than 1 + spare', () => {
    const base = sliceSplitRule({ filters: {} }, DEFAULT_PROCESS_SLICE_OPTIONS);
    fc.assert(
      fc.property(fc.integer({ min: -3, max: 1000 }), (spare) => {
        const rule = tailSplitRule(base, spare);
        if (spare < 1) return rule === null;
        return (
          rule !== null &&
          rule.rowsPerPart === TAIL_PIECE_ROWS &&
          rule.splitAbove === 2 * TAIL_PIECE_ROWS &&
          rule.maxParts === Math.min(base.maxParts, 1 + spare)
        );
      }),
    );
  });

  it('a per-user walk keeps its geometric cut of an empty past at the end too', () => {
    const rule = tailSplitRule(
      sliceSplitRule({ filters: { userId: 'u' } }, DEFAULT_PROCESS_SLICE_OPTIONS),
      8,
    );
    expect(rule?.geometricAbove).toBe(16);
  });
});

describe('tail split of deep and unsplit slices', () => {
  const o = DEFAULT_PROCESS_SLICE_OPTIONS;
  it('a quiet walk planned not to split (from 1970) splits at the end, at quadrupling depths, nesting TAIL_MAX_DEPTH deep', () => {
    // A partition's quiet walk: one slice from 0, its newest 200 rows one a minute.
    const data = sliceData({ start: 0, depth: UNSPLIT_DEPTH });
    const five = UNSPLIT_TAIL_MIN_PAGES;
    expect(pages(five, data)).toBeNull();
    // Not before UNSPLIT_TAIL_MIN_PAGES pages: a short quiet walk's pieces would be mostly empty pages.
    expect(pages(five - 1, data, 31)).toBeNull();
    const split = pages(five, data, 31);
    expect(split).not.toBeNull();
    // Geometric: each older piece (newest first) at least ~4x as wide as the one above it; the oldest reaches 0.
    const widths = split!.children.map((c) => c.end - c.start).reverse();
    for (let i = 1; i < widths.length - 1; i++) expect(widths[i]!).toBeGreaterThanOrEqual(3 * widths[i - 1]!);
    expect(split!.children[0]!.start).toBe(0);
    // Six parts at least, even with one idle slot: the older rows over several pieces, not peeled 100 at a time.
    expect(tailSplitRuleOf({ filters: {}, depth: UNSPLIT_DEPTH }, o, 1)?.maxParts).toBe(UNSPLIT_TAIL_PARTS);
    expect(pages(five, data, 1)!.children.length).toBe(UNSPLIT_TAIL_PARTS - 1);
    expect(tailSplitRuleOf({ filters: {}, depth: 0 }, o, 1)?.maxParts).toBe(2);
    // Deeper than the rule's own maxDepth: the oldest piece (from 1970) splits again each time slots are idle.
    expect(tailSplitRuleOf({ filters: {}, depth: UNSPLIT_DEPTH + o.maxDepth }, o, 4)).not.toBeNull();
    expect(tailSplitRuleOf({ filters: {}, depth: UNSPLIT_DEPTH + TAIL_MAX_DEPTH - 1 }, o, 4)).not.toBeNull();
    expect(tailSplitRuleOf({ filters: {}, depth: UNSPLIT_DEPTH + TAIL_MAX_DEPTH }, o, 4)).toBeNull();
  });

  it('a slice split TAIL_MAX_DEPTH deep (not planned unsplit) stays whole; maxDepth deep, it splits at the end only', () => {
    expect(tailSplitRuleOf({ filters: {}, depth: TAIL_MAX_DEPTH }, o, 4)).toBeNull();
    expect(twoPages(sliceData({ end: T0 + 2_000 * MIN, depth: TAIL_MAX_DEPTH }), 31)).toBeNull();
    expect(tailSplitRuleOf({ filters: {}, depth: TAIL_MAX_DEPTH - 1 }, o, 4)).not.toBeNull();
    expect(twoPages(sliceData({ end: T0 + 2_000 * MIN, depth: o.maxDepth }))).toBeNull();
    expect(twoPages(sliceData({ end: T0 + 2_000 * MIN, depth: o.maxDepth }), 31)).not.toBeNull();
  });
});

describe('tail split claims', () => {
  it('only a slice that would split claims idle slots', () => {
    let claims = 0;
    const claim = () => {
      claims += 1;
      return 4;
    };
    const observe = (data: SliceJobData) => {
      const walk = createSliceWalk({ ...DEFAULT_PROCESS_SLICE_OPTIONS, spareSlots: claim });
      walk.observe(page(data.end - 1, MIN), data);
      return walk.observe(page(data.end - 1 - 100 * MIN, MIN), data);
    };
    // ~100 rows left below the second page: nothing to split, nothing claimed.
    expect(observe(sliceData({ start: T0 + 10_000 * MIN - 300 * MIN }))).toBeNull();
    expect(claims).toBe(0);
    // ~1 800 left: it claims once and splits.
    expect(observe(sliceData({ end: T0 + 2_000 * MIN }))).not.toBeNull();
    expect(claims).toBe(1);
  });
});

describe('idleShare', () => {
  it('idle only when free at every sample of a full window, shared among the running slices', () => {
    expect(idleShare([5, 5, 5], 4, 1)).toBe(0); // window not full yet
    expect(idleShare([5, 0, 5, 5], 4, 1)).toBe(0); // a slot refilled within the window: slices were queued
    expect(idleShare([31, 31, 30, 31], 4, 1)).toBe(30);
    expect(idleShare([24, 24, 24, 24], 4, 8)).toBe(3);
    // Fewer idle slots than slices: one each (rounded down to 0, none split and the slots stayed idle).
    expect(idleShare([3, 3, 3, 3], 4, 8)).toBe(1);
    expect(idleShare([3, 3, 3, 3], 4, 0)).toBe(0);
  });

  it('claims: 15 slots idle among 17 slices: the first 15 to ask get one each, then none until the samples show more', () => {
    vi.useFakeTimers();
    try {
      const load = { concurrency: 32, running: 17 };
      const idle = startIdleSlots(() => load);
      expect(idle.claim()).toBe(0); // no full window yet
      vi.advanceTimersByTime(1000);
      const claims = Array.from({ length: 17 }, () => idle.claim());
      expect(claims.filter((c) => c === 1)).toHaveLength(15);
      expect(claims.slice(15)).toEqual([0, 0]);
      // The claimed slots filled (the pieces run): nothing idle; the samples agree.
      load.running = 32;
      vi.advanceTimersByTime(1000);
      expect(idle.claim()).toBe(0);
      // A slice ends and its slot stays free for a full window: one to claim again.
      load.running = 31;
      vi.advanceTimersByTime(1000);
      expect(idle.claim()).toBe(1);
      expect(idle.claim()).toBe(0);
      idle.stop();
    } finally {
      vi.useRealTimers();
    }
  });
});
