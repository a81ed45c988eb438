/**
 * Registers one Iceberg sink per resource, idempotently (the same call twice leaves the same connectors). Checks
 * first that the worker has Iceberg's sink, so a worker without it fails with one clear error.
 */
import { ServiceError } from '../../foundation/errors/index.js';
import type { ResourceName } from '../../foundation/models/index.js';
import type { ConnectClient } from '../warehouse/connect-client.js';
import { inlineSecretKeys } from '../warehouse/sink-connector-config.js';
import {
  ICEBERG_SINK_CLASS,
  buildIcebergSinkConfig,
  type IcebergSinkOptions,
} from './iceberg-sink-config.js';

export interface CreateIcebergConnectorsOptions extends Omit<IcebergSinkOptions, 'resource'> {
  resources: readonly ResourceName[];
  /** The Connect worker that has Iceberg's sink (the stack's lakehouse worker, LAKEHOUSE_CONNECT_URL). */
  connect: ConnectClient;
}

export interface CreatedIcebergConnector {
  resource: ResourceName;
  name: string;
  created: boolean;
  /** `<namespace>.<resource>` */
  table: string;
  inlineSecrets: string[];
}

export async function createIcebergConnectors(
  options: CreateIcebergConnectorsOptions,
): Promise<CreatedIcebergConnector[]> {
  const { connect, resources } = options;
  const connectors = resources.map((resource) => buildIcebergSinkConfig({ ...options, resource }));
  const plugins = new Set(await connect.pluginClasses());
  if (!plugins.has(ICEBERG_SINK_CLASS))
    throw new ServiceError(
      `the Kafka Connect worker lacks ${ICEBERG_SINK_CLASS} (start it with scripts/stack.sh up --with lakehouse; LAKEHOUSE_CONNECT_URL)`,
      'kafka-connect',
    );
  const results: CreatedIcebergConnector[] = [];
  for (const [i, connector] of connectors.entries()) {
    const { created } = await connect.putConnector(connector.name, connector.config);
    results.push({
      resource: resources[i] as ResourceName,
      name: connector.name,
      created,
      table: connector.table,
      inlineSecrets: inlineSecretKeys(connector.config),
    });
  }
  return results;
}
