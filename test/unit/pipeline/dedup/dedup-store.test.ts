import { describe, expect, it } from 'vitest';
import { createDedupStore, createMemorySeenSet, dedupKey } from '../../../../src/pipeline/dedup/index.js';

describe('dedup store', () => {
  it('keys immutable records by _id and changing records by (_id, updatedAt)', () => {
    expect(dedupKey('transactions', { _id: 'a', updatedAt: 'x' })).toBe('a');
    expect(dedupKey('users', { _id: 'a', updatedAt: '2026-01-01T00:00:00.000Z' })).toBe(
      'a@2026-01-01T00:00:00.000Z',
    );
  });

  it('drops what was marked seen, keeps new versions, drops in-page repeats', async () => {
    const store = createDedupStore(createMemorySeenSet(), { prefix: 't' });
    const c1 = await store.claim('users', [
      { _id: 'a', updatedAt: '1' },
      { _id: 'b', updatedAt: '1' },
      { _id: 'a', updatedAt: '1' },
    ]);
    expect(c1.fresh.map((r) => r._id)).toEqual(['a', 'b']);
    expect(c1.repeats).toBe(1);
    await store.markSeen('users', c1.fresh);
    c1.release();
    const c2 = await store.claim('users', [
      { _id: 'a', updatedAt: '1' },
      { _id: 'a', updatedAt: '2' },
    ]);
    expect(c2.fresh).toEqual([{ _id: 'a', updatedAt: '2' }]);
    c2.release();
  });

  it('a record not marked seen (publish failed) is claimed again', async () => {
    const store = createDedupStore(createMemorySeenSet());
    const c1 = await store.claim('donations', [{ _id: 'x' }]);
    c1.release();
    const c2 = await store.claim('donations', [{ _id: 'x' }]);
    expect(c2.fresh).toHaveLength(1);
  });

  it('a record in flight in another slice waits for it and is then a repeat', async () => {
    const store = createDedupStore(createMemorySeenSet());
    const c1 = await store.claim('transactions', [{ _id: 't1' }, { _id: 't2' }]);
    let second: string[] | undefined;
    const p = store.claim('transactions', [{ _id: 't1' }, { _id: 't3' }]).then((c) => {
      second = c.fresh.map((r) => String(r._id));
      c.release();
    });
    await new Promise((r) => setTimeout(r, 10));
    expect(second).toBeUndefined(); // still waiting for c1
    await store.markSeen('transactions', c1.fresh);
    c1.release();
    await p;
    expect(second).toEqual(['t3']);
  });

  it('replay scope ignores earlier runs but dedups within the run, and marks the global set', async () => {
    const backend = createMemorySeenSet();
    const store = createDedupStore(backend, { prefix: 'p' });
    await store.markSeen('transactions', [{ _id: 'old' }]);
    const c = await store.claim('transactions', [{ _id: 'old' }], { scope: 'run2' });
    expect(c.fresh).toHaveLength(1);
    await store.markSeen('transactions', c.fresh, { scope: 'run2' });
    c.release();
    const again = await store.claim('transactions', [{ _id: 'old' }], { scope: 'run2' });
    expect(again.fresh).toHaveLength(0);
    expect(backend.sets.get('p:seen:transactions:run:run2')?.has('old')).toBe(true);
    expect(backend.sets.get('p:seen:transactions')?.has('old')).toBe(true);
    await store.reset('transactions', ['run2']);
    expect(backend.sets.size).toBe(0);
  });
});

describe('records without an _id', () => {
  it('always pass and are never marked (they go to the DLQ every time)', async () => {
    const backend = createMemorySeenSet();
    const store = createDedupStore(backend);
    const c = await store.claim('donations', [{ amount: 1 }, { amount: 2 }, { _id: 'a' }]);
    expect(c.fresh).toHaveLength(3);
    await store.markSeen('donations', c.fresh);
    c.release();
    expect([...(backend.sets.get('gamedata:seen:donations')?.keys() ?? [])]).toEqual(['a']);
    const again = await store.claim('donations', [{ amount: 1 }]);
    expect(again.fresh).toHaveLength(1);
  });
});

describe('two processes (two stores on one backend)', () => {
  it('the second waits for the first and gets a repeat once the first marked the record seen', async () => {
    const backend = createMemorySeenSet();
    const a = createDedupStore(backend, { owner: 'a', lockPollMs: 5 });
    const b = createDedupStore(backend, { owner: 'b', lockPollMs: 5 });
    const ca = await a.claim('transactions', [{ _id: 't1' }, { _id: 't2' }]);
    let got: unknown[] | undefined;
    const pb = b.claim('transactions', [{ _id: 't1' }, { _id: 't3' }]).then((c) => {
      got = c.fresh.map((r) => r._id);
      c.release();
    });
    await new Promise((r) => setTimeout(r, 30));
    expect(got).toBeUndefined();
    await a.markSeen('transactions', ca.fresh);
    ca.release();
    await pb;
    expect(got).toEqual(['t3']);
    await new Promise((r) => setTimeout(r, 5));
    expect(backend.locks.size).toBe(0);
  });

  it('when the first fails (no mark), the second publishes the record itself', async () => {
    const backend = createMemorySeenSet();
    const a = createDedupStore(backend, { owner: 'a', lockPollMs: 5 });
    const b = createDedupStore(backend, { owner: 'b', lockPollMs: 5 });
    const ca = await a.claim('donations', [{ _id: 'd1' }]);
    const pb = b.claim('donations', [{ _id: 'd1' }]);
    await new Promise((r) => setTimeout(r, 20));
    ca.release();
    const cb = await pb;
    expect(cb.fresh).toEqual([{ _id: 'd1' }]);
    cb.release();
  });
});

describe('changing resources: one entry per entity, its latest version', () => {
  const oid = '698c8fd256f71dd42526bfe2';
  const at = (s: number): string => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();

  it('a newer version passes, the same or an older one is dropped (stale after a newer one was published)', async () => {
    const backend = createMemorySeenSet();
    const store = createDedupStore(backend, { prefix: 'v' });
    const c1 = await store.claim('users', [{ _id: oid, updatedAt: at(2) }]);
    expect(c1.fresh).toHaveLength(1);
    await store.markSeen('users', c1.fresh);
    c1.release();
    const c2 = await store.claim('users', [
      { _id: oid, updatedAt: at(1) },
      { _id: oid, updatedAt: at(2) },
      { _id: oid, updatedAt: at(3) },
    ]);
    expect(c2.fresh).toEqual([{ _id: oid, updatedAt: at(3) }]);
    await store.markSeen('users', c2.fresh);
    c2.release();
    expect(backend.sets.get('v:seen:users')?.size).toBe(1);
    // Marking an older version later (a slow slice) does not move the entity back.
    await store.markSeen('users', [{ _id: oid, updatedAt: at(1) }]);
    const c3 = await store.claim('users', [{ _id: oid, updatedAt: at(3) }]);
    expect(c3.fresh).toHaveLength(0);
  });

  it('ids that are not ObjectIds and versions that are not ISO times or integers compare by exact text', async () => {
    const store = createDedupStore(createMemorySeenSet());
    await store.markSeen('users', [
      { _id: 'user-7', updatedAt: at(5) },
      { _id: oid, updatedAt: 'yesterday' },
    ]);
    const c = await store.claim('users', [
      { _id: 'user-7', updatedAt: at(5) },
      { _id: 'user-7', updatedAt: at(4) }, // no version order for odd ids: a different text is new
      { _id: oid, updatedAt: 'yesterday' },
      { _id: oid, updatedAt: 'today' },
    ]);
    expect(c.fresh).toEqual([
      { _id: 'user-7', updatedAt: at(4) },
      { _id: oid, updatedAt: 'today' },
    ]);
  });

  it('elections versioned by __v: integers compare as numbers, never against times', async () => {
    const store = createDedupStore(createMemorySeenSet());
    await store.markSeen('elections', [{ _id: oid, __v: 3 }]);
    const c = await store.claim('elections', [
      { _id: oid, __v: 2 },
      { _id: oid, __v: 3 },
      { _id: oid, __v: 4 },
    ]);
    expect(c.fresh).toEqual([{ _id: oid, __v: 4 }]);
    c.release();
  });
});

describe('a backend without cross-process locks', () => {
  it('reads the seen-set once per page; slices of one process still wait for each other', async () => {
    const backend = createMemorySeenSet();
    const calls: string[] = [];
    // Only the three required methods: no claimLocks, no unlock.
    const store = createDedupStore({
      has: (name, versioned, entries) => {
        calls.push(`has ${entries.length}`);
        return backend.has(name, versioned, entries);
      },
      add: (names, versioned, entries) => backend.add(names, versioned, entries),
      drop: (names) => backend.drop(names),
    });
    await store.markSeen('donations', [{ _id: 'old' }]);
    const a = await store.claim('donations', [{ _id: 'old' }, { _id: 'n1' }, { _id: 'n2' }]);
    expect(a.fresh).toEqual([{ _id: 'n1' }, { _id: 'n2' }]);
    expect(calls).toEqual(['has 3']);
    let second: unknown[] | undefined;
    const pb = store.claim('donations', [{ _id: 'n1' }, { _id: 'n3' }]).then((c) => (second = c.fresh));
    await new Promise((r) => setTimeout(r, 10));
    expect(second).toBeUndefined();
    await store.markSeen('donations', a.fresh);
    a.release();
    await pb;
    expect(second).toEqual([{ _id: 'n3' }]);
  });
});
