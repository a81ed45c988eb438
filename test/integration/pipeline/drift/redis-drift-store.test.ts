/**
 * The drift store on the real Redis: a page's drift merged by one script call (counts and types add up, first seen
 * stays, last seen moves), the same result as the pure `mergeDriftRecord`, concurrent pages from several workers
 * lose no count, and the per-resource bound turns further paths into `__dropped`, never into new keys.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createDriftTracker,
  createRedisDriftStore,
  driftKey,
  mergeDriftRecord,
  type PageDrift,
} from '../../../../src/pipeline/drift/index.js';

const redisUrl = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:16379';
const prefix = `it-drift-${randomUUID().slice(0, 8)}`;

function page(build: (t: ReturnType<typeof createDriftTracker>) => void): PageDrift {
  const t = createDriftTracker();
  build(t);
  return t.page();
}

describe('redis drift store', () => {
  let redis: Redis;
  beforeAll(() => {
    redis = new Redis(redisUrl, { lazyConnect: false });
  });
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  });

  it('merges pages as mergeDriftRecord states it', async () => {
    const store = createRedisDriftStore(redis, { prefix });
    const p1 = page((t) => {
      t.unknownField('', 'sellerMuId', 'a');
      t.unknownField('', 'sellerMuId', 'b');
      t.wrongType('money', '1.5');
    });
    const p2 = page((t) => {
      t.unknownField('', 'sellerMuId', 3);
      t.unknownField('item', 'foo', null);
    });
    await store.record('transactions', p1, 1000);
    await store.record('transactions', p2, 2000);
    await store.record('transactions', { entries: [], dropped: 0 }, 3000); // nothing written
    const [got] = await store.read('transactions');
    let expected = new Map<string, ReturnType<typeof mergeDriftRecord>>();
    for (const [p, now] of [
      [p1, 1000],
      [p2, 2000],
    ] as const) {
      for (const e of p.entries) {
        const id = `${e.kind} ${e.path}`;
        expected.set(id, mergeDriftRecord(expected.get(id), e, now));
      }
    }
    expected = new Map([...expected].sort());
    expect(got?.dropped).toBe(0);
    expect(got?.records).toEqual([
      expected.get('new_field item.foo'),
      expected.get('new_field sellerMuId'),
      expected.get('type_changed money'),
    ]);
    expect(got?.records[1]).toEqual({
      kind: 'new_field',
      path: 'sellerMuId',
      count: 3,
      types: { string: 2, integer: 1 },
      firstSeenMs: 1000,
      lastSeenMs: 2000,
    });
    // read() of every resource lists only those with drift
    expect((await store.read()).map((d) => d.resource)).toEqual(['transactions']);
  });

  it('loses no count when workers record the same path at once', async () => {
    const store = createRedisDriftStore(redis, { prefix });
    const one = page((t) => t.unknownField('', 'x', 'v'));
    await Promise.all(Array.from({ length: 50 }, () => store.record('users', one)));
    const [got] = await store.read('users');
    expect(got?.records).toHaveLength(1);
    expect(got?.records[0]?.count).toBe(50);
  });

  it('keeps at most maxPaths paths per resource in one hash; the rest count as dropped', async () => {
    const store = createRedisDriftStore(redis, { prefix, maxPaths: 3 });
    await store.record(
      'articles',
      page((t) => {
        for (const k of ['a', 'b', 'c', 'd', 'e', 'd']) t.unknownField('', k, 1);
      }),
    );
    await store.record(
      'articles',
      page((t) => t.unknownField('', 'a', 1)),
    );
    const [got] = await store.read('articles');
    expect(got?.records.map((r) => [r.path, r.count])).toEqual([
      ['a', 2],
      ['b', 1],
      ['c', 1],
    ]);
    expect(got?.dropped).toBe(3);
    expect(await redis.keys(`${prefix}:drift:articles*`)).toEqual([driftKey(prefix, 'articles')]);
    await store.clear('articles');
    expect(await store.read('articles')).toEqual([{ resource: 'articles', records: [], dropped: 0 }]);
  });
});
