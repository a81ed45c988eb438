import { describe, expect, it } from 'vitest';
import type { Kafka } from 'kafkajs';
import { createSliceFencing } from '../../../../../src/output/kafka/transactions/slice-fencing.js';
import { createMemorySliceOwners } from '../../../../../src/output/kafka/transactions/slice-owners.js';

/** A Kafka whose producers record each fence (InitProducerId with their transactional.id). */
function fencingKafka(fenced: string[]): Kafka {
  return {
    producer: ({ transactionalId }: { transactionalId: string }) => ({
      connect: () => Promise.resolve(),
      transaction: () => {
        fenced.push(transactionalId);
        return Promise.resolve({ abort: () => Promise.resolve() });
      },
      disconnect: () => Promise.resolve(),
    }),
  } as unknown as Kafka;
}

describe('fenceTaken', () => {
  it("fences each recorded owner of the taken slices once, none of this pool's, and forgets those it fenced", async () => {
    const owners = createMemorySliceOwners(new Map());
    await owners.enter('s1', 'tx.dead.0');
    await owners.enter('s2', 'tx.dead.0');
    await owners.enter('s2', 'tx.older.1');
    await owners.enter('s3', 'tx.mine.0');
    await owners.enter('s3', 'tx.dead.0');
    const fenced: string[] = [];
    const fencing = createSliceFencing({
      kafka: fencingKafka(fenced),
      transactionTimeoutMs: 20_000,
      retry: { initialRetryTime: 10, retries: 0, maxRetryTime: 10 },
      // This process's pool has tx.mine.0 (whatever the slice): never fenced by its own sweep.
      pool: { find: (id) => (id === 'tx.mine.0' ? { alive: true, hasSlice: false } : undefined) },
      owners,
      kafkaError: (e) => (e instanceof Error ? e : new Error(String(e))),
    });
    expect((await fencing.fenceTaken(['s1', 's2', 's3', 'none'])).sort()).toEqual([
      'tx.dead.0',
      'tx.older.1',
    ]);
    expect(fenced.sort()).toEqual(['tx.dead.0', 'tx.older.1']);
    expect(fencing.fences()).toBe(2);
    expect(await owners.list('s1')).toEqual([]);
    expect(await owners.list('s2')).toEqual([]);
    expect(await owners.list('s3')).toEqual(['tx.mine.0']);
    // Nothing left to fence: a second sweep of the same slices sends nothing.
    expect(await fencing.fenceTaken(['s1', 's2', 's3'])).toEqual([]);
    expect(fenced).toHaveLength(2);
  });
});

describe('fenceWriter', () => {
  it('never fences a producer this pool holds now, initialised; fences a recorded writer it does not hold', async () => {
    const owners = createMemorySliceOwners(new Map());
    // The slice's page was written under tx.m5.0 by a process that died; this process holds tx.m5.0 now and has a
    // session of the slice (the crash test's self-fence, 2026-11-29).
    await owners.enter('s1', 'tx.m5.0');
    await owners.enter('s2', 'tx.dead.0');
    const fenced: string[] = [];
    const fencing = createSliceFencing({
      kafka: fencingKafka(fenced),
      transactionTimeoutMs: 20_000,
      retry: { initialRetryTime: 10, retries: 0, maxRetryTime: 10 },
      pool: { find: (id) => (id === 'tx.m5.0' ? { alive: true, hasSlice: true } : undefined) },
      owners,
      kafkaError: (e) => (e instanceof Error ? e : new Error(String(e))),
    });
    await fencing.fenceWriter('s1', 'tx.m5.0');
    expect(fenced).toEqual([]);
    expect(await owners.list('s1')).toEqual(['tx.m5.0']);
    await fencing.fenceWriter('s2', 'tx.dead.0');
    await fencing.fenceWriter('s2', 'tx.unrecorded.0');
    expect(fenced).toEqual(['tx.dead.0']);
    expect(await owners.list('s2')).toEqual([]);
  });
});

describe('selfFences', () => {
  it('counts and tells each fence of a live producer of this pool, and none of the others', async () => {
    const owners = createMemorySliceOwners(new Map());
    // tx.m1.0 is this pool's, alive, with a session of s1 (an older session of this process): fencing it is a self-fence.
    await owners.enter('s1', 'tx.m1.0');
    await owners.enter('s1', 'tx.dead.0');
    // tx.m1.1 is this pool's, alive, no session of s2: skipped, not fenced, not counted.
    await owners.enter('s2', 'tx.m1.1');
    const fenced: string[] = [];
    const told: [string, string][] = [];
    const fencing = createSliceFencing({
      kafka: fencingKafka(fenced),
      transactionTimeoutMs: 20_000,
      retry: { initialRetryTime: 10, retries: 0, maxRetryTime: 10 },
      pool: {
        find: (id, slice) =>
          id === 'tx.m1.0'
            ? { alive: true, hasSlice: slice === 's1' }
            : id === 'tx.m1.1'
              ? { alive: true, hasSlice: false }
              : undefined,
      },
      owners,
      kafkaError: (e) => (e instanceof Error ? e : new Error(String(e))),
      onSelfFence: (id, slice) => told.push([id, slice]),
    });
    await fencing.fence('s2');
    expect(fencing.selfFences()).toBe(0);
    await fencing.fence('s1');
    expect(fenced.sort()).toEqual(['tx.dead.0', 'tx.m1.0']);
    expect(fencing.selfFences()).toBe(1);
    expect(told).toEqual([['tx.m1.0', 's1']]);
  });
});
