/**
 * Sink: our small producer interface over kafkajs (`createKafkaSink`), topic creation and deletion, and reading a
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
export { readTopic } from './read-topic.js';
export type { TopicMessage, ReadTopicOptions } from './read-topic.js';
export { createTopicOffsets } from './topic-offsets.js';
export type { TopicOffsets, TopicOffsetsOptions, PartitionOffsets } from './topic-offsets.js';
