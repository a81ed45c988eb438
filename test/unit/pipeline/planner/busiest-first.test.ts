/** The per-user walks' order: the users the feed's head page names most first, the rest as listed. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { busiestFirst } from '../../../../src/pipeline/planner/plan-context.js';

describe('busiestFirst', () => {
  it('is a permutation, by head-page rows descending, listing order among equals', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.string({ minLength: 1, maxLength: 3 }), { maxLength: 30 }),
        fc.array(fc.tuple(fc.string({ minLength: 1, maxLength: 3 }), fc.integer({ min: 1, max: 9 })), {
          maxLength: 30,
        }),
        (ids, named) => {
          const head = new Map(named);
          const out = busiestFirst(ids, head);
          expect([...out].sort()).toEqual([...ids].sort());
          const rows = (id: string): number => head.get(id) ?? 0;
          for (let i = 1; i < out.length; i++) {
            const [a, b] = [out[i - 1] as string, out[i] as string];
            expect(rows(a)).toBeGreaterThanOrEqual(rows(b));
            if (rows(a) === rows(b)) expect(ids.indexOf(a)).toBeLessThan(ids.indexOf(b));
          }
        },
      ),
    );
  });

  it('keeps the listing order without a head page', () => {
    expect(busiestFirst(['b', 'a'])).toEqual(['b', 'a']);
    expect(busiestFirst(['b', 'a'], new Map())).toEqual(['b', 'a']);
  });
});
