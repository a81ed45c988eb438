// Deadlines on Kafka's transaction control calls (issue 47): a call that hangs ends in ControlCallTimeoutError, the
// fence that hangs frees the fences behind it, and a member whose InitProducerId hangs is replaced.
import type { Kafka } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { ControlCallTimeoutError, PoolCommitError } from '../../../../../src/foundation/errors/index.js';
import {
  controlDeadlineMs,
  withDeadline,
} from '../../../../../src/output/kafka/transactions/control-deadline.js';
import { createProducerPool } from '../../../../../src/output/kafka/transactions/producer-pool.js';
import { createSliceFencing } from '../../../../../src/output/kafka/transactions/slice-fencing.js';
import { createMemorySliceOwners } from '../../../../../src/output/kafka/transactions/slice-owners.js';

const never = new Promise<never>(() => undefined);

/** A Kafka whose producers connect, and whose InitProducerId (`transaction()`) hangs for `hangs` ids. */
function kafka(hangs: Set<string>, made: string[]): Kafka {
  return {
    producer: ({ transactionalId }: { transactionalId: string }) => ({
      connect: () => Promise.resolve(),
      transaction: () => {
        made.push(transactionalId);
        return hangs.has(transactionalId) ? never : Promise.resolve({ abort: () => Promise.resolve() });
      },
      disconnect: () => Promise.resolve(),
    }),
  } as unknown as Kafka;
}

describe('control call deadlines', () => {
  it('withDeadline: the call’s result within the deadline, else ControlCallTimeoutError (retriable, naming it)', async () => {
    await expect(withDeadline('x', 1_000, Promise.resolve(7))).resolves.toBe(7);
    const late = withDeadline('committing a transaction of tx.m0.0', 20, never);
    await expect(late).rejects.toThrow(ControlCallTimeoutError);
    await expect(late).rejects.toMatchObject({ retriable: true, service: 'kafka' });
    await expect(late).rejects.toThrow(/committing a transaction of tx\.m0\.0 did not end within 20 ms/);
    expect(controlDeadlineMs(20_000)).toBe(30_000);
  });

  it('a fence that hangs fails after its deadline, and the next fence goes out', async () => {
    const owners = createMemorySliceOwners(new Map());
    await owners.enter('s', 'tx.stuck.0');
    await owners.enter('s', 'tx.dead.0');
    const made: string[] = [];
    const fencing = createSliceFencing({
      kafka: kafka(new Set(['tx.stuck.0']), made),
      transactionTimeoutMs: 40,
      retry: { initialRetryTime: 10, retries: 100, maxRetryTime: 10 },
      pool: { find: () => undefined },
      owners,
      kafkaError: (e) => (e instanceof Error ? e : new Error(String(e))),
    });
    const started = Date.now();
    await expect(fencing.fenceWriter('s', 'tx.stuck.0')).rejects.toThrow(ControlCallTimeoutError);
    expect(Date.now() - started).toBeLessThan(1_000);
    await fencing.fenceWriter('s', 'tx.dead.0');
    expect(made).toEqual(['tx.stuck.0', 'tx.dead.0']);
    expect(await owners.list('s')).toEqual(['tx.stuck.0']); // not fenced: still recorded, fenced again next time
  });

  it('a member whose InitProducerId hangs fails ready() after its deadline and is replaced: a new generation', async () => {
    const made: string[] = [];
    const pool = createProducerPool({
      kafka: kafka(new Set(['tx.m0.0']), made),
      transactionalId: (i) => `tx.m0.${i}`,
      size: 1,
      transactionTimeoutMs: 40,
      retry: { retries: 0, initialRetryTime: 10, maxRetryTime: 10 },
      requestTimeoutMs: 1_000,
      maxBatchBytes: 1_000_000,
      partitionsOf: () => Promise.resolve(1),
      partitionFor: () => 0,
      lingerMs: 0,
      lingerCommits: 1,
      transactionPartitions: { announce: () => undefined, forget: () => undefined } as never,
      toError: (e) => (e instanceof Error ? e : new Error(String(e))),
      isFenced: () => false,
    });
    const first = pool.bind('s');
    const failure = await pool.ready(first).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(PoolCommitError);
    expect((failure as PoolCommitError).error).toBeInstanceOf(ControlCallTimeoutError);
    expect(pool.alive(first)).toBe(false);
    pool.unbind(first, 's');
    expect(pool.bind('s').generation).toBe(first.generation + 1);
    await pool.close();
  });
});
