/**
 * Pure token accounting of one API key's request budget, driven by the upstream's `ratelimit-*` headers (no
 * hard-coded limit): each answer says how many requests remain and when the window resets; requests in flight are
 * assumed not yet counted; a 429 sets one pause. The shared budget's fetcher keeps one state per key.
 */

export interface TokenBudgetState {
  /** `ratelimit-limit` of the last answer. */
  limit: number | undefined;
  /** Requests we may still start in this window (our estimate, never above the server's count). */
  remaining: number | undefined;
  /** When the window resets (epoch ms), from `ratelimit-reset`. */
  resetAt: number | undefined;
  /** No request before this (epoch ms): a 429's `Retry-After`. */
  pauseUntil: number;
  /** Requests started and not answered. */
  inFlight: number;
  /** An answer came back (with or without headers). */
  answered: boolean;
  /** Moving average of request durations (ms), for the binding estimate. */
  latencyMs: number;
  /**
   * The window's length as far as answers told: the longest `ratelimit-reset` seen, ms. Once a window has passed
   * and no answer has told the next reset yet, the new window is taken to last this long (see `budgetBinds`).
   */
  windowMs?: number | undefined;
}

export interface TokenBudgetOptions {
  /** Requests kept in reserve below the server's remaining count. @default 2 */
  reserve: number;
  /** Extra wait after the announced reset (clock skew, rounding). @default 250 */
  resetMarginMs: number;
}

export const DEFAULT_TOKEN_BUDGET_OPTIONS: Readonly<TokenBudgetOptions> = { reserve: 2, resetMarginMs: 250 };

/** What one answer said. */
export interface BudgetObservation {
  status: number | undefined;
  limit?: number | undefined;
  remaining?: number | undefined;
  /** `ratelimit-reset`, seconds. */
  resetSeconds?: number | undefined;
  retryAfterMs?: number | undefined;
  /** How long the request took. */
  durationMs?: number | undefined;
}

/** A fresh budget: nothing known, one request at a time until an answer says more. */
export function initialTokenBudget(latencyMs = 1000): TokenBudgetState {
  return {
    limit: undefined,
    remaining: undefined,
    resetAt: undefined,
    pauseUntil: 0,
    inFlight: 0,
    answered: false,
    latencyMs,
  };
}

/** The state as of `now`: a window past its reset (plus margin) gives the full limit back, less what is in flight. */
export function rollWindow(s: TokenBudgetState, now: number, o: TokenBudgetOptions): TokenBudgetState {
  if (s.resetAt === undefined || now < s.resetAt + o.resetMarginMs) return s;
  return {
    ...s,
    remaining: s.limit === undefined ? undefined : Math.max(0, s.limit - s.inFlight),
    resetAt: undefined,
  };
}

/**
 * How long to wait before the next request may start: 0 = now; `untilAnswer` = wait for a request in flight to
 * answer (the budget is still unknown), with `waitMs` as a fallback poll.
 */
export function waitBeforeRequest(
  state: TokenBudgetState,
  now: number,
  o: TokenBudgetOptions,
): { waitMs: number; untilAnswer: boolean } {
  if (state.pauseUntil > now) return { waitMs: state.pauseUntil - now, untilAnswer: false };
  const s = rollWindow(state, now, o);
  if (s.remaining === undefined) {
    // Unknown budget: one request at a time until an answer tells; an upstream without headers is not paced.
    if (s.inFlight === 0 || s.answered) return { waitMs: 0, untilAnswer: false };
    return { waitMs: 1000, untilAnswer: true };
  }
  if (s.remaining > o.reserve) return { waitMs: 0, untilAnswer: false };
  const waitMs = s.resetAt !== undefined ? Math.max(1, s.resetAt + o.resetMarginMs - now) : 1000;
  return { waitMs, untilAnswer: true };
}

/** Counts one request as started (call only when {@link waitBeforeRequest} said 0). */
export function startRequest(state: TokenBudgetState, now: number, o: TokenBudgetOptions): TokenBudgetState {
  const s = rollWindow(state, now, o);
  return {
    ...s,
    remaining: s.remaining === undefined ? undefined : s.remaining - 1,
    inFlight: s.inFlight + 1,
  };
}

/** Folds one answer (or a failure without answer: `status` undefined) into the state. */
export function completeRequest(
  state: TokenBudgetState,
  obs: BudgetObservation,
  now: number,
  o: TokenBudgetOptions,
): TokenBudgetState {
  const s: TokenBudgetState = { ...rollWindow(state, now, o), inFlight: Math.max(0, state.inFlight - 1) };
  if (obs.durationMs !== undefined && obs.status !== undefined)
    s.latencyMs = Math.round(s.latencyMs * 0.8 + obs.durationMs * 0.2);
  if (obs.status !== undefined) s.answered = true;
  if (obs.limit !== undefined) s.limit = obs.limit;
  if (obs.remaining !== undefined) {
    // Requests still in flight may not be counted by the server yet: assume they are not.
    const estimate = obs.remaining - s.inFlight;
    s.remaining = s.remaining === undefined ? estimate : Math.min(s.remaining, estimate);
    if (obs.resetSeconds !== undefined) {
      const resetAt = now + obs.resetSeconds * 1000;
      s.windowMs = Math.max(s.windowMs ?? 0, obs.resetSeconds * 1000);
      // A later reset means a new window: trust the server's count for it.
      if (s.resetAt === undefined || resetAt > s.resetAt + 1000) s.remaining = estimate;
      s.resetAt = resetAt;
    }
  }
  if (obs.status === 429) {
    const pause = obs.retryAfterMs ?? (s.resetAt !== undefined ? s.resetAt - now : 1000);
    s.pauseUntil = Math.max(s.pauseUntil, now + pause + o.resetMarginMs);
    s.remaining = 0;
  }
  return s;
}

/**
 * Whether only tails may spend now: at most `tailReserve` requests are left above the reserve and the window does
 * not reset within two request latencies (then the tokens would be lost unspent anyway). Backfills and rescans wait
 * for the reset so that a tail never waits a whole window behind them.
 */
export function tailsOnly(
  state: TokenBudgetState,
  now: number,
  o: TokenBudgetOptions,
  tailReserve: number,
): boolean {
  if (tailReserve <= 0) return false;
  const s = rollWindow(state, now, o);
  if (s.remaining === undefined || s.resetAt === undefined) return false;
  if (s.resetAt + o.resetMarginMs - now < 2 * s.latencyMs) return false;
  return s.remaining - o.reserve <= tailReserve;
}

/**
 * Whether the budget binds: sending every call at once, `maxInFlight` requests at a time, would spend the tokens
 * left before the window resets. Then a token is worth a full batch. Unknown budgets never bind. Between a window's
 * reset and the first answer of the next one, the next window is taken to last `windowMs` (the longest reset
 * announced): a fresh window binds as the last one did, instead of being spent on whatever waits at that moment
 * (the issue-11 acceptance run sent 10 POSTs of 19 calls in all within 0.5 s of each reset, before this).
 */
export function budgetBinds(
  state: TokenBudgetState,
  now: number,
  o: TokenBudgetOptions,
  maxInFlight: number,
): boolean {
  if (state.pauseUntil > now) return true;
  const s = rollWindow(state, now, o);
  if (s.remaining === undefined) return false;
  const spendable = s.remaining - o.reserve;
  if (spendable <= 0) return true;
  const windowLeftMs = s.resetAt !== undefined ? s.resetAt + o.resetMarginMs - now : s.windowMs;
  if (windowLeftMs === undefined) return false;
  const spendAtFullSpeed = (maxInFlight * windowLeftMs) / Math.max(1, s.latencyMs);
  return spendable < spendAtFullSpeed;
}

/**
 * Whether the budget binds over a whole window from now (`windowMs`), not only until the reset: the tokens left
 * plus the next window's against what full speed would spend in that time. What the fetcher's hold asks: to a
 * backlog that needs the next window's tokens too, a token left at a window's end is worth as much as one after the
 * reset, so the end of a window is no reason to send partial batches (the issue-11 acceptance run sent 7 partial
 * POSTs in the 4 s before a reset, where `budgetBinds` turns false because the tokens left would expire). Binds
 * whenever `budgetBinds` does; unknown budgets never bind.
 */
export function budgetBindsAhead(
  state: TokenBudgetState,
  now: number,
  o: TokenBudgetOptions,
  maxInFlight: number,
): boolean {
  if (budgetBinds(state, now, o, maxInFlight)) return true;
  const s = rollWindow(state, now, o);
  if (s.remaining === undefined || s.limit === undefined || s.windowMs === undefined) return false;
  const available = Math.max(0, s.remaining - o.reserve) + Math.max(0, s.limit - o.reserve);
  return available < (maxInFlight * s.windowMs) / Math.max(1, s.latencyMs);
}

/**
 * Requests the key will grant from now to the end of the next window: the tokens left above the reserve plus the
 * next window's (`limit` less the reserve). During a pause only the next window's count. `undefined` while the limit
 * is unknown (no answer told it). What the fetcher weighs the work waiting and coming against (`workBinds`).
 */
export function tokensAhead(state: TokenBudgetState, now: number, o: TokenBudgetOptions): number | undefined {
  const s = rollWindow(state, now, o);
  if (s.remaining === undefined || s.limit === undefined) return undefined;
  const left = s.pauseUntil > now ? 0 : Math.max(0, s.remaining - o.reserve);
  return left + Math.max(0, s.limit - o.reserve);
}

/** Requests the key will still grant in this window above the reserve (0 during a pause); `undefined`: unknown. */
export function tokensLeft(state: TokenBudgetState, now: number, o: TokenBudgetOptions): number | undefined {
  const s = rollWindow(state, now, o);
  if (s.remaining === undefined) return undefined;
  return s.pauseUntil > now ? 0 : Math.max(0, s.remaining - o.reserve);
}
