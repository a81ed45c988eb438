/** Properties of the hold-or-send decision. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decideSend } from '../../../../src/upstream/budget/send-decision.js';

const input = fc.record({
  waiting: fc.integer({ min: 0, max: 500 }),
  heldMs: fc.integer({ min: 0, max: 5000 }),
  binds: fc.boolean(),
  maxBatch: fc.integer({ min: 1, max: 50 }),
  maxHoldMs: fc.integer({ min: 0, max: 3000 }),
});

describe('decideSend', () => {
  it('never sends more than maxBatch nor more than waits; idle only when nothing waits', () => {
    fc.assert(
      fc.property(input, (i) => {
        const d = decideSend(i);
        if (i.waiting === 0) expect(d).toEqual({ action: 'idle' });
        if (d.action === 'send') {
          expect(d.size).toBe(Math.min(i.waiting, i.maxBatch));
          expect(d.size).toBeGreaterThan(0);
        }
      }),
    );
  });

  it('while the budget binds, a partial batch goes only after the hold', () => {
    fc.assert(
      fc.property(input, (i) => {
        const d = decideSend({ ...i, binds: true });
        if (d.action === 'send' && d.size < i.maxBatch) expect(i.heldMs).toBeGreaterThanOrEqual(i.maxHoldMs);
        if (d.action === 'hold') {
          expect(i.waiting).toBeLessThan(i.maxBatch);
          expect(d.waitMs).toBe(i.maxHoldMs - i.heldMs);
          expect(d.waitMs).toBeGreaterThan(0);
        }
      }),
    );
  });

  it('when the budget does not bind, latency wins: whatever waits goes at once', () => {
    fc.assert(
      fc.property(input, (i) => {
        const d = decideSend({ ...i, binds: false });
        expect(d.action).toBe(i.waiting === 0 ? 'idle' : 'send');
      }),
    );
  });

  it('a full batch never waits', () => {
    fc.assert(
      fc.property(input, (i) => {
        const d = decideSend({ ...i, waiting: i.maxBatch + (i.waiting % 7) });
        expect(d).toEqual({ action: 'send', size: i.maxBatch });
      }),
    );
  });
});

describe('decideSend with tail calls waiting', () => {
  it('never holds a tail call for a fill, even while the budget binds', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 49 }), fc.integer({ min: 0, max: 999 }), (waiting, heldMs) => {
        const d = decideSend({ waiting, urgent: 1, heldMs, binds: true, maxBatch: 50, maxHoldMs: 1000 });
        expect(d).toEqual({ action: 'send', size: waiting });
        expect(
          decideSend({ waiting, urgent: 0, heldMs, binds: true, maxBatch: 50, maxHoldMs: 1000 }).action,
        ).toBe('hold');
      }),
    );
  });
});

describe('decideSend with the fill the work asks for', () => {
  it('while the budget binds, sends without a hold exactly when min(minFill, maxBatch) calls wait', () => {
    fc.assert(
      fc.property(input, fc.integer({ min: -5, max: 80 }), (i, minFill) => {
        const d = decideSend({ ...i, binds: true, minFill, heldMs: 0, maxHoldMs: Math.max(1, i.maxHoldMs) });
        const fill = Math.min(i.maxBatch, Math.max(1, minFill));
        if (i.waiting === 0) expect(d.action).toBe('idle');
        else expect(d.action).toBe(i.waiting >= fill ? 'send' : 'hold');
      }),
    );
  });
});

describe('decideSend gathering calls right behind a batch', () => {
  it('a batch with its fill but not full waits gatherMs while the budget binds; tails and full batches never', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 49 }),
        fc.integer({ min: 0, max: 400 }),
        fc.integer({ min: 1, max: 300 }),
        (waiting, heldMs, gatherMs) => {
          const base = { waiting, heldMs, binds: true, minFill: 1, maxBatch: 50, maxHoldMs: 3000, gatherMs };
          const d = decideSend(base);
          if (heldMs < gatherMs) expect(d).toEqual({ action: 'hold', waitMs: gatherMs - heldMs });
          else expect(d).toEqual({ action: 'send', size: waiting });
          expect(decideSend({ ...base, urgent: 1 })).toEqual({ action: 'send', size: waiting });
          expect(decideSend({ ...base, waiting: 50 })).toEqual({ action: 'send', size: 50 });
          expect(decideSend({ ...base, binds: false })).toEqual({ action: 'send', size: waiting });
        },
      ),
    );
  });
});

describe('decideSend when no more calls can come', () => {
  it('sends what waits at once instead of holding it for a fill that cannot come', () => {
    fc.assert(
      fc.property(input, (i) => {
        const d = decideSend({ ...i, binds: true, saturated: true });
        expect(d).toEqual(
          i.waiting === 0 ? { action: 'idle' } : { action: 'send', size: Math.min(i.waiting, i.maxBatch) },
        );
      }),
    );
  });
});
