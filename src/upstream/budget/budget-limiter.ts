/**
 * The fetcher's pacing: the client's one limiter (`createRateLimiter`, `client/rate-limiter.ts`: the token core and
 * its waits) with the shared budget's questions on top (`token-budget.ts`: binds, tails only, tokens left and ahead),
 * and its hooks so the shared budget can persist the state (a 429 pause, the window) for the next leader.
 */
import {
  createRateLimiter,
  type TokenBudgetOptions,
  type TokenBudgetState,
  type TokenRateLimiter,
} from '../client/rate-limiter.js';
import { budgetBinds, budgetBindsAhead, tailsOnly, tokensAhead, tokensLeft } from './token-budget.js';

export interface BudgetLimiter extends TokenRateLimiter {
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
}

export interface BudgetLimiterOptions extends TokenBudgetOptions {
  now: () => number;
  /** First latency estimate, ms. */
  latencyMs: number;
  /** Called after every answer with the new state and whether it was a 429. */
  onComplete?: ((state: TokenBudgetState, status: number | undefined) => void) | undefined;
}

export function createBudgetLimiter(options: BudgetLimiterOptions): BudgetLimiter {
  const { now } = options;
  const limiter = createRateLimiter(options);
  return {
    ...limiter,
    binds: (maxInFlight) => budgetBinds(limiter.tokens(), now(), options, maxInFlight),
    bindsAhead: (maxInFlight) => budgetBindsAhead(limiter.tokens(), now(), options, maxInFlight),
    tokensAhead: () => tokensAhead(limiter.tokens(), now(), options),
    tokensLeft: () => tokensLeft(limiter.tokens(), now(), options),
    tailsOnly: (share) => {
      const s = limiter.tokens();
      return tailsOnly(s, now(), options, s.limit === undefined ? 0 : Math.ceil(s.limit * share));
    },
  };
}
