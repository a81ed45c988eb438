/**
 * `gamedata connect create|list|delete`: the warehouse sinks as code. One sink per resource, through the Kafka
 * Connect REST API (PUT of the whole config, so running `create` twice changes nothing): by default (`--sink jdbc`)
 * Debezium's JDBC sink into the PostgreSQL schema named after the topic prefix (see src/output/warehouse and
 * docs/consuming.md); with `--sink iceberg` Apache Iceberg's sink into `<namespace>.<resource>` tables of a JDBC
 * catalog (../lakehouse-sinks.ts, src/output/lakehouse).
 * Settings: CONNECT_URL, WAREHOUSE_URL (CONNECT_WAREHOUSE_URL when Connect reaches the database under another
 * address), GAMEDATA_TOPIC_PREFIX; for iceberg LAKEHOUSE_CONNECT_URL (default CONNECT_URL), ICEBERG_CATALOG_URI,
 * ICEBERG_WAREHOUSE, ICEBERG_NAMESPACE, ICEBERG_CATALOG_NAME, GAMEDATA_ICEBERG_COMMIT_INTERVAL_MS.
 */
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { loadConfig, processSecurity } from '../../../foundation/config/index.js';
import { ConfigError } from '../../../foundation/errors/index.js';
import { RESOURCES, type ResourceName, topicName } from '../../../foundation/models/index.js';
import { parseResources } from '../../../pipeline/planner/index.js';
import {
  writeSecretsFile,
  buildSinkConnectorConfig,
  connectorSecretsProperties,
  createConnectClient,
  createSinkConnectors,
  formatWarehouseReport,
  maskConnectorConfig,
  landInWarehouse,
  sinkConnectorName,
  waitForSinks,
} from '../../../output/warehouse/index.js';
import { maskSecrets, maskSecretsDeep } from '../mask-secrets.js';
import {
  createIcebergSinks,
  deleteIcebergSinks,
  icebergSecrets,
  lakehouseConnectClient,
  parseSinkKind,
  type SinkKind,
} from '../lakehouse-sinks.js';

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1)
    throw new InvalidArgumentError(`expected an integer >= 1, got ${JSON.stringify(value)}`);
  return n;
}

function readConnectSettings(need: { warehouse: boolean }, prefix: string | undefined) {
  const config = loadConfig();
  const issues: string[] = [];
  if (config.connectUrl === undefined) issues.push('CONNECT_URL is not set (e.g. http://127.0.0.1:18083)');
  if (need.warehouse && config.warehouseUrl === undefined)
    issues.push('WAREHOUSE_URL is not set (e.g. postgresql://gamedata:gamedata@127.0.0.1:15432/gamedata)');
  if (issues.length > 0)
    throw new ConfigError(
      issues.length === 1
        ? `invalid configuration: ${issues[0]}`
        : `invalid configuration (${issues.length} problems)`,
      issues,
    );
  return {
    connect: createConnectClient({
      url: config.connectUrl as string,
      onWarning: (line) => console.error(maskSecrets(`gamedata: warning: ${line}`)),
    }),
    secretsFile: processSecurity().settings.connectSecretsFile,
    warehouseUrl: config.warehouseUrl ?? '',
    connectWarehouseUrl: config.connectWarehouseUrl,
    topicPrefix: prefix ?? config.topicPrefix,
    kafkaBrokers: config.kafkaBrokers,
    // the connectors reach a secured Kafka / registry with the pipeline's own settings
    security: { settings: processSecurity().settings, registryUrl: config.schemaRegistryUrl },
  };
}

interface CreateFlags {
  sink: SinkKind;
  prefix?: string;
  tasks: number;
  namespace?: string;
  commitIntervalMs?: number;
  wait?: boolean;
}

/** The secrets file: 0600 from the first byte, O_EXCL, renamed into place (issue 48): never through a symlink. */
function writeConnectorSecrets(path: string, secrets: ReadonlyMap<string, string>): void {
  writeSecretsFile(path, connectorSecretsProperties(secrets));
  console.log(`${path}: ${secrets.size} secrets (${[...secrets.keys()].join(', ')})`);
}

export function register(program: Command): void {
  const connect = program
    .command('connect')
    .description('Kafka Connect sinks into the PostgreSQL warehouse or Apache Iceberg tables');
  registerCreate(connect);
  registerSecretsFile(connect);
  registerList(connect);
  registerDelete(connect);
}

function registerCreate(connect: Command): void {
  connect
    .command('create')
    .description(
      'create or update one sink per resource: JDBC (upsert by _id into <prefix schema>.<resource>) or Iceberg (append into <namespace>.<resource>)',
    )
    .argument('<resource...>', 'resources (or all)')
    .option('--sink <sink>', 'jdbc (PostgreSQL) or iceberg (Apache Iceberg tables)', parseSinkKind, 'jdbc')
    .option('--prefix <prefix>', 'topic prefix (default: GAMEDATA_TOPIC_PREFIX or "gamedata")')
    .option('--tasks <n>', 'tasks per connector', positiveInt, 1)
    .option(
      '--namespace <ns>',
      "iceberg: the tables' namespace (default: ICEBERG_NAMESPACE, else the prefix)",
    )
    .option('--commit-interval-ms <ms>', 'iceberg: how often the sink commits (default 10000)', positiveInt)
    .option('--wait', 'jdbc: wait until every sink has consumed its topic to the end (needs KAFKA_BROKERS)')
    .action(async (names: string[], flags: CreateFlags) => {
      const resources = parseResources(names);
      if (flags.sink === 'iceberg') {
        if (flags.wait === true)
          throw new ConfigError(
            '--wait is for --sink jdbc (an Iceberg table is read back with PyIceberg, see docs/consuming.md)',
          );
        await createIcebergSinks(resources, flags);
        return;
      }
      const s = readConnectSettings({ warehouse: true }, flags.prefix);
      const results = await createSinkConnectors({
        connect: s.connect,
        resources,
        topicPrefix: s.topicPrefix,
        warehouseUrl: s.warehouseUrl,
        connectWarehouseUrl: s.connectWarehouseUrl,
        tasksMax: flags.tasks,
        security: s.security,
        secretsFile: s.secretsFile,
      });
      const inline = [...new Set(results.flatMap((r) => r.inlineSecrets))];
      if (inline.length > 0)
        console.error(
          `gamedata: warning: the connectors carry secrets inline (${inline.join(', ')}): Connect keeps them in its config topic and returns them from its REST API; set GAMEDATA_CONNECT_SECRETS_FILE and write that file with \`gamedata connect secrets-file\` (docs/configuration.md, Security)`,
        );
      for (const r of results)
        console.log(
          `${r.name}: ${r.created ? 'created' : 'updated'} (${topicName(s.topicPrefix, r.resource)} -> ${r.table})`,
        );
      if (flags.wait !== true) return;
      if (s.kafkaBrokers.length === 0)
        throw new ConfigError('--wait needs KAFKA_BROKERS', ['KAFKA_BROKERS is not set']);
      await waitForSinks(results, {
        connect: s.connect,
        brokers: s.kafkaBrokers,
        topicPrefix: s.topicPrefix,
        onCaughtUp: (name) => console.log(`${name}: caught up`),
      });
    });
}

function registerSecretsFile(connect: Command): void {
  connect
    .command('secrets-file')
    .description(
      "write the connectors' secrets file (GAMEDATA_CONNECT_SECRETS_FILE on the Connect worker), mode 600",
    )
    .requiredOption(
      '--output <path>',
      'where to write it (then copy it to the worker, at GAMEDATA_CONNECT_SECRETS_FILE)',
    )
    .option('--sink <sink>', 'the secrets of the jdbc or the iceberg sinks', parseSinkKind, 'jdbc')
    .action((flags: { output: string; sink: SinkKind }) => {
      if (flags.sink === 'iceberg') {
        writeConnectorSecrets(flags.output, icebergSecrets());
        return;
      }
      const s = readConnectSettings({ warehouse: true }, undefined);
      const secrets = new Map<string, string>();
      // the same build as `connect create`: exactly the keys its references name
      buildSinkConnectorConfig({
        resource: RESOURCES[0],
        topicPrefix: s.topicPrefix,
        warehouseUrl: s.connectWarehouseUrl ?? s.warehouseUrl,
        security: s.security,
        secretsFile: s.secretsFile ?? '/unused',
        collectSecrets: secrets,
      });
      writeConnectorSecrets(flags.output, secrets);
    });
}

function registerList(connect: Command): void {
  connect
    .command('list')
    .description('every connector of the worker with its state and tasks')
    .option(
      '--sink <sink>',
      "jdbc: CONNECT_URL's worker; iceberg: LAKEHOUSE_CONNECT_URL's",
      parseSinkKind,
      'jdbc',
    )
    .option('--json', 'print JSON')
    .action(async (flags: { json?: boolean; sink: SinkKind }) => {
      const client =
        flags.sink === 'iceberg'
          ? lakehouseConnectClient()
          : readConnectSettings({ warehouse: false }, undefined).connect;
      const list = await client.listConnectors();
      if (flags.json === true) {
        // the config as Connect holds it, secrets masked: by key (passwords, JAAS, keys), then every value holding a
        // secret of this deployment (a JDBC URL with a password, a task's trace quoting one)
        const listed = list.map(({ config, ...rest }) => ({
          ...rest,
          topics: config['topics'],
          config: maskConnectorConfig(config),
        }));
        console.log(maskSecrets(JSON.stringify(maskSecretsDeep(listed), null, 2)));
        return;
      }
      if (list.length === 0) console.log('no connectors');
      for (const c of list) {
        const tasks = c.tasks.map((t) => `${t.id}:${t.state}`).join(' ') || 'no tasks';
        console.log(
          maskSecrets(
            `${c.name}: ${c.state} (tasks ${tasks}) ${c.config['topics'] ?? ''} -> ${c.config['collection.name.format'] ?? c.config['iceberg.tables'] ?? ''}`,
          ),
        );
      }
    });
}

function registerDelete(connect: Command): void {
  connect
    .command('delete')
    .description("delete the resources' sinks (tables and rows stay)")
    .argument('<resource...>', 'resources (or all)')
    .option('--prefix <prefix>', 'topic prefix (default: GAMEDATA_TOPIC_PREFIX or "gamedata")')
    .option('--sink <sink>', 'jdbc or iceberg', parseSinkKind, 'jdbc')
    .action(async (names: string[], flags: { prefix?: string; sink: SinkKind }) => {
      const resources = parseResources(names);
      if (flags.sink === 'iceberg') {
        await deleteIcebergSinks(resources, flags);
        return;
      }
      const s = readConnectSettings({ warehouse: false }, flags.prefix);
      for (const resource of resources) {
        const name = sinkConnectorName(s.topicPrefix, resource);
        console.log(`${name}: ${(await s.connect.deleteConnector(name)) ? 'deleted' : 'not found'}`);
      }
    });
}

/**
 * `gamedata demo --warehouse`: lands the demo's six topics in PostgreSQL (CONNECT_URL, WAREHOUSE_URL), prints each
 * table's row count beside its topic's counts, and returns false on any difference.
 */
export async function landDemoInWarehouse(
  topicPrefix: string,
  brokers: string[],
  /** Filled with each table's row count (the demo shows them beside the lakehouse's). */
  rowsOut?: Map<ResourceName, number>,
): Promise<boolean> {
  const s = readConnectSettings({ warehouse: true }, topicPrefix);
  console.log('');
  console.log(
    `warehouse: one JDBC sink per topic via ${loadConfig().connectUrl ?? ''}, waiting for them to catch up`,
  );
  const report = await landInWarehouse({
    connect: s.connect,
    brokers,
    topicPrefix,
    resources: [...RESOURCES],
    warehouseUrl: s.warehouseUrl,
    connectWarehouseUrl: s.connectWarehouseUrl,
    security: s.security,
  });
  for (const line of formatWarehouseReport(report)) console.log(line);
  for (const t of report.tables) rowsOut?.set(t.resource, t.rows);
  // the demo's tables stay; its sinks go (each demo run has its own prefix, so they would pile up in the worker)
  for (const resource of RESOURCES) await s.connect.deleteConnector(sinkConnectorName(topicPrefix, resource));
  console.log(
    `warehouse: tables kept in schema ${report.tables[0]?.table.split('.')[0] ?? ''}; the demo's sinks removed`,
  );
  return report.ok;
}
