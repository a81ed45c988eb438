/**
 * Models: the one catalogue of the upstream's models (fields, inferred types), `checkRecord` with typed issues,
 * the six resources (sort field, dedup mode, list procedure) and the topic/subject names derived from them.
 * A foundation: imports nothing but `errors/`.
 */
export * as models from './catalogue.js';
export { t, defineEntity, defineSubModel, defineValueModel, extendModel, fieldList } from './field.js';
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
export { CALL_PRIORITIES, priorityRank, queuePriority } from './call-priority.js';
export type { CallPriority } from './call-priority.js';
export { SHORT_PAGES } from './short-pages.js';
export type { ShortPages } from './short-pages.js';
export { DEFAULT_CALL_COST, feedPageMs, feedWalkMs } from './call-cost.js';
export type { CallCostModel } from './call-cost.js';
export { COUNTERPARTY_FIELDS, tradeUsers } from './trade-users.js';
export { TRANSACTION_TYPES } from './transaction-types.js';
export type * from './types.js';
