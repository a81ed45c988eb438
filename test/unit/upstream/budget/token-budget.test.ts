/** Properties of the pure token accounting (injected clock: every function takes `now`). */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  budgetBinds,
  budgetBindsAhead,
  completeRequest,
  initialTokenBudget,
  startRequest,
  tailsOnly,
  tokensAhead,
  tokensLeft,
  waitBeforeRequest,
} from '../../../../src/upstream/budget/token-budget.js';
import type { TokenBudgetState } from '../../../../src/upstream/budget/token-budget.js';

const o = { reserve: 2, resetMarginMs: 250 };

/**
 * A fixed-window server like the simulator's (counts every request, 429 above the limit) and a client that only
 * starts a request when `waitBeforeRequest` says 0; requests answer in random order after random delays.
 */
function simulate(
  limit: number,
  windowMs: number,
  ops: { startAt: number; latency: number }[],
): { status429: number; started: number } {
  let windowStart: number | undefined;
  let count = 0;
  let s: TokenBudgetState = initialTokenBudget();
  const inFlight: { answerAt: number; status: number; remaining: number; reset: number }[] = [];
  let status429 = 0;
  let started = 0;
  let t = 0;
  for (const op of ops) {
    t += op.startAt;
    // Answers due by now come back first, oldest first.
    inFlight.sort((a, b) => a.answerAt - b.answerAt);
    while (inFlight.length > 0 && (inFlight[0]?.answerAt ?? Infinity) <= t) {
      const a = inFlight.shift()!;
      s = completeRequest(
        s,
        { status: a.status, limit, remaining: a.remaining, resetSeconds: a.reset, durationMs: 10 },
        a.answerAt,
        o,
      );
    }
    if (waitBeforeRequest(s, t, o).waitMs > 0) continue;
    s = startRequest(s, t, o);
    started++;
    // The server counts the request when it arrives (immediately here) and answers after `latency`.
    if (windowStart === undefined || t >= windowStart + windowMs) {
      windowStart = t;
      count = 0;
    }
    count++;
    const allowed = count <= limit;
    if (!allowed) status429++;
    inFlight.push({
      answerAt: t + op.latency,
      status: allowed ? 200 : 429,
      remaining: Math.max(0, limit - count),
      reset: Math.max(1, Math.ceil((windowStart + windowMs - (t + op.latency)) / 1000)),
    });
  }
  return { status429, started };
}

describe('token budget', () => {
  it('a client that waits when told never draws a 429 from a fixed-window server', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 3, max: 40 }),
        fc.integer({ min: 1, max: 5 }).map((s) => s * 1000),
        fc.array(
          fc.record({ startAt: fc.integer({ min: 0, max: 300 }), latency: fc.integer({ min: 1, max: 900 }) }),
          {
            minLength: 1,
            maxLength: 400,
          },
        ),
        (limit, windowMs, ops) => {
          expect(simulate(limit, windowMs, ops).status429).toBe(0);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('unknown budget: one request at a time until the first answer', () => {
    let s = initialTokenBudget();
    expect(waitBeforeRequest(s, 0, o).waitMs).toBe(0);
    s = startRequest(s, 0, o);
    const w = waitBeforeRequest(s, 0, o);
    expect(w.waitMs).toBeGreaterThan(0);
    expect(w.untilAnswer).toBe(true);
    s = completeRequest(s, { status: 200, limit: 500, remaining: 499, resetSeconds: 60 }, 5, o);
    expect(waitBeforeRequest(s, 5, o).waitMs).toBe(0);
  });

  it('never starts below the reserve; the window reset (plus margin) gives the limit back less what is in flight', () => {
    fc.assert(
      fc.property(fc.integer({ min: 3, max: 100 }), fc.integer({ min: 1, max: 60 }), (limit, resetS) => {
        let s = completeRequest(
          startRequest(initialTokenBudget(), 0, o),
          { status: 200, limit, remaining: limit - 1, resetSeconds: resetS },
          0,
          o,
        );
        let n = 0;
        while (waitBeforeRequest(s, 0, o).waitMs === 0) {
          s = startRequest(s, 0, o);
          n++;
        }
        expect(n).toBe(limit - 1 - o.reserve);
        expect(waitBeforeRequest(s, 0, o).waitMs).toBe(resetS * 1000 + o.resetMarginMs);
        const after = resetS * 1000 + o.resetMarginMs;
        expect(waitBeforeRequest(s, after, o).waitMs).toBe(0);
        expect(startRequest(s, after, o).remaining).toBe(limit - n - 1);
      }),
    );
  });

  it('a 429 sets one pause from Retry-After that every request waits out', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 120_000 }),
        fc.integer({ min: 0, max: 10_000 }),
        (retryAfterMs, t) => {
          let s = startRequest(initialTokenBudget(), t, o);
          s = completeRequest(
            s,
            { status: 429, limit: 10, remaining: 0, resetSeconds: 5, retryAfterMs },
            t,
            o,
          );
          expect(s.pauseUntil).toBe(t + retryAfterMs + o.resetMarginMs);
          if (retryAfterMs + o.resetMarginMs > 0)
            expect(waitBeforeRequest(s, t, o).waitMs).toBe(retryAfterMs + o.resetMarginMs);
          expect(budgetBinds(s, t, o, 8)).toBe(true);
        },
      ),
    );
  });

  it('binds exactly when full speed would spend the tokens left before the reset', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 3, max: 1000 }),
        fc.integer({ min: 1, max: 120 }),
        fc.integer({ min: 1, max: 16 }),
        fc.integer({ min: 50, max: 3000 }),
        (remaining, resetS, maxInFlight, latencyMs) => {
          const base = { ...initialTokenBudget(latencyMs), answered: true };
          const s: TokenBudgetState = { ...base, limit: 1000, remaining, resetAt: resetS * 1000 };
          const fullSpeed = (maxInFlight * (resetS * 1000 + o.resetMarginMs)) / latencyMs;
          expect(budgetBinds(s, 0, o, maxInFlight)).toBe(remaining - o.reserve < fullSpeed);
          expect(budgetBinds({ ...s, remaining: undefined }, 0, o, maxInFlight)).toBe(false);
        },
      ),
    );
  });

  it('between a reset and the next answer, the new window binds as if it lasted the longest reset announced', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 3, max: 1000 }),
        fc.array(fc.integer({ min: 1, max: 120 }), { minLength: 1, maxLength: 5 }),
        fc.integer({ min: 1, max: 16 }),
        fc.integer({ min: 50, max: 3000 }),
        fc.integer({ min: 0, max: 600_000 }),
        (limit, resets, maxInFlight, latencyMs, after) => {
          let s: TokenBudgetState = { ...initialTokenBudget(latencyMs), answered: true };
          let t = 0;
          for (const resetS of resets) {
            s = startRequest(s, t, o);
            s = completeRequest(s, { status: 200, limit, remaining: limit - 1, resetSeconds: resetS }, t, o);
            t += 1;
          }
          const windowMs = Math.max(...resets) * 1000;
          expect(s.windowMs).toBe(windowMs);
          // Past the last reset (no answer since): the limit is back and the window length is the estimate.
          const now = (s.resetAt ?? 0) + o.resetMarginMs + after;
          const fullSpeed = (maxInFlight * windowMs) / Math.max(1, s.latencyMs);
          expect(budgetBinds(s, now, o, maxInFlight)).toBe(limit - o.reserve < fullSpeed);
          // With no window length known, a passed window does not bind (as an unknown budget).
          expect(budgetBinds({ ...s, windowMs: undefined }, now, o, maxInFlight)).toBe(
            limit - o.reserve <= 0,
          );
        },
      ),
    );
  });

  it('over a window ahead: binds whenever budgetBinds does, and at a window end counts the next window in', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 3, max: 1000 }),
        fc.integer({ min: 0, max: 1000 }),
        fc.integer({ min: 1, max: 120 }),
        fc.integer({ min: 0, max: 120_000 }),
        fc.integer({ min: 1, max: 16 }),
        fc.integer({ min: 50, max: 3000 }),
        (limit, remainingRaw, windowS, leftMs, maxInFlight, latencyMs) => {
          const remaining = Math.min(limit, remainingRaw);
          const windowMs = windowS * 1000;
          const base = { ...initialTokenBudget(latencyMs), answered: true };
          const s: TokenBudgetState = {
            ...base,
            limit,
            remaining,
            resetAt: Math.min(leftMs, windowMs),
            windowMs,
          };
          const ahead = budgetBindsAhead(s, 0, o, maxInFlight);
          if (budgetBinds(s, 0, o, maxInFlight)) expect(ahead).toBe(true);
          else {
            const available = Math.max(0, remaining - o.reserve) + (limit - o.reserve);
            expect(ahead).toBe(available < (maxInFlight * windowMs) / latencyMs);
          }
          expect(budgetBindsAhead({ ...s, remaining: undefined }, 0, o, maxInFlight)).toBe(false);
        },
      ),
    );
  });

  it('the end of a window with tokens left binds ahead when the next window would bind (acceptance run figures)', () => {
    // Limit 60 / 60 s, 2.5 s a request, 16 in flight: 30 tokens left 3 s before the reset.
    const s: TokenBudgetState = {
      ...initialTokenBudget(2500),
      answered: true,
      limit: 60,
      remaining: 30,
      resetAt: 3000,
      windowMs: 60_000,
    };
    expect(budgetBinds(s, 0, o, 16)).toBe(false);
    expect(budgetBindsAhead(s, 0, o, 16)).toBe(true);
    // A key with room to spare over a whole window (500 / 60 s at 2.5 s a request) does not.
    expect(budgetBindsAhead({ ...s, limit: 500, remaining: 400 }, 0, o, 16)).toBe(false);
  });

  it('a later reset is a new window: the server count is trusted again', () => {
    let s = startRequest(initialTokenBudget(), 0, o);
    s = completeRequest(s, { status: 200, limit: 10, remaining: 0, resetSeconds: 1 }, 0, o);
    s = startRequest({ ...s, pauseUntil: 0, remaining: 5 }, 0, o);
    s = completeRequest(s, { status: 200, limit: 10, remaining: 9, resetSeconds: 60 }, 10, o);
    expect(s.remaining).toBe(9);
    expect(s.resetAt).toBe(60_010);
  });
});

describe('tailsOnly', () => {
  const state = (remaining: number, resetInMs: number): TokenBudgetState => ({
    ...initialTokenBudget(1000),
    answered: true,
    limit: 100,
    remaining,
    resetAt: 1_000_000 + resetInMs,
  });

  it('keeps the last tailReserve requests above the reserve for tails, unless the reset is near', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 100 }),
        fc.integer({ min: 0, max: 60_000 }),
        fc.integer({ min: 0, max: 20 }),
        (remaining, resetInMs, tailReserve) => {
          const only = tailsOnly(state(remaining, resetInMs), 1_000_000, o, tailReserve);
          const near = resetInMs + o.resetMarginMs < 2 * 1000;
          expect(only).toBe(tailReserve > 0 && !near && remaining - o.reserve <= tailReserve);
        },
      ),
    );
  });

  it('never holds back an unknown budget', () => {
    expect(tailsOnly(initialTokenBudget(), 0, o, 5)).toBe(false);
  });
});

describe('tokensAhead and tokensLeft', () => {
  it('is the tokens left above the reserve plus the next window, the next window alone during a pause', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1000 }),
        fc.integer({ min: -5, max: 1000 }),
        fc.integer({ min: 1000, max: 60_000 }),
        (limit, remainingRaw, resetAt) => {
          const remaining = Math.min(limit, remainingRaw);
          const s: TokenBudgetState = { ...initialTokenBudget(), answered: true, limit, remaining, resetAt };
          const next = Math.max(0, limit - o.reserve);
          expect(tokensAhead(s, 0, o)).toBe(Math.max(0, remaining - o.reserve) + next);
          expect(tokensLeft(s, 0, o)).toBe(Math.max(0, remaining - o.reserve));
          expect(tokensLeft({ ...s, pauseUntil: 500 }, 0, o)).toBe(0);
          expect(tokensLeft({ ...s, remaining: undefined }, 0, o)).toBeUndefined();
          expect(tokensAhead({ ...s, pauseUntil: 500 }, 0, o)).toBe(next);
          expect(tokensAhead({ ...s, limit: undefined }, 0, o)).toBeUndefined();
          expect(tokensAhead({ ...s, remaining: undefined }, 0, o)).toBeUndefined();
        },
      ),
    );
  });
});
