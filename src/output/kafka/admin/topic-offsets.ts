/**
 * Where topics and consumer groups stand: a topic's partition offsets and a group's committed offsets, through
 * one kafkajs admin connection (for callers that poll, like the warehouse's wait for a sink connector).
 */
import { createKafkaClient } from '../kafka-client.js';
import { resolveKafkaOptions } from '../kafka-options.js';

export interface PartitionOffsets {
  partition: number;
  /** First offset still in the log. */
  low: number;
  /** The end: the offset the next message gets. */
  high: number;
}

export interface TopicOffsets {
  /** Connects the admin client; call once before the rest. */
  connect(): Promise<void>;
  /** Whether `topic` exists. */
  hasTopic(topic: string): Promise<boolean>;
  /** Low and high offsets of every partition of `topic`. */
  partitionOffsets(topic: string): Promise<PartitionOffsets[]>;
  /** The committed offset of `groupId` on each partition of `topic` (-1 when none was committed). */
  committedOffsets(groupId: string, topic: string): Promise<Map<number, number>>;
  disconnect(): Promise<void>;
}

export interface TopicOffsetsOptions {
  brokers: readonly string[];
  /** @default 'gamedata-offsets' */
  clientId?: string;
}

/** An admin view of topic and group offsets. */
export function createTopicOffsets(options: TopicOffsetsOptions): TopicOffsets {
  const admin = createKafkaClient(
    resolveKafkaOptions({ clientId: options.clientId ?? 'gamedata-offsets', brokers: options.brokers }),
  ).admin();
  return {
    connect: () => admin.connect(),
    disconnect: () => admin.disconnect(),
    async hasTopic(topic) {
      return (await admin.listTopics()).includes(topic);
    },
    async partitionOffsets(topic) {
      return (await admin.fetchTopicOffsets(topic)).map((p) => ({
        partition: p.partition,
        low: Number(p.low),
        high: Number(p.high),
      }));
    },
    async committedOffsets(groupId, topic) {
      const [group] = await admin.fetchOffsets({ groupId, topics: [topic] });
      return new Map((group?.partitions ?? []).map((p) => [p.partition, Number(p.offset)]));
    },
  };
}
