/** Status and telemetry: `status` figures, the live run progress display, and worker metrics + heartbeats. */
export { collectStatus, DEFAULT_COLLECT_STATUS_OPTIONS } from './collect-status.js';
export type { StatusReport, RunSummary, TailStatus, CollectStatusOptions } from './collect-status.js';
export { formatStatus } from './format-status.js';
export { waitForRunWithProgress, progressSample, formatProgressLine } from './run-progress.js';
export type { RunProgressOptions, ProgressSample } from './run-progress.js';
export {
  createWorkerTelemetry,
  readHeartbeats,
  heartbeatKey,
  DEFAULT_WORKER_TELEMETRY_OPTIONS,
} from './worker-telemetry.js';
export type { WorkerTelemetry, WorkerTelemetryOptions, WorkerHeartbeat } from './worker-telemetry.js';
export { createWorkerOperations } from './worker-operations.js';
export type { WorkerOperations, WorkerOperationsOptions } from './worker-operations.js';
export {
  scrapeMetrics,
  sumMetrics,
  recordCountersFromMetrics,
  isScrapeAllowed,
  DEFAULT_SCRAPE_HOSTS,
} from './scrape-metrics.js';
export {
  parsePartition,
  readLatestPartition,
  setPartitionGauges,
  formatPartition,
} from './partition-status.js';
