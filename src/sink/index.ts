/**
 * Sink: our small producer interface over kafkajs (`createKafkaSink`), the transactional slice publisher of
 * exactly-once delivery (`createTransactionalSlicePublisher`), topic creation and deletion, and reading a
 * topic back (`readTopic`). The only folder that imports kafkajs. Topic names live in `models/topic-names.ts`; the
 * publish path (encode -> produce, dead letters) in `publish/`.
 */
export { createKafkaSink, DEFAULT_KAFKA_SINK_OPTIONS } from './kafka-sink.js';
export type { KafkaSink, KafkaSinkOptions, SinkMessage, SinkLogger } from './kafka-sink.js';
export {
  createTopics,
  deleteTopics,
  planTopics,
  DEFAULT_CLEANUP_POLICY,
  DEFAULT_CREATE_TOPICS_OPTIONS,
} from './create-topics.js';
export type { CleanupPolicy, CreateTopicsOptions, CreateTopicsResult, TopicSpec } from './create-topics.js';
export { checkpointTopicName, CHECKPOINT_MIN_COMPACTION_LAG_MS } from './create-topics.js';
export {
  createTransactionalSlicePublisher,
  isFencingError,
  transactionalIdFor,
  DEFAULT_TRANSACTIONAL_SLICE_PUBLISHER_OPTIONS,
} from './transactional-slice-publisher.js';
export { createMemorySliceOwners } from './slice-owners.js';
export type { SliceOwners } from './slice-owners.js';
export type {
  TransactionalSlicePublisher,
  TransactionalSlicePublisherOptions,
  TransactionalPage,
  SliceSession,
  SliceCheckpoint,
  OpenSliceOptions,
} from './transactional-slice-publisher.js';
export { readTopic, recordOffsets } from './read-topic.js';
export type { TopicMessage, ReadTopicOptions, ReadTopicStats, RecordOffsetsOptions } from './read-topic.js';
export { createTopicOffsets } from './topic-offsets.js';
export type { TopicOffsets, TopicOffsetsOptions, PartitionOffsets } from './topic-offsets.js';
