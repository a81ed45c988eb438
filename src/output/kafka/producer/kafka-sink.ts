/**
 * `createKafkaSink`: the idempotent producer behind our small interface (`send(topic, messages)` resolves after
 * acks=all). The client comes from `createKafkaClient`, the partitions from `partitioner.ts`, the request form from
 * `wire-format.ts`; the transactional producers of exactly-once delivery are in `../transactions/`.
 */
import type { Admin, Producer } from 'kafkajs';
import { ServiceError } from '../../../foundation/errors/index.js';
import { createKafkaClient } from '../kafka-client.js';
import type { SinkKafkaClient } from '../kafka-client.js';
import { toKafkaError } from '../kafka-error.js';
import { resolveKafkaOptions } from '../kafka-options.js';
import type { KafkaSinkOptions } from '../kafka-options.js';
import { givenPartitioner, partitionForKey } from './partitioner.js';
import { chunkBySize, toWire } from './wire-format.js';
import type { SinkMessage } from './wire-format.js';

export interface KafkaSink {
  /** Connects the producer. @throws ServiceError (retriable) when no broker is reachable. */
  connect(): Promise<void>;
  /**
   * Sends messages to one topic with the idempotent producer and acks=all; resolves only after every message is
   * acknowledged by all in-sync replicas. An empty list resolves at once.
   * @throws ServiceError when Kafka refuses or cannot be reached (`retriable` as kafkajs says).
   */
  send(topic: string, messages: readonly SinkMessage[]): Promise<void>;
  /** Flushes nothing (sends are awaited) and closes the connections. Safe to call twice. */
  disconnect(): Promise<void>;
}

/** Partition counts of topics, each read once through one admin connection made on first use. */
function topicPartitionCounts(kafka: SinkKafkaClient): {
  partitionsOf(topic: string): Promise<number>;
  close(): Promise<void>;
} {
  let admin: Promise<Admin> | undefined;
  const counts = new Map<string, number>();
  return {
    async partitionsOf(topic) {
      const known = counts.get(topic);
      if (known !== undefined) return known;
      admin ??= (async () => {
        const a = kafka.admin();
        await a.connect();
        return a;
      })().catch((error: unknown) => {
        admin = undefined;
        throw error;
      });
      const meta = await (await admin).fetchTopicMetadata({ topics: [topic] });
      const n = meta.topics[0]?.partitions.length ?? 0;
      if (n === 0)
        throw new ServiceError(`topic ${topic} has no partitions (run \`gamedata topics create\`)`, 'kafka', {
          retriable: false,
        });
      counts.set(topic, n);
      return n;
    },
    async close() {
      const a = admin;
      admin = undefined;
      if (a !== undefined) await (await a.catch(() => undefined))?.disconnect();
    },
  };
}

/**
 * Sends one partition's messages in requests under `maxBatchBytes`, one after the other: each resolves after its
 * acks, so the whole call does too.
 */
async function sendPartition(
  p: Producer,
  topic: string,
  partition: number,
  list: readonly SinkMessage[],
  wire: ReturnType<typeof toWire>,
  o: { maxBatchBytes: number; requestTimeoutMs: number },
): Promise<void> {
  for (const chunk of chunkBySize(list, o.maxBatchBytes)) {
    const answers = await p.send({
      topic,
      acks: -1,
      timeout: o.requestTimeoutMs,
      messages: chunk.map((m) => wire(m, partition)),
    });
    // Belt and braces: an answer for the partition is the ack; none means nothing was written.
    if (!answers.some((a) => a.topicName === topic && a.partition === partition))
      throw new ServiceError(
        `Kafka did not acknowledge ${chunk.length} message(s) to ${topic}[${partition}]`,
        'kafka',
        { retriable: true },
      );
  }
}

/**
 * A producer behind our interface: idempotent (no duplicates from its own retries), acks=all, one request in
 * flight (what kafkajs's idempotence requires to keep order).
 * @example
 * const sink = createKafkaSink({ brokers: ['127.0.0.1:19092'] });
 * await sink.connect();
 * await sink.send('gamedata.users', [{ key: user._id, value: bytes, headers: { ... } }]);
 * await sink.disconnect();
 */
export function createKafkaSink(
  options: KafkaSinkOptions,
  seams: { kafka?: SinkKafkaClient } = {},
): KafkaSink {
  const resolved = resolveKafkaOptions(options);
  const kafka: SinkKafkaClient = seams.kafka ?? createKafkaClient(resolved);
  let producer: Producer | undefined;
  let connected = false;
  const partitions = topicPartitionCounts(kafka);
  let keyless = 0;

  return {
    async connect() {
      if (connected) return;
      try {
        producer ??= kafka.producer({
          idempotent: true,
          maxInFlightRequests: 1,
          allowAutoTopicCreation: false,
          // kafkajs refuses an idempotent producer without retries (its sequence numbers protect the retries).
          retry: { retries: Math.max(1, resolved.retries), initialRetryTime: 200, maxRetryTime: 5_000 },
          // Java-compatible murmur2 partitioning: the same key lands where Java/Connect producers would put it.
          createPartitioner: givenPartitioner,
        });
        await producer.connect();
        connected = true;
      } catch (error) {
        throw toKafkaError(error, resolved.brokers, 'connecting the producer');
      }
    },
    async send(topic, messages) {
      if (messages.length === 0) return;
      if (!connected || producer === undefined) throw new ServiceError('send() before connect()', 'kafka');
      const p = producer;
      try {
        // ONE PARTITION PER REQUEST. kafkajs 2.2.4 (sendMessages) remembers which brokers answered a send and, on
        // its internal retry, sends only to leaders that have no answer yet: when a leader stops (a broker's
        // controlled shutdown) and its partition moves to a broker that already answered for another partition,
        // that partition's messages are never sent and `send` still resolves. The caller then marks them seen:
        // records lost (the chaos run's 17 articles). A request with a single partition has a single leader, so a
        // retry always goes to the partition's current leader. Partitions are chosen here, with the producer's
        // own murmur2 rule, so keys land where they always did; order is kept per partition.
        const wire = toWire();
        const n = await partitions.partitionsOf(topic);
        const byPartition = new Map<number, SinkMessage[]>();
        for (const m of messages) {
          const partition = partitionForKey(m.key, n, m.key === null ? keyless++ : 0);
          const list = byPartition.get(partition) ?? [];
          list.push(m);
          byPartition.set(partition, list);
        }
        await Promise.all(
          [...byPartition].map(([partition, list]) =>
            sendPartition(p, topic, partition, list, wire, resolved),
          ),
        );
      } catch (error) {
        throw toKafkaError(error, resolved.brokers, `sending ${messages.length} message(s) to ${topic}`);
      }
    },
    async disconnect() {
      await partitions.close();
      if (producer === undefined) return;
      const p = producer;
      producer = undefined;
      connected = false;
      await p.disconnect();
    },
  };
}
