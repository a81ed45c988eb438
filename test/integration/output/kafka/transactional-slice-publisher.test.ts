// The transactional slice publisher on the real broker: pages, dead letters and the checkpoint commit together; a
// new owner fences the old one (whose commit then fails with SliceFencedError) and recovers the last committed
// checkpoint; a read_committed reader sees every committed record once and nothing of the fenced transaction.
import { afterAll, describe, expect, it } from 'vitest';
import { createTestServices } from '../../../helpers/services.js';
import {
  createTopics,
  createTransactionalSlicePublisher,
  checkpointTopicName,
  readTopic,
  recordOffsets,
  type SinkMessage,
} from '../../../../src/output/kafka/index.js';
import { SliceFencedError } from '../../../../src/foundation/errors/index.js';

const services = createTestServices('txn-publisher');
afterAll(() => services.cleanup());

const page = (tag: string, n: number): SinkMessage[] =>
  Array.from({ length: n }, (_, i) => ({ key: `${tag}-${i}`, value: `v-${tag}-${i}`, headers: { tag } }));

async function keys(topic: string, readUncommitted = false): Promise<string[]> {
  const out: string[] = [];
  await readTopic(
    { brokers: services.urls.kafkaBrokers, topic, idleTimeoutMs: 20_000, readUncommitted },
    (m) => {
      out.push(m.key?.toString() ?? '');
    },
  );
  return out.sort();
}

describe('createTransactionalSlicePublisher on the real broker', () => {
  it('commits pages + dead letters + checkpoint atomically; fencing stops the old owner; recovery is exact', async () => {
    const prefix = services.prefix;
    await createTopics({ brokers: services.urls.kafkaBrokers, topicPrefix: prefix, partitions: 3 });
    const topic = `${prefix}.donations`;
    const dlqTopic = `${topic}.dlq`;
    const options = {
      brokers: services.urls.kafkaBrokers,
      checkpointTopic: checkpointTopicName(prefix),
      transactionalIdPrefix: `${prefix}.tx`,
    };
    const a = createTransactionalSlicePublisher(options);
    const b = createTransactionalSlicePublisher(options);
    try {
      const slice = 'run-1/slice-1';
      const first = await a.openSlice<{ cursor: string }>(slice);
      expect(first.recovered).toBeNull();
      const readFrom = await a.lastStableOffset(slice);
      expect(first.addPage({ topic, records: page('p0', 50), dlqTopic, deadLetters: page('d0', 1) })).toBe(0);
      expect(first.addPage({ topic, records: page('p1', 50), dlqTopic, deadLetters: [] })).toBe(1);
      const c1 = await first.commit({ cursor: 'c1' });
      expect(c1).toMatchObject({ sliceKey: slice, seq: 1, state: { cursor: 'c1' } });
      // A second transaction right after the first (the CONCURRENT_TRANSACTIONS window).
      first.addPage({ topic, records: page('p2', 50), dlqTopic, deadLetters: page('d2', 2) });
      const c2 = await first.commit({ cursor: 'c2' });
      expect(c2.seq).toBe(2);
      // Page 3 is sent but not committed when the new owner takes the slice.
      first.addPage({ topic, records: page('p3', 50), dlqTopic, deadLetters: page('d3', 1) });

      const second = await b.openSlice<{ cursor: string }>(slice, {
        readFrom: () => Promise.resolve(readFrom),
      });
      expect(second.recovered).toMatchObject({ seq: 2, state: { cursor: 'c2' }, offset: c2.offset });
      expect(second.nextSeq).toBe(3);
      // The zombie's commit fails as fenced: nothing of page 3 becomes visible.
      await expect(first.commit({ cursor: 'c3-zombie' })).rejects.toBeInstanceOf(SliceFencedError);
      await first.close();

      second.addPage({ topic, records: page('p3', 50), dlqTopic, deadLetters: page('d3', 1) });
      const c3 = await second.commit({ cursor: 'c3' });
      expect(c3.seq).toBe(3);
      // A commit of state only (no page) keeps the seq.
      const c4 = await second.commit({ cursor: 'end' });
      expect(c4.seq).toBe(3);
      await second.close();

      // Recovery from the saved offset (inclusive) and from the partition start agree.
      expect(await a.readCommitted(slice, c2.offset)).toMatchObject({ seq: 3, state: { cursor: 'end' } });
      expect(await a.readCommitted(slice)).toMatchObject({ seq: 3, state: { cursor: 'end' } });
      expect(await a.readCommitted('run-1/never')).toBeNull();

      const expected = ['p0', 'p1', 'p2', 'p3'].flatMap((t) => page(t, 50).map((m) => m.key)).sort();
      const got = await keys(topic);
      expect(got).toEqual(expected); // each once, the zombie's page 3 not at all
      expect(await keys(dlqTopic)).toEqual(['d0-0', 'd2-0', 'd2-1', 'd3-0']);
      // The zombie's page 3 WAS sent (fenced at its commit), so read_uncommitted sees it twice.
      expect((await keys(topic, true)).filter((k) => k.startsWith('p3-'))).toHaveLength(50);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('fence() without taking the slice stops its owner', async () => {
    const prefix = `${services.prefix}-f`;
    await createTopics({ brokers: services.urls.kafkaBrokers, topicPrefix: prefix, partitions: 1 });
    services.onCleanup(async () => {
      const admin = await services.admin();
      const names = (await admin.listTopics()).filter((t) => t.startsWith(`${prefix}.`));
      if (names.length > 0) await admin.deleteTopics({ topics: names });
    });
    const publisher = createTransactionalSlicePublisher({
      brokers: services.urls.kafkaBrokers,
      checkpointTopic: checkpointTopicName(prefix),
      transactionalIdPrefix: `${prefix}.tx`,
    });
    try {
      const owner = await publisher.openSlice<object>('r/s');
      owner.addPage({
        topic: `${prefix}.users`,
        records: page('u', 3),
        dlqTopic: `${prefix}.users.dlq`,
        deadLetters: [],
      });
      await owner.commit({});
      await publisher.fence('r/s');
      owner.addPage({
        topic: `${prefix}.users`,
        records: page('x', 3),
        dlqTopic: `${prefix}.users.dlq`,
        deadLetters: [],
      });
      await expect(owner.commit({})).rejects.toMatchObject({ name: 'SliceFencedError', retriable: false });
      await owner.close();
      expect(await keys(`${prefix}.users`)).toEqual(['u-0', 'u-1', 'u-2']);
    } finally {
      await publisher.close();
    }
  });

  it('recordOffsets lists the records a read_committed reader gets: markers and aborted records are not among them', async () => {
    const topic = services.name('offsets');
    const admin = await services.admin();
    await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
    const producer = await services.producer({
      transactionalId: services.name('offsets-tx'),
      idempotent: true,
      maxInFlightRequests: 1,
    });
    const committed = await producer.transaction();
    await committed.send({
      topic,
      messages: [
        { key: 'a', value: '1' },
        { key: 'b', value: '2' },
      ],
    });
    await committed.commit(); // offsets 0, 1; marker 2
    const aborted = await producer.transaction();
    await aborted.send({ topic, messages: [{ key: 'x', value: 'no' }] });
    await aborted.abort(); // offset 3; marker 4
    // EndTxn answers once the coordinator has decided; the markers reach the partition a moment later, and until
    // then the last stable offset still stops before the aborted transaction (3). Wait for the markers.
    let end = 0;
    for (let i = 0; i < 100 && end < 5; i += 1) {
      end = Number((await admin.fetchTopicOffsets(topic))[0]?.high);
      if (end < 5) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(end).toBe(5);
    const brokers = services.urls.kafkaBrokers;
    expect(await recordOffsets({ brokers, topic, partition: 0, from: 0, to: end })).toEqual([0, 1]);
    // What a sink that committed offset 2 (after record 1) has left: only markers and an aborted record.
    expect(await recordOffsets({ brokers, topic, partition: 0, from: 2, to: end })).toEqual([]);
    expect(await recordOffsets({ brokers, topic, partition: 0, from: 1, to: 2 })).toEqual([1]);
  });
});
