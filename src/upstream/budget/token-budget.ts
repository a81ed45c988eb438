/**
 * The shared budget's questions about one API key's tokens, over the one pacing core of `client/rate-limiter.ts`
 * (the state, the window roll, the wait, a request's start and answer; re-exported here for the budget's users): may
 * only tails spend now, does the budget bind (until the reset, or over a whole window), how many tokens are left and
 * ahead. Pure; the fetcher keeps one state per key.
 */
import { rollWindow, type TokenBudgetOptions, type TokenBudgetState } from '../client/rate-limiter.js';

export {
  completeRequest,
  initialTokenBudget,
  rollWindow,
  startRequest,
  waitBeforeRequest,
} from '../client/rate-limiter.js';
export type { BudgetObservation, TokenBudgetOptions, TokenBudgetState } from '../client/rate-limiter.js';

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
