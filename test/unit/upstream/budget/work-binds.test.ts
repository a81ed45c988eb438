/** Properties of the work tests of the fetcher's hold: hold only as much as the work needs to fit in the key's tokens. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decideSend } from '../../../../src/upstream/budget/send-decision.js';
import { workBinds, workFill } from '../../../../src/upstream/budget/work-binds.js';

const counts = fc.record({
  waiting: fc.integer({ min: 0, max: 2000 }),
  coming: fc.integer({ min: 0, max: 100_000 }),
  tokensAhead: fc.integer({ min: 0, max: 2000 }),
});

describe('workBinds', () => {
  it('binds exactly when the calls waiting and coming exceed the tokens ahead', () => {
    fc.assert(
      fc.property(counts, (c) => {
        expect(workBinds(c)).toBe(c.waiting + c.coming > c.tokensAhead);
      }),
    );
  });

  it('is monotone: more work never unbinds, more tokens never bind', () => {
    fc.assert(
      fc.property(counts, fc.integer({ min: 0, max: 500 }), (c, extra) => {
        if (workBinds(c)) {
          expect(workBinds({ ...c, coming: c.coming + extra })).toBe(true);
          expect(workBinds({ ...c, waiting: c.waiting + extra })).toBe(true);
        } else expect(workBinds({ ...c, tokensAhead: c.tokensAhead + extra })).toBe(false);
      }),
    );
  });

  it('an unknown budget never binds; unknown work binds (the capacity test alone decides)', () => {
    fc.assert(
      fc.property(counts, (c) => {
        expect(workBinds({ ...c, tokensAhead: undefined })).toBe(false);
        expect(workBinds({ ...c, coming: undefined })).toBe(true);
      }),
    );
  });

  it('the demo on a 500 / 60 s key: 443 slices at 2 calls each do not bind a fresh key', () => {
    expect(workBinds({ waiting: 40, coming: 443 * 2, tokensAhead: 498 + 498 })).toBe(false);
    // The acceptance run's key (60 / 60 s): the same work binds.
    expect(workBinds({ waiting: 40, coming: 443 * 2, tokensAhead: 58 + 58 })).toBe(true);
  });
});

describe('workFill', () => {
  const fillInput = fc.record({
    waiting: fc.integer({ min: 0, max: 2000 }),
    coming: fc.integer({ min: 0, max: 100_000 }),
    tokensLeft: fc.integer({ min: 0, max: 1000 }),
    next: fc.integer({ min: 0, max: 1000 }),
    maxBatch: fc.integer({ min: 1, max: 50 }),
  });

  it('is in [1, maxBatch]: maxBatch when the work binds, its share per token left otherwise', () => {
    fc.assert(
      fc.property(fillInput, (i) => {
        const input = { ...i, tokensAhead: i.tokensLeft + i.next };
        const fill = workFill(input);
        expect(fill).toBeGreaterThanOrEqual(1);
        expect(fill).toBeLessThanOrEqual(i.maxBatch);
        const calls = i.waiting + i.coming;
        if (workBinds(input)) expect(fill).toBe(i.maxBatch);
        else
          expect(fill).toBe(Math.min(i.maxBatch, Math.max(1, Math.ceil(calls / Math.max(1, i.tokensLeft)))));
      }),
    );
  });

  it('unknown budget: 1 (latency); unknown work: maxBatch (the capacity test alone decides)', () => {
    fc.assert(
      fc.property(fillInput, (i) => {
        const input = { ...i, tokensAhead: i.tokensLeft + i.next };
        expect(workFill({ ...input, tokensAhead: undefined })).toBe(1);
        expect(workFill({ ...input, tokensLeft: undefined })).toBe(1);
        expect(workFill({ ...input, coming: undefined })).toBe(i.maxBatch);
      }),
    );
  });

  it('a small job (calls no more than the tokens left) goes at once', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 500 }), fc.integer({ min: 0, max: 500 }), (waiting, coming) => {
        const t = waiting + coming + 2;
        expect(workFill({ waiting, coming, tokensLeft: t, tokensAhead: 2 * t, maxBatch: 50 })).toBe(1);
      }),
    );
  });

  it('batches carrying at least their fill keep the known work within the tokens left', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 3000 }),
        fc.integer({ min: 1, max: 300 }),
        fc.array(fc.integer({ min: 0, max: 50 }), { minLength: 1, maxLength: 30 }),
        (calls, left, extras) => {
          // The work fits in this window's tokens at 50 per request, and does not bind over two windows.
          fc.pre(calls <= left * 50);
          let rest = calls;
          let tokens = left;
          let requests = 0;
          while (rest > 0) {
            const fill = workFill({
              waiting: 0,
              coming: rest,
              tokensLeft: tokens,
              tokensAhead: 10 ** 9,
              maxBatch: 50,
            });
            const size = Math.min(rest, 50, fill + (extras[requests % extras.length] ?? 0));
            rest -= size;
            tokens--;
            requests++;
          }
          expect(requests).toBeLessThanOrEqual(left);
        },
      ),
    );
  });
});

/**
 * A fetcher following `decideSend` with `minFill = workFill(...)` on a fixed amount of work that arrives in random
 * bursts, one decision per step, on a key with `tokens` requests (one window); a held step advances the clock by
 * the hold it asked for (at most 50 ms).
 */
function run(
  work: number,
  tokens: number,
  bursts: number[],
  maxHoldMs: number,
): { requests: number; holds: number; partialsBeforeHold: number } {
  let left = work; // calls not yet arrived
  let waiting = 0;
  let requests = 0;
  let holds = 0;
  let heldMs = 0;
  let partialsBeforeHold = 0;
  let i = 0;
  while (left > 0 || waiting > 0) {
    const burst = Math.min(left, bursts[i++ % bursts.length] ?? 1);
    left -= burst;
    waiting += burst;
    const t = Math.max(0, tokens - requests);
    const minFill = workFill({ waiting, coming: left, tokensLeft: t, tokensAhead: t, maxBatch: 50 });
    const d = decideSend({ waiting, heldMs, binds: true, minFill, maxBatch: 50, maxHoldMs });
    if (d.action === 'send') {
      if (d.size < minFill && heldMs < maxHoldMs) partialsBeforeHold++;
      waiting -= d.size;
      requests++;
      heldMs = 0;
    } else if (d.action === 'hold') {
      holds++;
      heldMs += Math.min(d.waitMs, 50);
    }
  }
  return { requests, holds, partialsBeforeHold };
}

describe('a fetcher deciding by the work', () => {
  it('never holds when the whole work fits in the tokens at one call per request, and spends at most them', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1000 }),
        fc.array(fc.integer({ min: 1, max: 60 }), { minLength: 1, maxLength: 20 }),
        (work, bursts) => {
          const r = run(work, work + 2, bursts, 3000);
          expect(r.holds).toBe(0);
          expect(r.requests).toBeLessThanOrEqual(work);
        },
      ),
    );
  });

  it('a batch below the fill the work asks for goes only after its hold', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 200, max: 5000 }),
        fc.integer({ min: 2, max: 150 }),
        fc.array(fc.integer({ min: 1, max: 60 }), { minLength: 1, maxLength: 20 }),
        (work, tokens, bursts) => {
          expect(run(work, tokens, bursts, 300).partialsBeforeHold).toBe(0);
        },
      ),
    );
  });

  it('a steady trickle below the tokens runs at latency; the same trickle on a binding key fills its POSTs', () => {
    const bursts = [3];
    const free = run(300, 1000, bursts, 3000);
    expect(free.holds).toBe(0);
    expect(free.requests).toBe(100);
    const bound = run(3000, 100, bursts, 3000);
    expect(bound.requests).toBe(60);
  });
});
