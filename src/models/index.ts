export * as models from './catalogue.js';
export { t, defineEntity, defineSubModel, defineValueModel, extendModel } from './field.js';
export type { FieldType, Fields, ModelDef, InferField, InferModel } from './field.js';
export { checkRecord, unknownKeys, parseDateTime } from './check-record.js';
export type { RecordIssue, RecordIssueKind } from './check-record.js';
export {
  topicName,
  dlqTopicName,
  valueSubjectName,
  allTopicNames,
  DEFAULT_TOPIC_PREFIX,
} from './topic-names.js';
export { RESOURCES, RESOURCE_INFO, isResourceName, recordVersion } from './resources.js';
export type { ResourceName, ResourceInfo } from './resources.js';
export type * from './types.js';
