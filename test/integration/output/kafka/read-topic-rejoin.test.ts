// readTopic reads through a throw-away consumer group. When that group is joined again mid-read (a rebalance), kafkajs
// starts each partition again from the group's committed offset: a medium chaos run's verification read 648 k of
// 1 M transactions twice and reported them as duplicates (with the fix the same run counted 1 rejoin and 7 259
// messages fetched again, all skipped). Here a second member joins the reader's group mid-read and leaves again (two
// rebalances, on the real broker): every message must arrive exactly once, and the rejoin is counted. The reader as
// it was delivered 14 000 messages of 9 000 here.
import { afterAll, describe, expect, it } from 'vitest';
import { Kafka, logLevel, type Consumer } from 'kafkajs';
import { createTestServices } from '../../../helpers/services.js';
import { readTopic, type ReadTopicStats } from '../../../../src/output/kafka/index.js';

const services = createTestServices('read-topic-rejoin');
afterAll(() => services.cleanup());

const PARTITIONS = 3;
const PER_PARTITION = 3_000;
// 1 kB values: a partition takes several fetches (kafkajs fetches up to 1 MB per partition), so one is mid-way at the rejoin.
const VALUE = 'x'.repeat(1_000);

describe('readTopic when its group is joined again mid-read', () => {
  it('delivers every message once and counts the rejoin', async () => {
    const topic = `${services.prefix}.rejoin`;
    const kafka = new Kafka({
      clientId: 'rejoin',
      brokers: [...services.urls.kafkaBrokers],
      logLevel: logLevel.NOTHING,
    });
    const admin = kafka.admin();
    const producer = kafka.producer();
    let intruder: Consumer | undefined;
    let intruderJoined = false;
    try {
      await admin.connect();
      await admin.createTopics({
        topics: [{ topic, numPartitions: PARTITIONS, replicationFactor: 1 }],
        waitForLeaders: true,
      });
      await producer.connect();
      for (let p = 0; p < PARTITIONS; p++)
        for (let i = 0; i < PER_PARTITION; i += 500)
          await producer.send({
            topic,
            messages: Array.from({ length: 500 }, (_, j) => ({
              partition: p,
              key: `${p}-${i + j}`,
              value: VALUE,
            })),
          });

      // The reader's group is the one verify group that was not there before (other runs may have left theirs).
      const before = new Set((await admin.listGroups()).groups.map((g) => g.groupId));
      const seen = new Map<string, number>();
      const stats: ReadTopicStats = { rejoins: 0, refetched: 0 };
      let intrusion: Promise<void> | undefined;
      const count = await readTopic(
        { brokers: services.urls.kafkaBrokers, topic, idleTimeoutMs: 60_000, stats },
        async (m) => {
          const key = `${m.partition}@${m.offset}`;
          seen.set(key, (seen.get(key) ?? 0) + 1);
          // Slow enough that the read is still going when the second member comes and goes.
          if (seen.size % 20 === 0) await new Promise((r) => setTimeout(r, 20));
          if (seen.size === 500 && intrusion === undefined) {
            intrusion = (async () => {
              const groups = await admin.listGroups();
              const group = groups.groups.find(
                (g) => g.groupId.startsWith('gamedata-verify-') && !before.has(g.groupId),
              );
              if (group === undefined) throw new Error('the reader group is not listed');
              const member = kafka.consumer({ groupId: group.groupId, sessionTimeout: 10_000 });
              intruder = member;
              await member.connect();
              await member.subscribe({ topic, fromBeginning: true });
              // It takes partitions in the rebalance, commits nothing, and leaves: a second rebalance.
              member.on(member.events.GROUP_JOIN, () => {
                intruderJoined = true;
                setTimeout(() => void member.disconnect(), 1_000);
              });
              await member.run({ autoCommit: false, eachBatch: async () => {} });
            })();
          }
        },
      );
      await intrusion;

      expect(intruderJoined).toBe(true);
      expect(stats.rejoins).toBeGreaterThan(0);
      expect(count).toBe(PARTITIONS * PER_PARTITION);
      expect(seen.size).toBe(PARTITIONS * PER_PARTITION);
      expect([...seen.values()].filter((n) => n > 1)).toEqual([]);
    } finally {
      await intruder?.disconnect().catch(() => undefined);
      await producer.disconnect();
      await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
      await admin.disconnect();
    }
  });
});
