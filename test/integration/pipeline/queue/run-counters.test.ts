/**
 * Run counters on real Redis: `addThrough` counts a slice's cumulative figures once (the exactly-once path's guard
 * against a crash between counting and saving the job data), and trimming a run removes its per-slice figures.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { createRunCounters } from '../../../../src/pipeline/queue/index.js';

const redisUrl = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:16379';
const redis = new Redis(redisUrl, { lazyConnect: false, maxRetriesPerRequest: 2 });
const prefix = `it-counters-${randomUUID().slice(0, 8)}`;

afterAll(async () => {
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
});

const zero = { fetched: 0, published: 0, deduplicated: 0, deadLettered: 0 };

describe('RunCounters.addThrough (real Redis)', () => {
  it('adds only what exceeds what the slice counted before; repeats and older figures add nothing', async () => {
    const counters = createRunCounters(redis, prefix);
    const first = { fetched: 30, published: 21, deduplicated: 9, deadLettered: 0 };
    expect(await counters.addThrough('r1', 's1', first, 'transactions')).toEqual(first);
    // A retry after a crash between counting and saving the job data: the same figures again.
    expect(await counters.addThrough('r1', 's1', first, 'transactions')).toEqual(zero);
    // An older figure (a stale owner) adds nothing and does not lower what was counted.
    expect(await counters.addThrough('r1', 's1', { ...first, published: 7 }, 'transactions')).toEqual(zero);
    const later = { fetched: 44, published: 33, deduplicated: 10, deadLettered: 1 };
    expect(await counters.addThrough('r1', 's1', later, 'transactions')).toEqual({
      fetched: 14,
      published: 12,
      deduplicated: 1,
      deadLettered: 1,
    });
    // Another slice of the run counts on its own.
    await counters.addThrough(
      'r1',
      's2',
      { fetched: 5, published: 5, deduplicated: 0, deadLettered: 0 },
      'users',
    );
    const figures = await counters.get('r1');
    expect({ ...figures, byResource: undefined }).toEqual({
      ...later,
      fetched: 49,
      published: 38,
      byResource: undefined,
    });
    expect(figures.byResource).toEqual({
      transactions: later,
      users: { fetched: 5, published: 5, deduplicated: 0, deadLettered: 0 },
    });
    const totals = await counters.totals();
    expect(totals.published).toBe(38);
  });

  it('trimming a finished run removes its per-slice figures with its counters', async () => {
    const counters = createRunCounters(redis, prefix, { retention: { maxAgeMs: 1_000, maxRuns: 100 } });
    await counters.setState('old', 'running');
    await counters.addThrough('old', 's1', { fetched: 1, published: 1, deduplicated: 0, deadLettered: 0 });
    expect(await redis.exists(`${prefix}:run:old:slices`)).toBe(1);
    await counters.setState('old', 'completed');
    expect(await counters.trim(Date.now() + 10_000)).toBeGreaterThanOrEqual(1);
    expect(await redis.exists(`${prefix}:run:old:slices`, `${prefix}:run:old:counters`)).toBe(0);
  });
});
