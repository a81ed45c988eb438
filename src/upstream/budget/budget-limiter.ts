/**
 * The fetcher's pacing: the client's `RateLimiter` interface over the pure token core (`token-budget.ts`), with
 * hooks so the shared budget can persist the state (a 429 pause, the window) for the next leader.
 */
import type { RateLimiter, RateLimiterState } from '../client/rate-limiter.js';
import { sleep } from '../../foundation/retry/sleep.js';
import type { TokenBudgetOptions, TokenBudgetState } from './token-budget.js';
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
} from './token-budget.js';

export interface BudgetLimiter extends RateLimiter {
  /** 0 when a request may start now, else how long to wait (or until an answer, whichever comes first). */
  waitMs(): number;
  /** Whether tokens are scarce (see `budgetBinds`). */
  binds(maxInFlight: number): boolean;
  /** Whether tokens are scarce over a whole window from now (see `budgetBindsAhead`): the fetcher's hold. */
  bindsAhead(maxInFlight: number): boolean;
  /** Requests the key will grant from now to the end of the next window (see `tokensAhead`). */
  tokensAhead(): number | undefined;
  /** Requests the key will still grant in this window (see `tokensLeft`). */
  tokensLeft(): number | undefined;
  /** Whether the last `share` of the window's requests is reached: only tails may spend now (see `tailsOnly`). */
  tailsOnly(share: number): boolean;
  /** Resolves at the next answer (or failure) of a request. */
  changed(): Promise<void>;
  /** The pure state (persisted by the shared budget). */
  tokens(): TokenBudgetState;
  /** Adopts a persisted state (a new leader), keeping the requests in flight here. */
  adopt(state: Partial<TokenBudgetState>): void;
}

export interface BudgetLimiterOptions extends TokenBudgetOptions {
  now: () => number;
  /** First latency estimate, ms. */
  latencyMs: number;
  /** Called after every answer with the new state and whether it was a 429. */
  onComplete?: ((state: TokenBudgetState, status: number | undefined) => void) | undefined;
}

function header(headers: Headers | undefined, name: string): number | undefined {
  const raw = headers?.get(name);
  if (raw === null || raw === undefined) return undefined;
  const n = Number(raw);
  return Number.isFinite(n) ? n : undefined;
}

export function createBudgetLimiter(options: BudgetLimiterOptions): BudgetLimiter {
  const { now } = options;
  let s = initialTokenBudget(options.latencyMs);
  let wake: (() => void)[] = [];
  const started: number[] = [];
  const changed = (): Promise<void> => new Promise((resolve) => wake.push(resolve));

  return {
    async acquire(signal) {
      for (;;) {
        const w = waitBeforeRequest(s, now(), options);
        if (w.waitMs === 0) break;
        await (w.untilAnswer ? Promise.race([sleep(w.waitMs, signal), changed()]) : sleep(w.waitMs, signal));
      }
      s = startRequest(s, now(), options);
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
        options,
      );
      options.onComplete?.(s, status);
      const waiters = wake;
      wake = [];
      for (const w of waiters) w();
    },
    state(): RateLimiterState {
      return {
        limit: s.limit,
        remaining: s.remaining,
        resetAt: s.resetAt,
        pauseUntil: s.pauseUntil,
        inFlight: s.inFlight,
      };
    },
    waitMs: () => waitBeforeRequest(s, now(), options).waitMs,
    binds: (maxInFlight) => budgetBinds(s, now(), options, maxInFlight),
    bindsAhead: (maxInFlight) => budgetBindsAhead(s, now(), options, maxInFlight),
    tokensAhead: () => tokensAhead(s, now(), options),
    tokensLeft: () => tokensLeft(s, now(), options),
    tailsOnly: (share) =>
      tailsOnly(s, now(), options, s.limit === undefined ? 0 : Math.ceil(s.limit * share)),
    changed,
    tokens: () => ({ ...s }),
    adopt(state) {
      s = { ...s, ...state, inFlight: s.inFlight, pauseUntil: Math.max(s.pauseUntil, state.pauseUntil ?? 0) };
    },
  };
}
