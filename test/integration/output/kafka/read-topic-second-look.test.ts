// readTopic looks at the topic's ends a second time when its read is done and reads what lies between the two looks:
// a transaction's commit returns before Kafka writes its markers, so ends taken right after a commit can stop short of
// it (a test that read right after its last commit once got 8 of 12 records). Here a transaction commits while the
// read is under way, after the first look: the read must still deliver its records, once each.
import { afterAll, describe, expect, it } from 'vitest';
import { Kafka, logLevel } from 'kafkajs';
import { createTestServices } from '../../../helpers/services.js';
import { readTopic } from '../../../../src/output/kafka/index.js';

const services = createTestServices('read-topic-second-look');
afterAll(() => services.cleanup());

describe('readTopic on a topic written while it reads', () => {
  it('delivers what committed between its first look at the ends and the end of its read, once each', async () => {
    const topic = `${services.prefix}.second-look`;
    const kafka = new Kafka({
      clientId: 'second-look',
      brokers: [...services.urls.kafkaBrokers],
      logLevel: logLevel.NOTHING,
    });
    const admin = kafka.admin();
    await admin.connect();
    const producer = kafka.producer({
      transactionalId: `${topic}.tx`,
      idempotent: true,
      maxInFlightRequests: 1,
    });
    const commit = async (keys: string[], lsoAtLeast: number): Promise<void> => {
      const tx = await producer.transaction();
      await tx.send({ topic, messages: keys.map((key) => ({ key, value: 'x' })) });
      await tx.commit();
      // EndTxn answers before the markers are written: wait until the last stable offset passed this marker.
      for (let i = 0; i < 100; i++) {
        const [p] = await admin.fetchTopicOffsets(topic);
        if (p !== undefined && Number(p.high) >= lsoAtLeast) return;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`the last stable offset of ${topic} never reached ${lsoAtLeast}`);
    };
    try {
      await admin.createTopics({
        topics: [{ topic, numPartitions: 1, replicationFactor: 1 }],
        waitForLeaders: true,
      });
      await producer.connect();
      await commit(['a1', 'a2'], 3);
      const read: string[] = [];
      let wrote = false;
      const count = await readTopic(
        { brokers: services.urls.kafkaBrokers, topic, idleTimeoutMs: 20_000 },
        async (m) => {
          read.push(m.key?.toString() ?? '');
          if (wrote) return;
          wrote = true;
          await commit(['b1', 'b2'], 6);
        },
      );
      expect(read).toEqual(['a1', 'a2', 'b1', 'b2']);
      expect(count).toBe(4);
      // A read once nothing moves: the same records, the second look adding nothing.
      const again: string[] = [];
      await readTopic({ brokers: services.urls.kafkaBrokers, topic, idleTimeoutMs: 20_000 }, (m) => {
        again.push(m.key?.toString() ?? '');
      });
      expect(again).toEqual(['a1', 'a2', 'b1', 'b2']);
    } finally {
      await producer.disconnect().catch(() => undefined);
      await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
      await admin.disconnect();
    }
  }, 90_000);
});
