/**
 * Registers one JDBC sink per resource (the schema first), idempotently: the same call twice leaves the same
 * connectors. Checks first that the worker has the plugins the config names, so a worker without them fails with
 * one clear error instead of a connector that never runs.
 */
import { ServiceError } from '../../foundation/errors/index.js';
import type { ResourceName } from '../../foundation/models/index.js';
import type { ConnectClient } from './connect-client.js';
import { ensureWarehouseSchema } from './ensure-warehouse-schema.js';
import {
  ARRAYS_TO_JSON_CLASS,
  JDBC_SINK_CLASS,
  buildSinkConnectorConfig,
  inlineSecretKeys,
  warehouseSchemaName,
  type SinkConnectorOptions,
} from './sink-connector-config.js';

export interface CreateSinkConnectorsOptions extends Omit<SinkConnectorOptions, 'resource' | 'warehouseUrl'> {
  resources: readonly ResourceName[];
  connect: ConnectClient;
  /** The database as this process reaches it (the schema is created through it). */
  warehouseUrl: string;
  /** The database as Connect reaches it. @default warehouseUrl */
  connectWarehouseUrl?: string | undefined;
  /** Injected for tests. @default ensureWarehouseSchema */
  ensureSchema?: (warehouseUrl: string, schema: string) => Promise<void>;
}

export interface CreatedSinkConnector {
  resource: ResourceName;
  name: string;
  /** false: the connector existed and its config was replaced. */
  created: boolean;
  table: string;
  /** Config keys holding a secret inline (no `secretsFile`): Connect stores them as they are. */
  inlineSecrets: string[];
}

export async function createSinkConnectors(
  options: CreateSinkConnectorsOptions,
): Promise<CreatedSinkConnector[]> {
  const { connect, resources, warehouseUrl } = options;
  const schema = warehouseSchemaName(options.topicPrefix);
  const connectors = resources.map((resource) =>
    buildSinkConnectorConfig({
      ...options,
      resource,
      warehouseUrl: options.connectWarehouseUrl ?? warehouseUrl,
    }),
  );
  const plugins = new Set(await connect.pluginClasses());
  const missing = [JDBC_SINK_CLASS, ARRAYS_TO_JSON_CLASS].filter((c) => !plugins.has(c));
  if (missing.length > 0) {
    throw new ServiceError(
      `the Kafka Connect worker lacks ${missing.join(' and ')} (start it with scripts/stack.sh up --with warehouse)`,
      'kafka-connect',
    );
  }
  await (options.ensureSchema ?? ensureWarehouseSchema)(warehouseUrl, schema);
  const results: CreatedSinkConnector[] = [];
  for (const [i, connector] of connectors.entries()) {
    const resource = resources[i] as ResourceName;
    const { created } = await connect.putConnector(connector.name, connector.config);
    results.push({
      resource,
      name: connector.name,
      created,
      table: `${schema}.${resource}`,
      inlineSecrets: inlineSecretKeys(connector.config),
    });
  }
  return results;
}
