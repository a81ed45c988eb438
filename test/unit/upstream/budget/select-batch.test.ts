/** Properties of batch selection by priority, of identical-call grouping, of key derivation and of priorities. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { budgetKeys, hashApiKey } from '../../../../src/upstream/budget/budget-keys.js';
import { currentPriority, priorityRank, runWithPriority } from '../../../../src/upstream/budget/priority.js';
import { groupIdentical, selectBatch } from '../../../../src/upstream/budget/select-batch.js';
import { ConfigError } from '../../../../src/foundation/errors/index.js';

const queues = fc.array(fc.array(fc.integer({ min: 0, max: 1000 }), { maxLength: 80 }), {
  minLength: 4,
  maxLength: 4,
});

describe('selectBatch', () => {
  it('takes min(max, total) items, highest priority first, FIFO within a priority', () => {
    fc.assert(
      fc.property(queues, fc.integer({ min: 1, max: 50 }), (qs, max) => {
        const tagged = qs.map((q, p) => q.map((v, i) => ({ p, i, v })));
        const got = selectBatch(tagged, max);
        const total = qs.reduce((n, q) => n + q.length, 0);
        expect(got.length).toBe(Math.min(max, total));
        // No item of a lower priority is taken while one of a higher priority is left behind.
        const lowest = Math.max(-1, ...got.map((x) => x.p));
        for (let p = 0; p < lowest; p++) expect(got.filter((x) => x.p === p).length).toBe(qs[p]?.length);
        // Within a priority: a prefix of the queue, in order.
        for (let p = 0; p < 4; p++)
          expect(got.filter((x) => x.p === p).map((x) => x.i)).toEqual([
            ...Array(got.filter((x) => x.p === p).length).keys(),
          ]);
      }),
    );
  });
});

describe('groupIdentical', () => {
  it('maps every call to one slot holding an identical call; slots are distinct', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 9 }), { maxLength: 60 }), (calls) => {
        const { unique, slotOf } = groupIdentical(calls, String);
        expect(new Set(unique).size).toBe(unique.length);
        calls.forEach((c, i) => expect(unique[slotOf[i]!]).toBe(c));
        expect(unique.length).toBe(new Set(calls).size);
      }),
    );
  });
});

describe('budget keys and priorities', () => {
  it('key names never contain the API key, and differ per key', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 6 }), fc.string({ minLength: 6 }), (a, b) => {
        const keys = budgetKeys('p:', a);
        for (const k of [keys.base, keys.leader, ...keys.queues, keys.replies('x')])
          expect(k.includes(a)).toBe(false);
        if (a !== b) expect(hashApiKey(a)).not.toBe(hashApiKey(b));
      }),
    );
  });

  it('runWithPriority carries the priority across awaits; unknown names are refused', async () => {
    const seen = await runWithPriority('feed-tail', async () => {
      await new Promise((r) => setTimeout(r, 1));
      return currentPriority();
    });
    expect(seen).toBe('feed-tail');
    expect(currentPriority()).toBeUndefined();
    expect(priorityRank('rescan')).toBe(3);
    expect(() => priorityRank('urgent' as never)).toThrow(ConfigError);
  });
});
