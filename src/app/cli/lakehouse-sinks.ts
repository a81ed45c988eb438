/**
 * `gamedata connect ... --sink iceberg` and `gamedata demo --lakehouse`: Apache Iceberg's Kafka Connect sink, one per
 * resource, on the Connect worker that has it (LAKEHOUSE_CONNECT_URL, default CONNECT_URL), into a JDBC catalog
 * (ICEBERG_CATALOG_URI, a SQLAlchemy-style postgresql URL), files under ICEBERG_WAREHOUSE, tables
 * `<ICEBERG_NAMESPACE>.<resource>` (default namespace: the topic prefix as a schema name); read back through PyIceberg
 * (ICEBERG_PYTHON). `scripts/stack.sh up --with lakehouse` prints every one of these.
 */
import { loadConfig, processSecurity } from '../../foundation/config/index.js';
import { ConfigError } from '../../foundation/errors/index.js';
import type { ResourceName } from '../../foundation/models/index.js';
import { RESOURCES, topicName } from '../../foundation/models/index.js';
import {
  createIcebergConnectors,
  createIcebergReader,
  formatLakehouseReport,
  icebergConnectorName,
  icebergNamespace,
  landInLakehouse,
  buildIcebergSinkConfig,
} from '../../output/lakehouse/index.js';
import { createConnectClient, type ConnectClient } from '../../output/warehouse/index.js';
import { maskSecrets } from './mask-secrets.js';

export type SinkKind = 'jdbc' | 'iceberg';

export function parseSinkKind(value: string): SinkKind {
  if (value !== 'jdbc' && value !== 'iceberg')
    throw new ConfigError(`--sink takes jdbc or iceberg, got ${JSON.stringify(value)}`);
  return value;
}

export interface LakehouseSettings {
  connect: ConnectClient;
  connectUrl: string;
  catalogUri: string;
  warehouse: string;
  namespace: string;
  catalogName: string | undefined;
  commitIntervalMs: number | undefined;
  topicPrefix: string;
  secretsFile: string | undefined;
  security: { settings: ReturnType<typeof processSecurity>['settings']; registryUrl: string | undefined };
  python: string | undefined;
}

/** The lakehouse settings from the environment; `need.catalog`: create/secrets-file need the catalog's. */
export function readLakehouseSettings(
  need: { catalog: boolean },
  flags: {
    prefix?: string | undefined;
    namespace?: string | undefined;
    commitIntervalMs?: number | undefined;
  },
  env: NodeJS.ProcessEnv = process.env,
): LakehouseSettings {
  const config = loadConfig();
  const connectUrl = env['LAKEHOUSE_CONNECT_URL'] || config.connectUrl;
  const issues: string[] = [];
  if (connectUrl === undefined)
    issues.push('LAKEHOUSE_CONNECT_URL (or CONNECT_URL) is not set (e.g. http://127.0.0.1:18084)');
  const catalogUri = env['ICEBERG_CATALOG_URI'] ?? '';
  const warehouse = env['ICEBERG_WAREHOUSE'] ?? '';
  if (need.catalog && catalogUri === '')
    issues.push(
      'ICEBERG_CATALOG_URI is not set (e.g. postgresql+psycopg2://gamedata:gamedata@127.0.0.1:15432/lakehouse)',
    );
  if (need.catalog && warehouse === '')
    issues.push('ICEBERG_WAREHOUSE is not set (e.g. file:///srv/lakehouse)');
  const interval = flags.commitIntervalMs ?? numberOrUndefined(env['GAMEDATA_ICEBERG_COMMIT_INTERVAL_MS']);
  if (interval !== undefined && (!Number.isSafeInteger(interval) || interval < 1))
    issues.push(`GAMEDATA_ICEBERG_COMMIT_INTERVAL_MS must be an integer >= 1 (ms), got ${String(interval)}`);
  if (issues.length > 0)
    throw new ConfigError(
      issues.length === 1
        ? `invalid configuration: ${issues[0]}`
        : `invalid configuration (${issues.length} problems)`,
      issues,
    );
  const topicPrefix = flags.prefix ?? config.topicPrefix;
  return {
    connect: createConnectClient({
      url: connectUrl as string,
      onWarning: (line) => console.error(maskSecrets(`gamedata: warning: ${line}`)),
    }),
    connectUrl: connectUrl as string,
    catalogUri,
    warehouse,
    namespace: icebergNamespace(topicPrefix, flags.namespace ?? (env['ICEBERG_NAMESPACE'] || undefined)),
    catalogName: env['ICEBERG_CATALOG_NAME'] || undefined,
    commitIntervalMs: interval,
    topicPrefix,
    secretsFile: processSecurity().settings.connectSecretsFile,
    security: { settings: processSecurity().settings, registryUrl: config.schemaRegistryUrl },
    python: env['ICEBERG_PYTHON'] || undefined,
  };
}

function numberOrUndefined(value: string | undefined): number | undefined {
  return value === undefined || value === '' ? undefined : Number(value);
}

/** `connect create --sink iceberg`: prints one line per connector. */
export async function createIcebergSinks(
  resources: readonly ResourceName[],
  flags: {
    prefix?: string | undefined;
    namespace?: string | undefined;
    commitIntervalMs?: number | undefined;
    tasks: number;
  },
): Promise<void> {
  const s = readLakehouseSettings({ catalog: true }, flags);
  const results = await createIcebergConnectors({
    connect: s.connect,
    resources,
    topicPrefix: s.topicPrefix,
    catalogUri: s.catalogUri,
    warehouse: s.warehouse,
    namespace: s.namespace,
    catalogName: s.catalogName,
    commitIntervalMs: s.commitIntervalMs,
    tasksMax: flags.tasks,
    security: s.security,
    secretsFile: s.secretsFile,
  });
  const inline = [...new Set(results.flatMap((r) => r.inlineSecrets))];
  if (inline.length > 0)
    console.error(
      `gamedata: warning: the connectors carry secrets inline (${inline.join(', ')}): Connect keeps them in its config topic and returns them from its REST API; set GAMEDATA_CONNECT_SECRETS_FILE and write that file with \`gamedata connect secrets-file --sink iceberg\` (docs/configuration.md, Security)`,
    );
  for (const r of results)
    console.log(
      `${r.name}: ${r.created ? 'created' : 'updated'} (${topicName(s.topicPrefix, r.resource)} -> iceberg ${r.table})`,
    );
}

/** The secrets `connect create --sink iceberg` references (key -> value), for `connect secrets-file --sink iceberg`. */
export function icebergSecrets(): Map<string, string> {
  const s = readLakehouseSettings({ catalog: true }, {});
  const secrets = new Map<string, string>();
  buildIcebergSinkConfig({
    resource: RESOURCES[0],
    topicPrefix: s.topicPrefix,
    catalogUri: s.catalogUri,
    warehouse: s.warehouse,
    namespace: s.namespace,
    security: s.security,
    secretsFile: s.secretsFile ?? '/unused',
    collectSecrets: secrets,
  });
  return secrets;
}

/** `connect delete --sink iceberg`. */
export async function deleteIcebergSinks(
  resources: readonly ResourceName[],
  flags: { prefix?: string | undefined },
): Promise<void> {
  const s = readLakehouseSettings({ catalog: false }, flags);
  for (const resource of resources) {
    const name = icebergConnectorName(s.topicPrefix, resource);
    console.log(`${name}: ${(await s.connect.deleteConnector(name)) ? 'deleted' : 'not found'}`);
  }
}

/** The Connect worker `connect list --sink iceberg` lists. */
export function lakehouseConnectClient(): ConnectClient {
  return readLakehouseSettings({ catalog: false }, {}).connect;
}

/**
 * `gamedata demo --lakehouse`: lands the demo's six topics in Iceberg tables, reads them back through PyIceberg,
 * prints each table's rows beside its topic's records (and PostgreSQL's rows when `warehouseRows` is given), removes
 * the demo's sinks, and returns false on any difference.
 */
export async function landDemoInLakehouse(
  topicPrefix: string,
  brokers: string[],
  warehouseRows?: ReadonlyMap<ResourceName, number>,
): Promise<boolean> {
  // each demo run has its own prefix, so its own namespace (not ICEBERG_NAMESPACE, which every run would share)
  const s = readLakehouseSettings(
    { catalog: true },
    { prefix: topicPrefix, namespace: icebergNamespace(topicPrefix) },
  );
  if (s.python === undefined)
    throw new ConfigError(
      'demo --lakehouse reads the tables with PyIceberg: ICEBERG_PYTHON is not set (scripts/stack.sh up --with lakehouse prints it)',
    );
  console.log('');
  console.log(
    `lakehouse: one Iceberg sink per topic via ${s.connectUrl}, waiting until PyIceberg sees every record`,
  );
  const report = await landInLakehouse({
    connect: s.connect,
    brokers,
    resources: [...RESOURCES],
    topicPrefix,
    catalogUri: s.catalogUri,
    warehouse: s.warehouse,
    namespace: s.namespace,
    catalogName: s.catalogName,
    commitIntervalMs: s.commitIntervalMs,
    security: s.security,
    secretsFile: s.secretsFile,
    reader: createIcebergReader({
      python: s.python,
      catalogUri: s.catalogUri,
      warehouse: s.warehouse,
      catalogName: s.catalogName,
    }),
  });
  for (const line of formatLakehouseReport(report, warehouseRows)) console.log(line);
  for (const resource of RESOURCES)
    await s.connect.deleteConnector(icebergConnectorName(topicPrefix, resource));
  console.log(`lakehouse: tables kept in namespace ${s.namespace}; the demo's sinks removed`);
  return report.ok;
}
