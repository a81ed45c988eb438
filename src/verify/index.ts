/** Verify: topic content vs the upstream's truth, record by record. */
export { compareRecords, versionKey } from './compare-records.js';
export type { CompareReport } from './compare-records.js';
export { readTopic } from './read-topic.js';
export type { TopicMessage, ReadTopicOptions } from './read-topic.js';
export { verifyResource } from './verify-resource.js';
export type { VerifyResourceOptions, VerifyReport } from './verify-resource.js';
export { collectUpstreamTruth } from './upstream-truth.js';
