/** Properties of the work test of the fetcher's hold: hold only while the work needs more requests than the key grants. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decideSend } from '../../../src/budget/send-decision.js';
import { workBinds } from '../../../src/budget/work-binds.js';

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

/**
 * A fetcher following `decideSend` with `binds = workBinds(...)` on a fixed amount of work that arrives in random
 * bursts, one decision per step; a held step advances the clock by the hold it asked for.
 */
function run(
  work: number,
  tokens: number,
  bursts: number[],
  maxHoldMs: number,
): { requests: number; holds: number; partialAfterHold: boolean[] } {
  let left = work; // calls not yet arrived
  let waiting = 0;
  let requests = 0;
  let holds = 0;
  let heldMs = 0;
  const partialAfterHold: boolean[] = [];
  let i = 0;
  while (left > 0 || waiting > 0) {
    const burst = Math.min(left, bursts[i++ % bursts.length] ?? 1);
    left -= burst;
    waiting += burst;
    const binds = workBinds({ waiting, coming: left, tokensAhead: tokens - requests });
    const d = decideSend({ waiting, heldMs, binds, maxBatch: 50, maxHoldMs });
    if (d.action === 'send') {
      if (d.size < 50) partialAfterHold.push(!binds || heldMs >= maxHoldMs);
      waiting -= d.size;
      requests++;
      heldMs = 0;
    } else if (d.action === 'hold') {
      holds++;
      heldMs += Math.min(d.waitMs, 50);
    }
  }
  return { requests, holds, partialAfterHold };
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

  it('when the work exceeds the tokens, a partial batch goes only after its hold or once the rest fits', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 200, max: 5000 }),
        fc.integer({ min: 2, max: 150 }),
        fc.array(fc.integer({ min: 1, max: 60 }), { minLength: 1, maxLength: 20 }),
        (work, tokens, bursts) => {
          fc.pre(work > tokens);
          const r = run(work, tokens, bursts, 300);
          for (const ok of r.partialAfterHold) expect(ok).toBe(true);
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
