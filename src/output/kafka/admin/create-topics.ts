/**
 * Creates the six resource topics and their `.dlq` topics, and the slices' checkpoint topic `<prefix>.__slices`
 * (exactly-once delivery: compacted, one record per slice). Entities that change (users, parties, elections,
 * articles) are compacted so the latest version per `_id` is kept forever; immutable ones (transactions, donations)
 * and every DLQ use time/size deletion.
 */
import { RESOURCES, DEFAULT_TOPIC_PREFIX, allTopicNames } from '../../../foundation/models/index.js';
import type { ResourceName } from '../../../foundation/models/index.js';
import { ConfigError } from '../../../foundation/errors/index.js';
import { createKafkaClient } from '../kafka-client.js';
import { resolveKafkaOptions } from '../kafka-options.js';
import { toKafkaError } from '../kafka-error.js';
import type { KafkaSinkOptions } from '../kafka-options.js';
import { retryRetriable } from './retry-retriable.js';

export type CleanupPolicy = 'compact' | 'delete';

/** The compacted topic of the slices' checkpoints (exactly-once delivery), `<prefix>.__slices`. */
export function checkpointTopicName(prefix: string): string {
  return `${prefix}.__slices`;
}

/**
 * `min.compaction.lag.ms` of the checkpoint topic: a recovery read starts at a saved offset and must find the
 * slice's record there or later, so the cleaner leaves records alone for this long (4 h, far above a slice's life).
 */
export const CHECKPOINT_MIN_COMPACTION_LAG_MS = 4 * 3_600_000;

export interface CreateTopicsOptions extends KafkaSinkOptions {
  /** Topic prefix. @default 'gamedata' */
  topicPrefix?: string;
  /** Partitions per topic (DLQs included). @default 3 */
  partitions?: number;
  /**
   * Replication factor. `createTopics` without one uses the cluster's: min(3, brokers) ({@link clusterReplication}).
   * @default 1 (planTopics), the cluster's (createTopics)
   */
  replicationFactor?: number;
  /**
   * Cleanup policy per resource topic (DLQs always `delete`).
   * @default { users: 'compact', parties: 'compact', elections: 'compact', articles: 'compact', transactions: 'delete', donations: 'delete' }
   */
  cleanupPolicy?: Partial<Record<ResourceName, CleanupPolicy>>;
  /** `max.message.bytes` of the resource topics (the encoder's limit is 1 000 000 + key and headers). @default 2_097_152 */
  maxMessageBytes?: number;
  /** `max.message.bytes` of the DLQ topics, which hold the original JSON of rejected, possibly huge, records. @default 10_485_760 */
  dlqMaxMessageBytes?: number;
}

export const DEFAULT_CLEANUP_POLICY: Readonly<Record<ResourceName, CleanupPolicy>> = {
  users: 'compact',
  parties: 'compact',
  elections: 'compact',
  articles: 'compact',
  transactions: 'delete',
  donations: 'delete',
};

export const DEFAULT_CREATE_TOPICS_OPTIONS = {
  topicPrefix: DEFAULT_TOPIC_PREFIX,
  partitions: 3,
  replicationFactor: 1,
  maxMessageBytes: 2_097_152,
  dlqMaxMessageBytes: 10_485_760,
} as const;

/** The replication of a cluster of `brokers` brokers: min(3, brokers). */
export function replicationForBrokers(brokers: number): number {
  return Math.max(1, Math.min(3, brokers));
}

/**
 * `min.insync.replicas` of a topic replicated `replicationFactor` times: 2 from 3 replicas up (one broker may be
 * down and `acks=all` writes still succeed, two copies always hold them), else the broker default (1).
 */
export function minInsyncReplicasFor(replicationFactor: number): number | undefined {
  return replicationFactor >= 3 ? 2 : undefined;
}

export interface TopicSpec {
  topic: string;
  partitions: number;
  replicationFactor: number;
  config: Record<string, string>;
}

export interface CreateTopicsResult {
  created: string[];
  /** Topics that already existed (left as they are). */
  existing: string[];
}

/** The topics `createTopics` would create, with their configs (pure; the CLI prints it). */
export function planTopics(options: Omit<CreateTopicsOptions, keyof KafkaSinkOptions> = {}): TopicSpec[] {
  const o = { ...DEFAULT_CREATE_TOPICS_OPTIONS, ...options };
  for (const key of ['partitions', 'replicationFactor', 'maxMessageBytes', 'dlqMaxMessageBytes'] as const) {
    if (!Number.isInteger(o[key]) || o[key] < 1)
      throw new ConfigError(`${key} must be an integer >= 1, got ${String(o[key])}`);
  }
  const policy = { ...DEFAULT_CLEANUP_POLICY, ...options.cleanupPolicy };
  for (const r of RESOURCES) {
    if (policy[r] !== 'compact' && policy[r] !== 'delete') {
      throw new ConfigError(
        `cleanupPolicy.${r} must be "compact" or "delete", got ${JSON.stringify(policy[r])}`,
      );
    }
  }
  const checkpoints: TopicSpec = {
    topic: checkpointTopicName(o.topicPrefix),
    partitions: o.partitions,
    replicationFactor: o.replicationFactor,
    config: {
      'cleanup.policy': 'compact',
      'min.compaction.lag.ms': String(CHECKPOINT_MIN_COMPACTION_LAG_MS),
    },
  };
  const resources = allTopicNames(o.topicPrefix).flatMap(({ resource, topic, dlq }) => [
    {
      topic,
      partitions: o.partitions,
      replicationFactor: o.replicationFactor,
      config: { 'cleanup.policy': policy[resource], 'max.message.bytes': String(o.maxMessageBytes) },
    },
    {
      topic: dlq,
      partitions: o.partitions,
      replicationFactor: o.replicationFactor,
      config: { 'cleanup.policy': 'delete', 'max.message.bytes': String(o.dlqMaxMessageBytes) },
    },
  ]);
  const minIsr = minInsyncReplicasFor(o.replicationFactor);
  const specs: TopicSpec[] = [...resources, checkpoints];
  if (minIsr !== undefined) for (const s of specs) s.config['min.insync.replicas'] = String(minIsr);
  return specs;
}

/** How many brokers the cluster has, and the replication topics get by default there (min(3, brokers)). */
export async function clusterReplication(
  options: KafkaSinkOptions,
): Promise<{ brokers: number; replicationFactor: number }> {
  const resolved = resolveKafkaOptions(options);
  const admin = createKafkaClient(resolved).admin();
  try {
    await admin.connect();
    const brokers = (await admin.describeCluster()).brokers.length;
    return { brokers, replicationFactor: replicationForBrokers(brokers) };
  } catch (error) {
    throw toKafkaError(error, resolved.brokers, 'describing the cluster');
  } finally {
    await admin.disconnect();
  }
}

/**
 * Creates every missing topic of {@link planTopics}; existing topics are reported and left untouched. Without a
 * replication factor, topics get the cluster's: min(3, brokers), with `min.insync.replicas=2` from 3 replicas up.
 * @throws ServiceError when Kafka is unreachable or refuses (e.g. replication factor above the broker count).
 */
export async function createTopics(options: CreateTopicsOptions): Promise<CreateTopicsResult> {
  const resolved = resolveKafkaOptions(options);
  const admin = createKafkaClient(resolved).admin();
  try {
    await admin.connect();
    const replicationFactor =
      options.replicationFactor ?? replicationForBrokers((await admin.describeCluster()).brokers.length);
    const specs = planTopics({ ...options, replicationFactor });
    const present = new Set(await admin.listTopics());
    const missing = specs.filter((s) => !present.has(s.topic));
    if (missing.length > 0) {
      // A busy broker may answer the leader wait with "does not host this topic-partition" for a topic it has just
      // created: retried, creating only what is still missing (so a retry never fails as "already exists").
      await retryRetriable(async () => {
        const now = new Set(await admin.listTopics());
        const left = missing.filter((s) => !now.has(s.topic));
        if (left.length === 0) {
          // Created by an earlier attempt: wait until every one has its leaders.
          await admin.fetchTopicMetadata({ topics: missing.map((s) => s.topic) });
          return;
        }
        await admin.createTopics({
          waitForLeaders: true,
          topics: left.map((s) => ({
            topic: s.topic,
            numPartitions: s.partitions,
            replicationFactor: s.replicationFactor,
            configEntries: Object.entries(s.config).map(([name, value]) => ({ name, value })),
          })),
        });
      });
    }
    return {
      created: missing.map((s) => s.topic),
      existing: specs.filter((s) => present.has(s.topic)).map((s) => s.topic),
    };
  } catch (error) {
    throw toKafkaError(error, resolved.brokers, 'creating topics');
  } finally {
    await admin.disconnect();
  }
}

/** Deletes every topic of a prefix that exists (tests with a throwaway prefix). */
export async function deleteTopics(options: KafkaSinkOptions & { topicPrefix: string }): Promise<void> {
  const resolved = resolveKafkaOptions(options);
  const admin = createKafkaClient(resolved).admin();
  try {
    await admin.connect();
    const present = new Set(await admin.listTopics());
    const topics = [
      ...allTopicNames(options.topicPrefix).flatMap((t) => [t.topic, t.dlq]),
      checkpointTopicName(options.topicPrefix),
    ].filter((t) => present.has(t));
    // kafkajs' 5 s default runs out on a busy cluster deleting dozens of partitions (the topics then stay).
    if (topics.length > 0) await admin.deleteTopics({ topics, timeout: 30_000 });
  } catch (error) {
    throw toKafkaError(error, resolved.brokers, 'deleting topics');
  } finally {
    await admin.disconnect();
  }
}
