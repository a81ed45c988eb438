/**
 * The fetcher's pacing kept in Redis: its last token state and a 429's pause, written after every answer and adopted
 * by the next fetcher (less the old one's requests in flight), so a failover neither forgets a pause nor spends a
 * budget already spent. The encoding both ways is pure ({@link pacingFields}, {@link adoptedPacing}); the two
 * functions around it do the Redis input/output.
 */
import type { Redis } from 'ioredis';
import type { BudgetKeys } from './budget-keys.js';
import type { ReportError } from './budget-errors.js';
import type { TokenBudgetState } from './token-budget.js';

/** How long the persisted token state outlives its last write, ms. */
const STATE_TTL_MS = 3_600_000;

/** The hash fields of `state` (fields the budget does not know yet are left out). */
export function pacingFields(state: TokenBudgetState): Record<string, string> {
  const fields: Record<string, string> = {
    latencyMs: String(state.latencyMs),
    inFlight: String(state.inFlight),
  };
  if (state.limit !== undefined) fields['limit'] = String(state.limit);
  if (state.remaining !== undefined) fields['remaining'] = String(state.remaining);
  if (state.resetAt !== undefined) fields['resetAt'] = String(state.resetAt);
  if (state.windowMs !== undefined) fields['windowMs'] = String(state.windowMs);
  return fields;
}

const num = (v: string | null | undefined): number | undefined =>
  v === undefined || v === null || v === '' ? undefined : Number(v);

/** What a new fetcher adopts from the persisted hash `state` and `pause` (the pause's end, ms). */
export function adoptedPacing(
  state: Record<string, string>,
  pause: string | null,
): Partial<TokenBudgetState> {
  const adopted: Partial<TokenBudgetState> = { pauseUntil: num(pause) ?? 0 };
  const limit = num(state['limit']);
  const remaining = num(state['remaining']);
  const resetAt = num(state['resetAt']);
  if (limit !== undefined && resetAt !== undefined && remaining !== undefined) {
    // The previous fetcher's requests in flight when it last wrote may be counted by now.
    Object.assign(adopted, {
      limit,
      resetAt,
      remaining: remaining - (num(state['inFlight']) ?? 0),
      answered: true,
    });
  }
  const latency = num(state['latencyMs']);
  if (latency !== undefined) adopted.latencyMs = latency;
  const windowMs = num(state['windowMs']);
  if (windowMs !== undefined) adopted.windowMs = windowMs;
  return adopted;
}

/** Writes the token state after an answer (`status`: its HTTP status; a 429 also writes its pause). */
export function persistPacing(
  redis: Redis,
  keys: BudgetKeys,
  state: TokenBudgetState,
  status: number | undefined,
  now: () => number,
  report: ReportError,
): void {
  const pipe = redis.pipeline();
  pipe.hset(keys.state, pacingFields(state)).pexpire(keys.state, STATE_TTL_MS);
  pipe.hincrby(keys.stats, 'requests', 1);
  if (status === 429) {
    pipe.hincrby(keys.stats, 'status429', 1);
    const ms = state.pauseUntil - now();
    if (ms > 0) pipe.set(keys.pause, String(state.pauseUntil), 'PX', Math.ceil(ms));
  }
  pipe.exec().catch((e: unknown) => report(e, 'persisting the budget'));
}

/** Reads what the previous fetcher persisted, for `limiter.adopt`. */
export async function readPersistedPacing(
  redis: Redis,
  keys: BudgetKeys,
): Promise<Partial<TokenBudgetState>> {
  const [state, pause] = await Promise.all([redis.hgetall(keys.state), redis.get(keys.pause)]);
  return adoptedPacing(state, pause);
}
