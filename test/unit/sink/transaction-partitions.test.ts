import { describe, expect, it } from 'vitest';
import {
  addingAnnouncedPartitions,
  announceTransactionPartitions,
  forgetTransactionPartitions,
  transactionPartitionRequestsSaved,
} from '../../../src/sink/transaction-partitions.js';
import type { AddPartitionsArgs } from '../../../src/sink/transaction-partitions.js';

/** A recording stand-in for kafkajs' Broker.addPartitionsToTxn: what reached the broker, sorted. */
function broker(fail = 0) {
  const sent: string[][] = [];
  let failures = fail;
  const original = (args: AddPartitionsArgs): Promise<unknown> => {
    if (failures > 0) {
      failures -= 1;
      return Promise.reject(new Error('CONCURRENT_TRANSACTIONS'));
    }
    sent.push(args.topics.flatMap((t) => t.partitions.map((p) => `${t.topic}#${p}`)).sort());
    return Promise.resolve({ throttleTime: 0, errors: [] });
  };
  return { sent, add: addingAnnouncedPartitions(original) };
}

const ask = (transactionalId: string, producerEpoch: number, topic: string, partition: number) => ({
  transactionalId,
  producerId: 7,
  producerEpoch,
  topics: [{ topic, partitions: [partition] }],
});

describe('AddPartitionsToTxn for every announced partition at once', () => {
  it('adds all announced partitions with the first request and answers the later ones without a round trip', async () => {
    const b = broker();
    announceTransactionPartitions('t1', [
      { topic: 'x', partition: 0 },
      { topic: 'x', partition: 2 },
      { topic: 'ck', partition: 1 },
    ]);
    const before = transactionPartitionRequestsSaved();
    await b.add(ask('t1', 0, 'x', 0));
    await b.add(ask('t1', 0, 'x', 2));
    await b.add(ask('t1', 0, 'ck', 1));
    expect(b.sent).toEqual([['ck#1', 'x#0', 'x#2']]);
    expect(transactionPartitionRequestsSaved() - before).toBe(2);
    forgetTransactionPartitions('t1');
  });

  it('sends a partition that was not announced, and everything for an id without an announcement', async () => {
    const b = broker();
    announceTransactionPartitions('t2', [{ topic: 'x', partition: 0 }]);
    await b.add(ask('t2', 0, 'x', 0));
    await b.add(ask('t2', 0, 'x', 1));
    await b.add(ask('other', 0, 'x', 1));
    await b.add(ask('other', 0, 'x', 1));
    expect(b.sent).toEqual([['x#0'], ['x#1'], ['x#1'], ['x#1']]);
    forgetTransactionPartitions('t2');
  });

  it('a failed request marks nothing added: the retry sends the whole set again', async () => {
    const b = broker(1);
    announceTransactionPartitions('t3', [
      { topic: 'x', partition: 0 },
      { topic: 'x', partition: 1 },
    ]);
    await expect(b.add(ask('t3', 0, 'x', 0))).rejects.toThrow('CONCURRENT_TRANSACTIONS');
    await b.add(ask('t3', 0, 'x', 0));
    await b.add(ask('t3', 0, 'x', 1));
    expect(b.sent).toEqual([['x#0', 'x#1']]);
    forgetTransactionPartitions('t3');
  });

  it('a new producer epoch (the producer re-initialised) adds the partitions again; a forgotten transaction passes through', async () => {
    const b = broker();
    announceTransactionPartitions('t4', [
      { topic: 'x', partition: 0 },
      { topic: 'x', partition: 1 },
    ]);
    await b.add(ask('t4', 0, 'x', 0));
    await b.add(ask('t4', 1, 'x', 1));
    await b.add(ask('t4', 1, 'x', 0));
    forgetTransactionPartitions('t4');
    await b.add(ask('t4', 1, 'x', 0));
    expect(b.sent).toEqual([['x#0', 'x#1'], ['x#0', 'x#1'], ['x#0']]);
  });
});
