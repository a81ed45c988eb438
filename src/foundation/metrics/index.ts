/** Metrics: the Prometheus registry of the pipeline (names after Kafka Connect's source tasks) and `/metrics`. */
export { createPipelineMetrics } from './pipeline-metrics.js';
export type { PipelineMetrics, PipelineMetricsOptions } from './pipeline-metrics.js';
export { startMetricsServer } from './metrics-server.js';
export type { MetricsServer, MetricsServerOptions, Readiness } from './metrics-server.js';
