import { describe, expect, it } from 'vitest';
import {
  addingAnnouncedPartitions,
  createTransactionPartitions,
  installTransactionPartitionsAhead,
} from '../../../../../src/output/kafka/kafkajs-patches/transaction-partitions.js';
import type { AddPartitionsArgs } from '../../../../../src/output/kafka/kafkajs-patches/transaction-partitions.js';

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
  const table = createTransactionPartitions();
  return { sent, table, add: addingAnnouncedPartitions(original, table) };
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
    b.table.announce('t1', [
      { topic: 'x', partition: 0 },
      { topic: 'x', partition: 2 },
      { topic: 'ck', partition: 1 },
    ]);
    const before = b.table.saved();
    await b.add(ask('t1', 0, 'x', 0));
    await b.add(ask('t1', 0, 'x', 2));
    await b.add(ask('t1', 0, 'ck', 1));
    expect(b.sent).toEqual([['ck#1', 'x#0', 'x#2']]);
    expect(b.table.saved() - before).toBe(2);
    b.table.forget('t1');
  });

  it('sends a partition that was not announced, and everything for an id without an announcement', async () => {
    const b = broker();
    b.table.announce('t2', [{ topic: 'x', partition: 0 }]);
    await b.add(ask('t2', 0, 'x', 0));
    await b.add(ask('t2', 0, 'x', 1));
    await b.add(ask('other', 0, 'x', 1));
    await b.add(ask('other', 0, 'x', 1));
    expect(b.sent).toEqual([['x#0'], ['x#1'], ['x#1'], ['x#1']]);
    b.table.forget('t2');
  });

  it('a failed request marks nothing added: the retry sends the whole set again', async () => {
    const b = broker(1);
    b.table.announce('t3', [
      { topic: 'x', partition: 0 },
      { topic: 'x', partition: 1 },
    ]);
    await expect(b.add(ask('t3', 0, 'x', 0))).rejects.toThrow('CONCURRENT_TRANSACTIONS');
    await b.add(ask('t3', 0, 'x', 0));
    await b.add(ask('t3', 0, 'x', 1));
    expect(b.sent).toEqual([['x#0', 'x#1']]);
    b.table.forget('t3');
  });

  it('a new producer epoch (the producer re-initialised) adds the partitions again; a forgotten transaction passes through', async () => {
    const b = broker();
    b.table.announce('t4', [
      { topic: 'x', partition: 0 },
      { topic: 'x', partition: 1 },
    ]);
    await b.add(ask('t4', 0, 'x', 0));
    await b.add(ask('t4', 1, 'x', 1));
    await b.add(ask('t4', 1, 'x', 0));
    b.table.forget('t4');
    await b.add(ask('t4', 1, 'x', 0));
    expect(b.sent).toEqual([['x#0', 'x#1'], ['x#0', 'x#1'], ['x#0']]);
  });
});

describe('installTransactionPartitionsAhead', () => {
  it('returns the one table the process-wide patch answers from, the same on every install (the pool is given it)', async () => {
    const first = installTransactionPartitionsAhead();
    expect(installTransactionPartitionsAhead()).toBe(first);
    const { createRequire } = await import('node:module');
    const proto = (
      createRequire(import.meta.url)('kafkajs/src/broker/index.js') as {
        prototype: { addPartitionsToTxn: (this: unknown, args: AddPartitionsArgs) => Promise<unknown> };
      }
    ).prototype;
    // The installed method answers from that table: announced and added once, the next request needs no broker.
    first.announce('t5', [{ topic: 'x', partition: 0 }]);
    const saved = first.saved();
    const fakeBroker = {};
    // A request whose partitions are all added already is answered without touching `this` (no broker needed).
    const table = first as unknown as { get(id: string): { epoch: number | undefined; added: Set<string> } };
    const a = table.get('t5');
    a.epoch = 0;
    a.added.add('x#0');
    await expect(proto.addPartitionsToTxn.call(fakeBroker, ask('t5', 0, 'x', 0))).resolves.toEqual({
      throttleTime: 0,
      errors: [],
    });
    expect(first.saved() - saved).toBe(1);
    first.forget('t5');
  });
});
