/** Properties of the partition proof (issue 23): proven types are read once by the partition, the rest per user. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { proveCoverage, type ProofRow } from '../../../../src/pipeline/planner/prove-coverage.js';

const TYPES = ['trading', 'wage', 'donation', 'openCase'] as const;

/** A row of a model world: its type, its buyer and seller, and the partition keys a filter matches it under. */
interface ModelRow extends ProofRow {
  buyer: number;
  seller: number | undefined;
  keys: number[];
}

const world = fc
  .array(
    fc.record({
      type: fc.constantFrom(...TYPES),
      buyer: fc.integer({ min: 0, max: 9 }),
      seller: fc.option(fc.integer({ min: 0, max: 9 }), { nil: undefined }),
      // Mostly one key; sometimes none (outside the partition) or two (the filter matches two fields).
      keys: fc.oneof(
        { weight: 8, arbitrary: fc.integer({ min: 0, max: 5 }).map((k) => [k]) },
        { weight: 1, arbitrary: fc.constant([] as number[]) },
        {
          weight: 1,
          arbitrary: fc
            .tuple(fc.integer({ min: 0, max: 5 }), fc.integer({ min: 0, max: 5 }))
            .filter(([a, b]) => a !== b),
        },
      ),
    }),
    { maxLength: 120 },
  )
  .map((rows) => rows.map((r, i): ModelRow => ({ ...r, id: `t${i}` })));

/** The partition's walks: one per key, each returning the rows filed under that key. */
function walksOf(rows: ModelRow[]): ModelRow[][] {
  const byKey = new Map<number, ModelRow[]>();
  for (const r of rows) for (const k of r.keys) byKey.set(k, [...(byKey.get(k) ?? []), r]);
  return [...byKey.values()];
}

describe('proveCoverage', () => {
  it('counts every feed row once as covered, uncovered or repeated, in total and per type', () => {
    fc.assert(
      fc.property(world, (rows) => {
        const p = proveCoverage(rows, walksOf(rows));
        expect(p.rows).toBe(rows.length);
        expect(p.covered + p.uncovered + p.repeated).toBe(rows.length);
        expect(p.covered).toBe(rows.filter((r) => r.keys.length === 1).length);
        expect(p.uncovered).toBe(rows.filter((r) => r.keys.length === 0).length);
        const sum = Object.values(p.byType).reduce((n, c) => n + c.covered + c.uncovered + c.repeated, 0);
        expect(sum).toBe(rows.length);
        expect(p.foreign).toBe(0);
      }),
    );
  });

  it('a type is proven exactly when every row of it lies under one key', () => {
    fc.assert(
      fc.property(world, (rows) => {
        const p = proveCoverage(rows, walksOf(rows), TYPES);
        for (const t of TYPES) {
          const ofType = rows.filter((r) => r.type === t);
          const proven = ofType.length > 0 && ofType.every((r) => r.keys.length === 1);
          expect(p.provenTypes.includes(t)).toBe(proven);
          expect(p.unprovenTypes.includes(t)).toBe(!proven);
        }
        expect(p.complete).toBe(p.unprovenTypes.length === 0);
      }),
    );
  });

  it('partition walks on the proven types plus per-user walks on the rest read every row, the partition each once', () => {
    fc.assert(
      fc.property(world, (rows) => {
        const p = proveCoverage(rows, walksOf(rows), TYPES);
        const proven = new Set(p.provenTypes);
        const reads = new Map<string, number>();
        for (const walk of walksOf(rows))
          for (const r of walk.filter((x) => proven.has(x.type))) reads.set(r.id, (reads.get(r.id) ?? 0) + 1);
        for (const n of reads.values()) expect(n).toBe(1);
        const unproven = new Set(p.unprovenTypes);
        for (let user = 0; user < 10; user++)
          for (const r of rows)
            if ((r.buyer === user || r.seller === user) && unproven.has(r.type)) reads.set(r.id, 1);
        expect([...reads.keys()].sort()).toEqual(rows.map((r) => r.id).sort());
      }),
    );
  });

  it('a walk row the feed lacks proves nothing (the ranges differ)', () => {
    fc.assert(
      fc.property(world, (rows) => {
        const walks = [...walksOf(rows), [{ id: 'outside', type: 'trading' }]];
        const p = proveCoverage(rows, walks);
        expect(p.foreign).toBe(1);
        expect(p.provenTypes).toEqual([]);
        expect(p.complete).toBe(false);
        expect(p.unprovenTypes).toContain('trading');
      }),
    );
  });

  it('a known type with no row in the window is not proven; a walk repeating a row within itself counts once', () => {
    const rows = [
      { id: 'a', type: 'trading' },
      { id: 'b', type: 'trading' },
    ];
    const p = proveCoverage(rows, [[rows[0]!, rows[0]!], [rows[1]!]], ['trading', 'wage']);
    expect(p.provenTypes).toEqual(['trading']);
    expect(p.unprovenTypes).toEqual(['wage']);
    expect(p.complete).toBe(false);
    expect(p.covered).toBe(2);
  });
});
