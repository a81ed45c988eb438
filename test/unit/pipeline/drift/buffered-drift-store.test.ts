import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  createBufferedDriftStore,
  DRIFT_KINDS,
  mergeDriftRecord,
  type DriftRecord,
  type DriftStore,
  type PageDrift,
  type ResourceDrift,
} from '../../../../src/pipeline/drift/index.js';
import type { ResourceName } from '../../../../src/foundation/models/index.js';

/** The Redis store's script in memory (mergeDriftRecord is its statement in TS), counting its writes. */
function memoryStore(maxPaths = 300): DriftStore & { writes: number; fail: boolean } {
  const data = new Map<ResourceName, { records: Map<string, DriftRecord>; dropped: number }>();
  const store = {
    writes: 0,
    fail: false,
    record(resource: ResourceName, page: PageDrift, nowMs = 0): Promise<void> {
      // As the Redis store: a page without drift writes nothing.
      if (page.entries.length === 0 && page.dropped === 0) return Promise.resolve();
      store.writes += 1;
      if (store.fail) return Promise.reject(new Error('redis down'));
      const d = data.get(resource) ?? { records: new Map<string, DriftRecord>(), dropped: 0 };
      data.set(resource, d);
      d.dropped += page.dropped;
      for (const e of page.entries) {
        const field = `${e.kind}\t${e.path}`;
        const old = d.records.get(field);
        if (old === undefined && d.records.size >= maxPaths) d.dropped += e.count;
        else d.records.set(field, mergeDriftRecord(old, e, nowMs));
      }
      return Promise.resolve();
    },
    read(resource?: ResourceName): Promise<ResourceDrift[]> {
      const names = resource === undefined ? [...data.keys()] : [resource];
      return Promise.resolve(
        names.map((r) => ({
          resource: r,
          records: [...(data.get(r)?.records.values() ?? [])].sort((a, b) =>
            `${a.kind}${a.path}`.localeCompare(`${b.kind}${b.path}`),
          ),
          dropped: data.get(r)?.dropped ?? 0,
        })),
      );
    },
    clear(resource: ResourceName): Promise<void> {
      data.delete(resource);
      return Promise.resolve();
    },
  };
  return store;
}

const page = (path: string, count: number, first?: number, last?: number): PageDrift => ({
  entries: [
    {
      kind: 'type_changed',
      path,
      count,
      types: { string: count },
      ...(first === undefined ? {} : { firstRecordMs: first }),
      ...(last === undefined ? {} : { lastRecordMs: last }),
    },
  ],
  dropped: 0,
});

/** What a record's figures are, apart from when it was seen (a batch is written at its newest page's time). */
const figures = (rs: readonly ResourceDrift[]) =>
  rs.map((r) => ({
    resource: r.resource,
    dropped: r.dropped,
    records: r.records.map(({ firstSeenMs: _f, lastSeenMs: _l, ...rest }) => rest),
  }));

describe('buffered drift store', () => {
  it('folds pages into one write per resource, and flushed() waits for it', async () => {
    const inner = memoryStore();
    const store = createBufferedDriftStore(inner, { flushMs: 20 });
    void store.record('donations', page('amount', 2, 500, 900), 10);
    void store.record('donations', page('amount', 3, 100, 700), 30);
    void store.record('transactions', page('money', 1), 20);
    expect(inner.writes).toBe(0);
    await store.flushed();
    expect(inner.writes).toBe(2);
    const [d] = await inner.read('donations');
    expect(d?.records).toEqual([
      {
        kind: 'type_changed',
        path: 'amount',
        count: 5,
        types: { string: 5 },
        firstSeenMs: 30,
        lastSeenMs: 30,
        firstRecordMs: 100,
        lastRecordMs: 900,
      },
    ]);
    // Nothing held: flushed() resolves at once and writes nothing.
    await store.flushed();
    expect(inner.writes).toBe(2);
  });

  it('gives the figures one write per page gives, for any pages (property)', async () => {
    const entry = fc.record({
      kind: fc.constantFrom(...DRIFT_KINDS),
      path: fc.constantFrom('a', 'b', 'c', 'd.e', 'f[]'),
      count: fc.integer({ min: 1, max: 50 }),
      types: fc.record({ string: fc.integer({ min: 1, max: 9 }), integer: fc.integer({ min: 1, max: 9 }) }),
      firstRecordMs: fc.option(fc.integer({ min: 0, max: 1e6 }), { nil: undefined }),
      lastRecordMs: fc.option(fc.integer({ min: 0, max: 1e6 }), { nil: undefined }),
    });
    const pages = fc.array(
      fc.record({
        resource: fc.constantFrom<ResourceName>('donations', 'transactions'),
        entries: fc.uniqueArray(entry, { selector: (e) => `${e.kind}${e.path}`, maxLength: 4 }),
        dropped: fc.integer({ min: 0, max: 3 }),
        flush: fc.boolean(),
      }),
      { maxLength: 30 },
    );
    await fc.assert(
      fc.asyncProperty(pages, fc.integer({ min: 1, max: 4 }), async (ps, maxPaths) => {
        const direct = memoryStore(maxPaths);
        const inner = memoryStore(maxPaths);
        const store = createBufferedDriftStore(inner, { flushMs: 1_000, maxPaths });
        for (const p of ps) {
          const drift: PageDrift = {
            entries: p.entries.map(({ firstRecordMs, lastRecordMs, ...e }) => ({
              ...e,
              ...(firstRecordMs === undefined ? {} : { firstRecordMs }),
              ...(lastRecordMs === undefined ? {} : { lastRecordMs }),
            })),
            dropped: p.dropped,
          };
          await direct.record(p.resource, drift);
          void store.record(p.resource, drift);
          if (p.flush) await store.close();
        }
        await store.close();
        expect(figures(await inner.read())).toEqual(figures(await direct.read()));
      }),
      { numRuns: 200 },
    );
  });

  it('holds at most maxPaths paths a resource: one more writes the batch first', async () => {
    const inner = memoryStore(3);
    const store = createBufferedDriftStore(inner, { flushMs: 60_000, maxPaths: 2 });
    const first = store.record('donations', page('a', 2));
    for (const path of ['b', 'a']) void store.record('donations', page(path, 2));
    void store.record('donations', page('c', 1));
    await first;
    expect(inner.writes).toBe(1);
    void store.record('donations', page('d', 1));
    await store.close();
    const [d] = await inner.read('donations');
    expect(d?.records.map((r) => [r.path, r.count])).toEqual([
      ['a', 4],
      ['b', 2],
      ['c', 1],
    ]);
    expect(d?.dropped).toBe(1);
  });

  it('a failed write resolves flushed() (drift never fails a slice) and holds nothing back', async () => {
    const inner = memoryStore();
    inner.fail = true;
    const store = createBufferedDriftStore(inner, { flushMs: 5 });
    void store.record('donations', page('amount', 1));
    await expect(store.flushed()).resolves.toBeUndefined();
    inner.fail = false;
    void store.record('donations', page('amount', 2));
    await store.flushed();
    const [d] = await inner.read('donations');
    expect(d?.records[0]?.count).toBe(2);
  });

  it('read() and clear() write what is held first', async () => {
    const inner = memoryStore();
    const store = createBufferedDriftStore(inner, { flushMs: 60_000 });
    void store.record('donations', page('amount', 4));
    const [d] = await store.read('donations');
    expect(d?.records[0]?.count).toBe(4);
    void store.record('donations', page('amount', 1));
    await store.clear('donations');
    expect((await inner.read('donations'))[0]?.records).toEqual([]);
  });
});
