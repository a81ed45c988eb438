/** `DedupStore.newerSeen` (issue 48, dlq replay): a strictly newer version of the entity in the global seen-set. */
import { describe, expect, it } from 'vitest';
import { createDedupStore, createMemorySeenSet, nextVersion } from '../../../../src/pipeline/dedup/index.js';

const ID = '65a1b2c3d4e5f60718293a4b';

describe('newerSeen', () => {
  it("true only when a version above the record's was marked; immutable resources and odd versions: false", async () => {
    const store = createDedupStore(createMemorySeenSet(), { prefix: 't' });
    const at = (updatedAt: string) => ({ _id: ID, updatedAt });
    await store.markSeen('elections', [at('2026-10-01T00:00:00.000Z')]);
    expect(await store.newerSeen?.('elections', [at('2026-10-01T00:00:00.000Z')])).toEqual([false]);
    expect(await store.newerSeen?.('elections', [at('2026-09-30T23:59:59.999Z')])).toEqual([true]);
    await store.markSeen('elections', [at('2026-10-02T00:00:00.000Z')]);
    expect(
      await store.newerSeen?.('elections', [at('2026-10-01T00:00:00.000Z'), { updatedAt: 'x' }]),
    ).toEqual([true, false]);
    await store.markSeen('donations', [{ _id: ID }]);
    expect(await store.newerSeen?.('donations', [{ _id: ID }])).toEqual([false]);
  });

  it('nextVersion: 1 ms above a time, 1 above an integer, none for text', () => {
    expect(nextVersion('2026-10-01T00:00:00.000Z')).toBe('2026-10-01T00:00:00.001Z');
    expect(nextVersion('7')).toBe('8');
    expect(nextVersion('not a version')).toBeUndefined();
  });
});
