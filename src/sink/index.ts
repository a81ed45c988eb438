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
export { createPagePublisher } from './publish-page.js';
export type {
  PagePublisher,
  PagePublisherOptions,
  PublishPageInput,
  PublishPageResult,
  DeadLetteredRecord,
} from './publish-page.js';
export {
  topicName,
  dlqTopicName,
  valueSubjectName,
  allTopicNames,
  DEFAULT_TOPIC_PREFIX,
} from './topic-names.js';
export { readServiceEnv } from './service-env.js';
export type { ServiceEnv } from './service-env.js';
