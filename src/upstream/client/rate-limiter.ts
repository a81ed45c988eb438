/**
 * The one rate pacing of the upstream's request budget, driven by its `ratelimit-*` headers (no hard-coded limit):
 * each answer says how many requests remain and when the window resets; requests in flight are assumed not yet
 * counted; a 429 sets ONE pause (from `Retry-After`) that every call waits out, instead of each call hammering the
 * service on its own. Two layers: the pure token core (`TokenBudgetState` and what moves it: `rollWindow`,
 * `waitBeforeRequest`, `startRequest`, `completeRequest`), and {@link createRateLimiter}, the limiter over it that
 * every request of one client waits at. The shared budget's fetcher is this limiter with the budget's questions on
 * top (`budget/budget-limiter.ts`, `budget/token-budget.ts`).
 */
import { sleep } from '../../foundation/retry/index.js';

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

export const DEFAULT_RATE_LIMITER_OPTIONS: Readonly<TokenBudgetOptions> = { reserve: 2, resetMarginMs: 250 };

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

export interface RateLimiterOptions {
  /** Requests kept in reserve below the server's remaining budget (room for other tools on the same key). @default 2 */
  reserve?: number;
  /** Extra wait after the announced reset, against clock skew and rounding. @default 250 */
  resetMarginMs?: number;
  /** Injected clock. @default Date.now */
  now?: () => number;
  /** First estimate of a request's duration, ms (a moving average of answers after). @default 1000 */
  latencyMs?: number;
  /** Called after every answer with the new state and its status (the shared budget persists it). @default none */
  onComplete?: ((state: TokenBudgetState, status: number | undefined) => void) | undefined;
}

export interface RateLimiterState {
  limit: number | undefined;
  remaining: number | undefined;
  resetAt: number | undefined;
  pauseUntil: number;
  inFlight: number;
}

export interface RateLimiter {
  /** Waits until one request may start, then counts it in flight. */
  acquire(signal?: AbortSignal): Promise<void>;
  /** Reports the end of a request started with `acquire` (headers when a response came back). */
  complete(headers: Headers | undefined, status: number | undefined, retryAfterMs?: number): void;
  /** A snapshot for tests and metrics. */
  state(): RateLimiterState;
}

/** The limiter with its token state open: what the shared budget's fetcher builds on. */
export interface TokenRateLimiter extends RateLimiter {
  /** 0 when a request may start now, else how long to wait (or until an answer, whichever comes first). */
  waitMs(): number;
  /** Resolves at the next answer (or failure) of a request. */
  changed(): Promise<void>;
  /** A copy of the pure state (persisted by the shared budget). */
  tokens(): TokenBudgetState;
  /** Adopts a persisted state (a new leader), keeping the requests in flight here and the longer pause. */
  adopt(state: Partial<TokenBudgetState>): void;
}

function header(headers: Headers | undefined, name: string): number | undefined {
  const raw = headers?.get(name);
  if (raw === null || raw === undefined) return undefined;
  const n = Number(raw);
  return Number.isFinite(n) ? n : undefined;
}

/** Parses `Retry-After` (seconds or an HTTP date) into ms; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const at = Date.parse(value);
  return Number.isFinite(at) ? Math.max(0, at - now) : undefined;
}

/**
 * The header-driven limiter shared by every request of one client, over the token core.
 * @example const limiter = createRateLimiter(); await limiter.acquire(signal); limiter.complete(res.headers, res.status);
 */
export function createRateLimiter(options: RateLimiterOptions = {}): TokenRateLimiter {
  const o: TokenBudgetOptions = {
    reserve: options.reserve ?? DEFAULT_RATE_LIMITER_OPTIONS.reserve,
    resetMarginMs: options.resetMarginMs ?? DEFAULT_RATE_LIMITER_OPTIONS.resetMarginMs,
  };
  const now = options.now ?? Date.now;
  let s = initialTokenBudget(options.latencyMs);
  let wake: (() => void)[] = [];
  const started: number[] = [];
  const changed = (): Promise<void> => new Promise((resolve) => wake.push(resolve));

  return {
    async acquire(signal) {
      for (;;) {
        const w = waitBeforeRequest(s, now(), o);
        if (w.waitMs === 0) break;
        await (w.untilAnswer ? Promise.race([sleep(w.waitMs, signal), changed()]) : sleep(w.waitMs, signal));
      }
      s = startRequest(s, now(), o);
      started.push(now());
    },
    complete(headers, status, retryAfterMs) {
      const t = now();
      const begun = started.shift();
      s = completeRequest(
        s,
        {
          status,
          limit: header(headers, 'ratelimit-limit'),
          remaining: header(headers, 'ratelimit-remaining'),
          resetSeconds: header(headers, 'ratelimit-reset'),
          retryAfterMs,
          durationMs: begun === undefined ? undefined : t - begun,
        },
        t,
        o,
      );
      options.onComplete?.(s, status);
      const waiters = wake;
      wake = [];
      for (const w of waiters) w();
    },
    state: () => ({
      limit: s.limit,
      remaining: s.remaining,
      resetAt: s.resetAt,
      pauseUntil: s.pauseUntil,
      inFlight: s.inFlight,
    }),
    waitMs: () => waitBeforeRequest(s, now(), o).waitMs,
    changed,
    tokens: () => ({ ...s }),
    adopt(state) {
      s = { ...s, ...state, inFlight: s.inFlight, pauseUntil: Math.max(s.pauseUntil, state.pauseUntil ?? 0) };
    },
  };
}
