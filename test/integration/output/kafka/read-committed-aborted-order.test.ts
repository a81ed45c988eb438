// readTopic (verify, the warehouse's waitForSink) and the checkpoint recovery read are read_committed kafkajs
// consumers. On the real broker: transaction B begins, A begins, A aborts, then B aborts, then C commits. Kafka lists
// the fetch's aborted transactions in abort order (A, B); kafkajs 2.2.4 alone returned B's records written before A
// began (the chaos run's false duplicates). Kafka's own consumer reads only C's; so must ours.
import { afterAll, describe, expect, it } from 'vitest';
import { Kafka, logLevel } from 'kafkajs';
import { createTestServices } from '../../../helpers/services.js';
import { readTopic } from '../../../../src/output/kafka/index.js';

const services = createTestServices('read-committed-order');
afterAll(() => services.cleanup());

describe('read_committed readers on interleaved aborted transactions', () => {
  it('read none of the aborted records, whatever order the transactions were aborted in', async () => {
    const topic = `${services.prefix}.interleaved`;
    const kafka = new Kafka({
      clientId: 'interleave',
      brokers: [...services.urls.kafkaBrokers],
      logLevel: logLevel.NOTHING,
    });
    const admin = kafka.admin();
    await admin.connect();
    const producers = ['a', 'b', 'c'].map((n) =>
      kafka.producer({ transactionalId: `${topic}.${n}`, idempotent: true, maxInFlightRequests: 1 }),
    );
    try {
      await admin.createTopics({
        topics: [{ topic, numPartitions: 1, replicationFactor: 1 }],
        waitForLeaders: true,
      });
      const [a, b, c] = producers as [(typeof producers)[0], (typeof producers)[0], (typeof producers)[0]];
      await Promise.all(producers.map((p) => p.connect()));
      const tb = await b.transaction();
      await tb.send({
        topic,
        messages: [
          { key: 'b1', value: 'x' },
          { key: 'b2', value: 'x' },
        ],
      });
      const ta = await a.transaction();
      await ta.send({ topic, messages: [{ key: 'a1', value: 'x' }] });
      await tb.send({ topic, messages: [{ key: 'b3', value: 'x' }] });
      await ta.abort();
      await tb.abort();
      const tc = await c.transaction();
      await tc.send({ topic, messages: [{ key: 'c1', value: 'x' }] });
      await tc.commit();
      // EndTxn answers before the markers are written: wait until the last stable offset passed C's marker.
      for (let i = 0; i < 100; i++) {
        const [p] = await admin.fetchTopicOffsets(topic);
        if (p !== undefined && Number(p.high) >= 8) break;
        await new Promise((r) => setTimeout(r, 100));
      }

      const committed: string[] = [];
      await readTopic({ brokers: services.urls.kafkaBrokers, topic, idleTimeoutMs: 20_000 }, (m) => {
        committed.push(m.key?.toString() ?? '');
      });
      expect(committed).toEqual(['c1']);
      const all: string[] = [];
      await readTopic(
        { brokers: services.urls.kafkaBrokers, topic, idleTimeoutMs: 20_000, readUncommitted: true },
        (m) => {
          all.push(m.key?.toString() ?? '');
        },
      );
      expect(all).toEqual(['b1', 'b2', 'a1', 'b3', 'c1']);
    } finally {
      await Promise.all(producers.map((p) => p.disconnect().catch(() => undefined)));
      await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
      await admin.disconnect();
    }
  }, 90_000);
});
