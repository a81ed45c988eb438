// The recovery read of a slice's checkpoint when ANOTHER slice's transaction is open on the same checkpoint
// partition (a worker killed mid-commit leaves one until its slice is taken again or the broker times it out). The
// partition's last stable offset then stops at that transaction's first record, below this slice's newest committed
// checkpoint: a read up to the LSO recovered an older checkpoint, and the slice re-published committed pages (the
// duplicates of the chaos test). The read must wait for the open transaction and return the newest checkpoint.
import { afterAll, describe, expect, it } from 'vitest';
import { Kafka, logLevel } from 'kafkajs';
import { createTestServices } from '../../../helpers/services.js';
import {
  createTopics,
  createTransactionalSlicePublisher,
  checkpointTopicName,
} from '../../../../src/output/kafka/index.js';

const services = createTestServices('txn-recovery-lso');
afterAll(() => services.cleanup());

describe('checkpoint recovery with another transaction open on the checkpoint partition', () => {
  it('waits for the open transaction and recovers the newest committed checkpoint, not the one below the LSO', async () => {
    const prefix = services.prefix;
    await createTopics({ brokers: services.urls.kafkaBrokers, topicPrefix: prefix, partitions: 1 });
    const checkpointTopic = checkpointTopicName(prefix);
    const topic = `${prefix}.donations`;
    const options = {
      brokers: services.urls.kafkaBrokers,
      checkpointTopic,
      transactionalIdPrefix: `${prefix}.tx`,
    };
    const owner = createTransactionalSlicePublisher(options);
    const next = createTransactionalSlicePublisher(options);
    const kafka = new Kafka({
      clientId: 'other-slice',
      brokers: [...services.urls.kafkaBrokers],
      logLevel: logLevel.NOTHING,
    });
    const other = kafka.producer({
      transactionalId: `${prefix}.tx.other-slice`,
      idempotent: true,
      maxInFlightRequests: 1,
    });
    await other.connect();
    try {
      const slice = 'run-1/slice-a';
      const session = await owner.openSlice<{ cursor: string }>(slice);
      const readFrom = await owner.lastStableOffset(slice);
      session.addPage({
        topic,
        records: [{ key: 'r0', value: 'v0' }],
        dlqTopic: `${topic}.dlq`,
        deadLetters: [],
      });
      const c0 = await session.commit({ cursor: 'c0' });
      expect(c0.seq).toBe(0);

      // Another slice's transaction opens on the (single) checkpoint partition and stays open.
      const open = await other.transaction();
      await open.send({
        topic: checkpointTopic,
        messages: [{ key: 'run-1/slice-b', value: '{"seq":0,"state":{}}' }],
      });

      // The owner commits its next page after it: its newest checkpoint lies above the partition's LSO.
      session.addPage({
        topic,
        records: [{ key: 'r1', value: 'v1' }],
        dlqTopic: `${topic}.dlq`,
        deadLetters: [],
      });
      const c1 = await session.commit({ cursor: 'c1' });
      expect(c1.seq).toBe(1);
      expect(BigInt(await owner.lastStableOffset(slice))).toBeLessThanOrEqual(BigInt(c1.offset));
      await session.close(); // the owner dies

      // The next owner takes the slice while the other transaction is still open; it ends 1.5 s later.
      let ended = false;
      const ending = (async () => {
        await new Promise((r) => setTimeout(r, 1_500));
        ended = true;
        await open.commit();
      })();
      const taken = await next.openSlice<{ cursor: string }>(slice, {
        readFrom: () => Promise.resolve(readFrom),
      });
      await ending;
      expect(taken.recovered).toMatchObject({ seq: 1, state: { cursor: 'c1' }, offset: c1.offset });
      expect(taken.nextSeq).toBe(2);
      // It could only know that once the other transaction had ended.
      expect(ended).toBe(true);
      await taken.close();

      // A read from the newest checkpoint itself (readFrom = its offset, above the LSO while the transaction was open)
      // finds it too.
      expect(await next.readCommitted(slice, c1.offset)).toMatchObject({ seq: 1, state: { cursor: 'c1' } });
    } finally {
      await other.disconnect().catch(() => undefined);
      await owner.close();
      await next.close();
    }
  }, 90_000);
});
