import { describe, expect, it } from 'vitest';
import { createRateLimiter, parseRetryAfter } from '../../../../src/upstream/client/rate-limiter.js';

const h = (remaining: number, reset: number, limit = 10): Headers =>
  new Headers({
    'ratelimit-limit': String(limit),
    'ratelimit-remaining': String(remaining),
    'ratelimit-reset': String(reset),
  });

describe('rate limiter', () => {
  it('paces from ratelimit-remaining: waits for the reset instead of drawing a 429', async () => {
    let now = 0;
    const limiter = createRateLimiter({ reserve: 0, resetMarginMs: 0, now: () => now });
    await limiter.acquire();
    limiter.complete(h(2, 1), 200);
    await limiter.acquire();
    await limiter.acquire();
    let third = false;
    const p = limiter.acquire().then(() => (third = true));
    await new Promise((r) => setTimeout(r, 30));
    expect(third).toBe(false); // budget spent: waits for the window
    now = 1001;
    await p;
    expect(third).toBe(true);
  });

  it('one 429 pauses every caller for Retry-After', async () => {
    let now = 0;
    const limiter = createRateLimiter({ resetMarginMs: 0, now: () => now });
    await limiter.acquire();
    limiter.complete(h(100, 60, 500), 200);
    await limiter.acquire();
    limiter.complete(h(0, 60, 500), 429, 2000);
    expect(limiter.state().pauseUntil).toBe(2000);
    let started = 0;
    const waiters = [limiter.acquire(), limiter.acquire()].map((p) => p.then(() => started++));
    await new Promise((r) => setTimeout(r, 30));
    expect(started).toBe(0);
    now = 2001;
    limiter.complete(h(500, 60, 500), 200); // a new window
    await Promise.all(waiters);
    expect(started).toBe(2);
  });

  it('does not serialise requests to an upstream that sends no rate-limit headers', async () => {
    const limiter = createRateLimiter();
    await limiter.acquire();
    limiter.complete(new Headers(), 200);
    await Promise.all([limiter.acquire(), limiter.acquire(), limiter.acquire()]);
    expect(limiter.state().inFlight).toBe(3);
  });

  it('parses Retry-After seconds and dates', () => {
    expect(parseRetryAfter('2')).toBe(2000);
    expect(parseRetryAfter(new Date(10_000).toUTCString(), 4000)).toBe(6000);
    expect(parseRetryAfter(null)).toBeUndefined();
  });
});
