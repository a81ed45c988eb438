import { describe, expect, it } from 'vitest';
import { createMemoryStore } from '../../../../src/upstream/cache/memory-store.js';
import { createSwrCache } from '../../../../src/upstream/cache/swr-cache.js';
import { freshnessOf, makeEntry, mayReplace } from '../../../../src/upstream/cache/freshness.js';

const W = { freshMs: 100, staleMs: 1000 };

describe('freshness', () => {
  it('fresh, stale, expired', () => {
    const e = makeEntry('v', 0, W);
    expect(freshnessOf(e, 50)).toBe('fresh');
    expect(freshnessOf(e, 100)).toBe('stale');
    expect(freshnessOf(e, 1100)).toBe('expired');
    expect(freshnessOf(undefined, 0)).toBe('expired');
    expect(mayReplace(makeEntry('new', 10, W), makeEntry('old', 5, W))).toBe(false);
  });
});

describe('SWR cache', () => {
  function setup() {
    let now = 0;
    let fetches = 0;
    let fail = false;
    const store = createMemoryStore({ now: () => now });
    const cache = createSwrCache({ stores: [store], now: () => now });
    const fetcher = async (): Promise<string> => {
      fetches++;
      await new Promise((r) => setTimeout(r, 5));
      if (fail) throw new Error('down');
      return `v${fetches}`;
    };
    return {
      cache,
      store,
      fetcher,
      at: (t: number) => (now = t),
      count: () => fetches,
      setFail: (f: boolean) => (fail = f),
    };
  }

  it('serves fresh without a fetch, shares a miss, revalidates stale once in the background', async () => {
    const s = setup();
    const [a, b] = await Promise.all([s.cache.get('k', W, s.fetcher), s.cache.get('k', W, s.fetcher)]);
    expect([a, b, s.count()]).toEqual(['v1', 'v1', 1]);
    s.at(50);
    expect(await s.cache.get('k', W, s.fetcher)).toBe('v1');
    expect(s.count()).toBe(1);
    s.at(200);
    const stale = await Promise.all([
      s.cache.get('k', W, s.fetcher),
      s.cache.get('k', W, s.fetcher),
      s.cache.get('k', W, s.fetcher),
    ]);
    expect(stale).toEqual(['v1', 'v1', 'v1']);
    await s.cache.idle();
    expect(s.count()).toBe(2);
    expect(await s.cache.get('k', W, s.fetcher)).toBe('v2');
  });

  it('keeps serving stale when revalidation fails; fetches after expiry', async () => {
    const s = setup();
    await s.cache.get('k', W, s.fetcher);
    s.at(200);
    s.setFail(true);
    expect(await s.cache.get('k', W, s.fetcher)).toBe('v1');
    await s.cache.idle();
    expect(await s.cache.get('k', W, s.fetcher)).toBe('v1');
    await s.cache.idle();
    expect(s.cache.stats().revalidationFailures).toBeGreaterThanOrEqual(1);
    s.at(5000);
    await expect(s.cache.get('k', W, s.fetcher)).rejects.toThrow('down');
  });

  it('clear() drops everything and a fetch started before it does not write back', async () => {
    const s = setup();
    await s.cache.get('k', W, s.fetcher);
    const slow = s.cache.get('k2', W, s.fetcher);
    await s.cache.clear();
    await slow;
    expect(await s.store.get('k')).toBeUndefined();
    expect(await s.store.get('k2')).toBeUndefined();
  });

  it('an older fetch never overwrites a newer entry', async () => {
    const store = createMemoryStore();
    expect(await store.set('k', makeEntry('new', 10, W))).toBe(true);
    expect(await store.set('k', makeEntry('old', 5, W))).toBe(false);
    expect((await store.get('k'))?.value).toBe('new');
  });
});
