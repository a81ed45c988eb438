/**
 * A per-user walk while the key has requests to spare (issue 32): it splits from its first pages into pieces of half
 * a page (`spareKeySplitRule`, `SliceWalkOptions.keySpare`), only when the fetcher's last batch says the key does not
 * bind and the slices waiting would find a slot (`keyHasSpare`).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { keyHasSpare, type BudgetDemand } from '../../../../src/upstream/budget/concurrency-decision.js';
import { createSliceWalk } from '../../../../src/pipeline/slice/slice-walk.js';
import {
  SPARE_KEY_GEOMETRIC_PARTS,
  SPARE_KEY_PIECE_ROWS,
  spareKeySplitRule,
  TAIL_MAX_DEPTH,
} from '../../../../src/pipeline/slice/slice-split-rule.js';
import { DEFAULT_PROCESS_SLICE_OPTIONS } from '../../../../src/pipeline/slice/slice-contract.js';
import { UNSPLIT_DEPTH } from '../../../../src/pipeline/planner/plan-partition.js';
import type { SliceJobData } from '../../../../src/pipeline/planner/index.js';

const MIN = 60_000;
const END = Date.UTC(2026, 10, 1);

function walkData(over: Partial<SliceJobData> = {}): SliceJobData {
  return {
    runId: 'r',
    sliceId: 's',
    resource: 'transactions',
    filters: { userId: 'u' },
    start: END - 1_000 * MIN,
    end: END,
    replay: false,
    depth: 0,
    ...over,
  };
}

/** A full page of 100 rows, one a minute, newest at `top`. */
function page(top: number): { items: Record<string, unknown>[]; cursor: string } {
  const items = Array.from({ length: 100 }, (_, i) => ({
    _id: `t${top - i * MIN}`,
    createdAt: new Date(top - i * MIN).toISOString(),
  }));
  return { items, cursor: 'next' };
}

/** Observes `n` full pages from the slice's top with the key spare or not; returns every observation. */
function observe(n: number, data: SliceJobData, spare: boolean) {
  const walk = createSliceWalk({ ...DEFAULT_PROCESS_SLICE_OPTIONS, keySpare: () => spare });
  return Array.from({ length: n }, (_, i) => walk.observe(page(data.end - 1 - i * 100 * MIN), data));
}

const demand = (over: Partial<BudgetDemand>): BudgetDemand => ({
  at: 0,
  binds: false,
  calls: 10,
  maxBatch: 50,
  tail: false,
  queued: 0,
  ...over,
});

describe('keyHasSpare', () => {
  it('spare only when the key does not bind and the slices queued fit the room left', () => {
    expect(keyHasSpare(undefined, 100)).toBe(false);
    expect(keyHasSpare(demand({}), 0)).toBe(true);
    expect(keyHasSpare(demand({ binds: true }), 100)).toBe(false);
    expect(keyHasSpare(demand({ queued: 100 }), 100)).toBe(true);
    expect(keyHasSpare(demand({ queued: 101 }), 100)).toBe(false);
    expect(keyHasSpare(demand({ queued: undefined }), 100)).toBe(false);
    // A worker over its most slots (room < 0) counts as no room.
    expect(keyHasSpare(demand({ queued: 1 }), -5)).toBe(false);
  });

  it('property: never spare while the key binds; growing the room never takes spare away', () => {
    fc.assert(
      fc.property(fc.boolean(), fc.nat(2000), fc.integer({ min: -100, max: 2000 }), (binds, queued, room) => {
        const d = demand({ binds, queued });
        if (binds) expect(keyHasSpare(d, room)).toBe(false);
        if (keyHasSpare(d, room)) expect(keyHasSpare(d, room + 1)).toBe(true);
      }),
    );
  });
});

describe('spareKeySplitRule', () => {
  const o = DEFAULT_PROCESS_SLICE_OPTIONS;
  it('per-user walks only, not a quiet walk, nesting as tail splits do', () => {
    expect(spareKeySplitRule({ filters: {}, depth: 0 }, o)).toBeNull();
    expect(spareKeySplitRule({ filters: { countryId: 'c' }, depth: 0 }, o)).toBeNull();
    expect(spareKeySplitRule({ filters: { userId: 'u' }, depth: UNSPLIT_DEPTH }, o)).toBeNull();
    expect(spareKeySplitRule({ filters: { userId: 'u' }, depth: TAIL_MAX_DEPTH - 1 }, o)).not.toBeNull();
    expect(spareKeySplitRule({ filters: { userId: 'u' }, depth: TAIL_MAX_DEPTH }, o)).toBeNull();
  });
});

describe('a per-user walk while the key has requests to spare', () => {
  it('splits after its second page into half-page pieces; the same walk on a binding key stays whole', () => {
    // 1 000 rows, one a minute: 800 left after two pages.
    const data = walkData();
    expect(observe(2, data, false)).toEqual([null, null]);
    const [first, second] = observe(2, data, true);
    expect(first).toBeNull(); // a planned walk proves itself long over two pages first
    expect(second).not.toBeNull();
    const pieces = [...second!.children, { start: second!.keepStart, end: END - 200 * MIN }];
    expect(pieces).toHaveLength(DEFAULT_PROCESS_SLICE_OPTIONS.maxSplitParts);
    // 800 rows over 8 parts: 100 a piece at most (the cap), never fewer than half a page.
    for (const p of pieces) expect((p.end - p.start) / MIN).toBeGreaterThanOrEqual(SPARE_KEY_PIECE_ROWS);
    // The pieces tile the unread rest exactly.
    expect(second!.children[0]!.start).toBe(data.start);
    for (let i = 1; i < second!.children.length; i++)
      expect(second!.children[i]!.start).toBe(second!.children[i - 1]!.end);
    expect(second!.children.at(-1)!.end).toBe(second!.keepStart);
  });

  it('a piece of a split splits from its first page; two pages or fewer left: never', () => {
    expect(observe(1, walkData({ depth: 1 }), true)[0]).not.toBeNull();
    // 280 rows: ~180 left after the first page, under two pages.
    expect(observe(1, walkData({ depth: 1, start: END - 280 * MIN }), true)[0]).toBeNull();
  });

  it('a walk back to 1970 cuts its past geometrically, in at most SPARE_KEY_GEOMETRIC_PARTS parts', () => {
    const split = observe(2, walkData({ start: 0 }), true)[1];
    expect(split).not.toBeNull();
    expect(split!.children).toHaveLength(SPARE_KEY_GEOMETRIC_PARTS - 1);
    expect(split!.children[0]!.start).toBe(0);
    const widths = split!.children.map((c) => c.end - c.start).reverse();
    for (let i = 1; i < widths.length - 1; i++) expect(widths[i]!).toBeGreaterThanOrEqual(3 * widths[i - 1]!);
  });

  it('a feed slice (no userId) never splits on a spare key', () => {
    expect(observe(2, walkData({ filters: {} }), true)).toEqual([null, null]);
  });
});
