/**
 * Verify: topic content vs the upstream's truth, record by record. Reads topics through `output/kafka/` (`readTopic`);
 * owns the comparison and the upstream truth.
 */
export { compareCounts, compareRecords, versionKey } from './compare-records.js';
export type { CompareReport } from './compare-records.js';
export { verifyResource } from './verify-resource.js';
export type { VerifyResourceOptions, VerifyReport } from './verify-resource.js';
export { collectUpstreamTruth } from './upstream-truth.js';
