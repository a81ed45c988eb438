import { describe, expect, it } from 'vitest';
import { createRateLimiter } from '../../../../tools/simulator/rate-limiter.js';
import { corruptRecord, malformedKind } from '../../../../tools/simulator/faults.js';

const settings = { enabled: true, keyed: 3, anonymous: 2, windowMs: 10_000 };

describe('rate limiter (injected clock)', () => {
  it('counts per key and per address in fixed windows, with the draft headers', () => {
    const limiter = createRateLimiter();
    const keyed = { apiKey: 'k', address: '1.1.1.1' };
    const t = 1_000_000;
    const first = limiter.take(keyed, settings, t);
    expect(first).toEqual({
      allowed: true,
      resetSeconds: 10,
      headers: {
        'ratelimit-limit': '3',
        'ratelimit-remaining': '2',
        'ratelimit-reset': '10',
        'ratelimit-policy': '3;w=10',
      },
    });
    limiter.take(keyed, settings, t + 1);
    expect(limiter.take(keyed, settings, t + 2).allowed).toBe(true);
    const refused = limiter.take(keyed, settings, t + 4_500);
    expect(refused.allowed).toBe(false);
    expect(refused.resetSeconds).toBe(6);
    expect(refused.headers['ratelimit-remaining']).toBe('0');
    // Anonymous callers are counted by address, with their own limit.
    const anon = { apiKey: undefined, address: '1.1.1.1' };
    expect(limiter.take(anon, settings, t).headers['ratelimit-limit']).toBe('2');
    expect(limiter.take(anon, settings, t).allowed).toBe(true);
    expect(limiter.take(anon, settings, t).allowed).toBe(false);
    expect(limiter.take({ apiKey: undefined, address: '2.2.2.2' }, settings, t).allowed).toBe(true);
    // A new window starts once the old one has passed.
    expect(limiter.take(keyed, settings, t + 10_000).allowed).toBe(true);
  });
});

describe('malformed records', () => {
  it('are chosen by identity at the configured rate, with every kind', () => {
    const kinds = Array.from({ length: 20_000 }, (_, i) => malformedKind('transactions', i, 0.1, 7));
    const hits = kinds.filter((k) => k !== undefined);
    expect(hits.length).toBeGreaterThan(1_700);
    expect(hits.length).toBeLessThan(2_300);
    expect(new Set(hits)).toEqual(new Set(['wrong-type', 'missing-id', 'invalid-date']));
    expect(Array.from({ length: 20_000 }, (_, i) => malformedKind('transactions', i, 0.1, 7))).toEqual(kinds);
    expect(malformedKind('transactions', 1, 0, 7)).toBeUndefined();
    expect(malformedKind('countries', 1, 1, 7)).toBeUndefined();
  });

  it('corrupt a copy, never the original', () => {
    const record = { _id: 'a'.repeat(24), money: 3.5, createdAt: '2026-10-01T00:00:00.000Z' };
    expect(corruptRecord('transactions', record, 'missing-id')).toEqual({
      money: 3.5,
      createdAt: record.createdAt,
    });
    expect(corruptRecord('transactions', record, 'invalid-date')['createdAt']).toBe('not-a-date');
    expect(typeof corruptRecord('transactions', record, 'wrong-type')['money']).toBe('string');
    expect(corruptRecord('users', { _id: 'x', createdAt: 'y' }, 'wrong-type')['createdAt']).toBe(12345);
    expect(record.money).toBe(3.5);
  });
});
