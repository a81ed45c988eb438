/**
 * Fixed-window rate limiter as upstream applies it: per API key (500 / 60 s) or, without a key, per remote
 * address (100 / 60 s). A batch is one request. Every answer carries the IETF draft headers
 * `ratelimit-limit`, `ratelimit-remaining`, `ratelimit-reset` (seconds) and `ratelimit-policy`.
 */
import type { RateLimitSettings } from './options.js';

export interface RateDecision {
  allowed: boolean;
  headers: Record<string, string>;
  /** Seconds until the window resets (the `Retry-After` of a 429). */
  resetSeconds: number;
}

export interface RateLimiter {
  /** Counts one request of a caller and says whether it may pass. */
  take(
    caller: { apiKey: string | undefined; address: string },
    settings: RateLimitSettings,
    nowMs: number,
  ): RateDecision;
  reset(): void;
}

export function createRateLimiter(): RateLimiter {
  const windows = new Map<string, { start: number; count: number }>();
  return {
    take({ apiKey, address }, settings, nowMs) {
      const keyed = apiKey !== undefined;
      const limit = keyed ? settings.keyed : settings.anonymous;
      const id = keyed ? `key:${apiKey}` : `ip:${address}`;
      let window = windows.get(id);
      if (window === undefined || nowMs >= window.start + settings.windowMs) {
        window = { start: nowMs, count: 0 };
        windows.set(id, window);
      }
      window.count++;
      const resetSeconds = Math.max(1, Math.ceil((window.start + settings.windowMs - nowMs) / 1000));
      return {
        allowed: window.count <= limit,
        resetSeconds,
        headers: {
          'ratelimit-limit': String(limit),
          'ratelimit-remaining': String(Math.max(0, limit - window.count)),
          'ratelimit-reset': String(resetSeconds),
          'ratelimit-policy': `${limit};w=${Math.round(settings.windowMs / 1000)}`,
        },
      };
    },
    reset: () => windows.clear(),
  };
}
