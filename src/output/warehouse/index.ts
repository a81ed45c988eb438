/**
 * Warehouse: lands the topics in PostgreSQL through Kafka Connect (one JDBC sink connector per resource, the
 * schema created first) and waits for a sink to catch up (offsets read through `output/kafka/`).
 */
export {
  buildSinkConnectorConfig,
  sinkConnectorName,
  connectDlqTopicName,
  warehouseSchemaName,
  toJdbcTarget,
  DEFAULT_SINK_CONNECTOR_OPTIONS,
  JDBC_SINK_CLASS,
  ARRAYS_TO_JSON_CLASS,
  AVRO_CONVERTER_CLASS,
  kafkaClientSecurityConfig,
  connectorSecurityConfig,
  maskConnectorConfig,
  inlineSecretKeys,
} from './sink-connector-config.js';
export {
  CONNECTOR_SECRET_KEYS,
  connectorSecret,
  connectorSecretsProperties,
  escapePropertyValue,
} from './connector-secrets.js';
export type { ConnectorSecretName } from './connector-secrets.js';
export type {
  SinkConnector,
  SinkConnectorOptions,
  ConnectorSecurity,
  JdbcTarget,
} from './sink-connector-config.js';
export { createConnectClient, DEFAULT_CONNECT_CLIENT_OPTIONS } from './connect-client.js';
export type {
  ConnectClient,
  ConnectClientOptions,
  ConnectorInfo,
  ConnectorState,
  ConnectorStatus,
} from './connect-client.js';
export { createSinkConnectors } from './create-sink-connectors.js';
export type { CreateSinkConnectorsOptions, CreatedSinkConnector } from './create-sink-connectors.js';
export { ensureWarehouseSchema } from './ensure-warehouse-schema.js';
export { waitForSink, waitForSinks } from './wait-for-sink.js';
export type { WaitForSinkOptions, WaitForSinksOptions } from './wait-for-sink.js';
export { landInWarehouse, formatWarehouseReport } from './land-in-warehouse.js';
export type { LandInWarehouseOptions, LandInWarehouseReport, LandedTable } from './land-in-warehouse.js';
export { writeSecretsFile } from './write-secrets-file.js';
