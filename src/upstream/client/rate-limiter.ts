/**
 * Header-driven rate limiter shared by every request of one client. It paces proactively from `ratelimit-remaining`
 * and `ratelimit-reset` (so a long collection never draws a 429), and on a 429 sets ONE pause (from `Retry-After`)
 * that every call of the client waits out, instead of each call hammering the service on its own.
 */
import { sleep } from '../../foundation/retry/sleep.js';

export interface RateLimiterOptions {
  /** Requests kept in reserve below the server's remaining budget (room for other tools on the same key). @default 2 */
  reserve?: number;
  /** Extra wait after the announced reset, against clock skew and rounding. @default 250 */
  resetMarginMs?: number;
  /** Injected clock. @default Date.now */
  now?: () => number;
}

export const DEFAULT_RATE_LIMITER_OPTIONS = { reserve: 2, resetMarginMs: 250 } as const;

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

function header(headers: Headers, name: string): number | undefined {
  const raw = headers.get(name);
  if (raw === null) return undefined;
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

export function createRateLimiter(options: RateLimiterOptions = {}): RateLimiter {
  const reserve = options.reserve ?? DEFAULT_RATE_LIMITER_OPTIONS.reserve;
  const margin = options.resetMarginMs ?? DEFAULT_RATE_LIMITER_OPTIONS.resetMarginMs;
  const now = options.now ?? Date.now;
  const s: RateLimiterState = {
    limit: undefined,
    remaining: undefined,
    resetAt: undefined,
    pauseUntil: 0,
    inFlight: 0,
  };
  let wake: (() => void)[] = [];
  let answered = false;

  const notify = (): void => {
    const waiters = wake;
    wake = [];
    for (const w of waiters) w();
  };
  const changed = (): Promise<void> => new Promise((resolve) => wake.push(resolve));

  async function acquire(signal?: AbortSignal): Promise<void> {
    for (;;) {
      const t = now();
      if (s.pauseUntil > t) {
        await sleep(s.pauseUntil - t, signal);
        continue;
      }
      if (s.resetAt !== undefined && t >= s.resetAt + margin) {
        // The window rolled over: the full budget is back (minus what is still in flight and uncounted).
        s.remaining = s.limit === undefined ? undefined : s.limit - s.inFlight;
        s.resetAt = undefined;
      }
      if (s.remaining === undefined) {
        // Budget unknown: one request at a time until a response tells us; an upstream that sends no
        // `ratelimit-*` headers at all is not paced (429s still pause).
        if (s.inFlight === 0 || answered) break;
      } else if (s.remaining > reserve) {
        s.remaining--;
        break;
      }
      const until = s.resetAt !== undefined ? s.resetAt + margin - t : 1000;
      await Promise.race([sleep(Math.max(1, until), signal), changed()]);
    }
    s.inFlight++;
  }

  function complete(headers: Headers | undefined, status: number | undefined, retryAfterMs?: number): void {
    s.inFlight = Math.max(0, s.inFlight - 1);
    const t = now();
    if (headers) {
      answered = true;
      const limit = header(headers, 'ratelimit-limit');
      const remaining = header(headers, 'ratelimit-remaining');
      const reset = header(headers, 'ratelimit-reset');
      if (limit !== undefined) s.limit = limit;
      if (remaining !== undefined) {
        // Requests still in flight may not be counted by the server yet: assume they are not.
        const estimate = remaining - s.inFlight;
        s.remaining = s.remaining === undefined ? estimate : Math.min(s.remaining, estimate);
        if (reset !== undefined) {
          const resetAt = t + reset * 1000;
          // A later reset means a new window: trust the server's count for it.
          if (s.resetAt === undefined || resetAt > s.resetAt + 1000) s.remaining = estimate;
          s.resetAt = resetAt;
        }
      }
    }
    if (status === 429) {
      const pause = retryAfterMs ?? (s.resetAt !== undefined ? s.resetAt - t : 1000);
      s.pauseUntil = Math.max(s.pauseUntil, t + pause + margin);
      s.remaining = 0;
    }
    notify();
  }

  return { acquire, complete, state: () => ({ ...s }) };
}
