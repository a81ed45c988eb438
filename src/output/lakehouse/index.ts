/**
 * Lakehouse: lands the topics in Apache Iceberg tables through Kafka Connect (Iceberg's own sink, one connector per
 * resource, a JDBC catalog) and reads them back through PyIceberg (see docs/consuming.md, "Lakehouse").
 */
export {
  buildIcebergSinkConfig,
  catalogJdbcTarget,
  icebergConnectorName,
  icebergControlTopic,
  icebergNamespace,
  DEFAULT_ICEBERG_SINK_OPTIONS,
  ICEBERG_SINK_CLASS,
  ICEBERG_JDBC_CATALOG_CLASS,
  ICEBERG_HADOOP_FILE_IO_CLASS,
  ICEBERG_PARTITION_BY,
} from './iceberg-sink-config.js';
export type { IcebergSinkOptions, IcebergSinkConnector } from './iceberg-sink-config.js';
export { createIcebergConnectors } from './create-iceberg-connectors.js';
export type { CreateIcebergConnectorsOptions, CreatedIcebergConnector } from './create-iceberg-connectors.js';
export { createIcebergReader } from './iceberg-reader.js';
export type { IcebergReader, IcebergReaderOptions, IcebergSnapshot } from './iceberg-reader.js';
export { landInLakehouse, formatLakehouseReport } from './land-in-lakehouse.js';
export type { LandInLakehouseOptions, LandInLakehouseReport, LakehouseTable } from './land-in-lakehouse.js';
export { restartFailedSinks } from './restart-failed-sinks.js';
