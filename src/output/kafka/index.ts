/**
 * Sink: everything Kafka, the only folder that imports kafkajs. Its parts:
 * - the client: `kafka-options.ts` (settings, resolved once), `kafka-client.ts` (`createKafkaClient`, the one
 *   `new Kafka`), `kafka-error.ts` (`toKafkaError`), `kafkajs-loader.ts` (the one module loading kafkajs' values);
 * - `producer/`: `createKafkaSink` (idempotent, acks=all), the wire format, the partitioner (murmur2);
 * - `transactions/`: exactly-once delivery, `createTransactionalSlicePublisher` over the producer pool, the
 *   checkpoint reader, the slice owners;
 * - `readers/`: `readTopic`, `recordOffsets`, `readPartitionRange`;
 * - `admin/`: topic creation and deletion, topic/group offsets, the cluster probe, the admin retry;
 * - `kafkajs-patches/`: the six patches of kafkajs 2.2.4, installed as one set by `createKafkaClient`.
 * Topic names live in `models/topic-names.ts`; the publish path (encode -> produce, dead letters) in `publish/`.
 */
export { createKafkaSink } from './producer/kafka-sink.js';
export { DEFAULT_KAFKA_SINK_OPTIONS } from './kafka-options.js';
export type { KafkaSink } from './producer/kafka-sink.js';
export type { KafkaSinkOptions, SinkLogger } from './kafka-options.js';
export type { SinkMessage } from './producer/wire-format.js';
export {
  createTopics,
  deleteTopics,
  planTopics,
  DEFAULT_CLEANUP_POLICY,
  DEFAULT_CREATE_TOPICS_OPTIONS,
} from './admin/create-topics.js';
export type {
  CleanupPolicy,
  CreateTopicsOptions,
  CreateTopicsResult,
  TopicSpec,
} from './admin/create-topics.js';
export { checkpointTopicName, CHECKPOINT_MIN_COMPACTION_LAG_MS } from './admin/create-topics.js';
export { clusterReplication } from './admin/create-topics.js';
export { createClusterProbe } from './admin/cluster-probe.js';
export type { ClusterProbe } from './admin/cluster-probe.js';
export {
  createTransactionalSlicePublisher,
  isFencingError,
  transactionalIdFor,
  DEFAULT_TRANSACTIONAL_SLICE_PUBLISHER_OPTIONS,
} from './transactions/transactional-slice-publisher.js';
export { createMemorySliceOwners } from './transactions/slice-owners.js';
export type { SliceOwners } from './transactions/slice-owners.js';
export type {
  TransactionalSlicePublisher,
  TransactionalSlicePublisherOptions,
  TransactionalPage,
  SliceSession,
  SliceCheckpoint,
  OpenSliceOptions,
} from './transactions/transactional-slice-publisher.js';
export { readTopic, recordOffsets } from './readers/read-topic.js';
export type {
  TopicMessage,
  ReadTopicOptions,
  ReadTopicStats,
  RecordOffsetsOptions,
} from './readers/read-topic.js';
export { createTopicOffsets } from './admin/topic-offsets.js';
export type { TopicOffsets, TopicOffsetsOptions, PartitionOffsets } from './admin/topic-offsets.js';
