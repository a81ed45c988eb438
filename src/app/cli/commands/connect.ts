/**
 * `gamedata connect create|list|delete`: the warehouse sinks as code. One Debezium JDBC sink per resource, through
 * the Kafka Connect REST API (PUT of the whole config, so running `create` twice changes nothing), into the
 * PostgreSQL schema named after the topic prefix (see src/output/warehouse and docs/consuming.md).
 * Settings: CONNECT_URL, WAREHOUSE_URL (CONNECT_WAREHOUSE_URL when Connect reaches the database under another
 * address), GAMEDATA_TOPIC_PREFIX.
 */
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { loadConfig } from '../../../foundation/config/load-config.js';
import { processSecurity } from '../../../foundation/config/process-security.js';
import { ConfigError } from '../../../foundation/errors.js';
import { RESOURCES } from '../../../foundation/models/resources.js';
import { parseResources } from '../../../pipeline/planner/index.js';
import { writeSecretsFile } from '../../../output/warehouse/write-secrets-file.js';
import {
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
import { topicName } from '../../../foundation/models/topic-names.js';
import { maskSecrets, maskSecretsDeep } from '../mask-secrets.js';

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

export function register(program: Command): void {
  const connect = program.command('connect').description('Kafka Connect sinks into the PostgreSQL warehouse');
  connect
    .command('create')
    .description(
      'create or update one JDBC sink per resource (upsert by _id into <prefix schema>.<resource>)',
    )
    .argument('<resource...>', 'resources (or all)')
    .option('--prefix <prefix>', 'topic prefix (default: GAMEDATA_TOPIC_PREFIX or "gamedata")')
    .option('--tasks <n>', 'tasks per connector', positiveInt, 1)
    .option('--wait', 'wait until every sink has consumed its topic to the end (needs KAFKA_BROKERS)')
    .action(async (names: string[], flags: { prefix?: string; tasks: number; wait?: boolean }) => {
      const resources = parseResources(names);
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
  connect
    .command('secrets-file')
    .description(
      "write the connectors' secrets file (GAMEDATA_CONNECT_SECRETS_FILE on the Connect worker), mode 600",
    )
    .requiredOption(
      '--output <path>',
      'where to write it (then copy it to the worker, at GAMEDATA_CONNECT_SECRETS_FILE)',
    )
    .action((flags: { output: string }) => {
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
      // 0600 from the first byte, O_EXCL, renamed into place (issue 48): never through a symlink at --output
      writeSecretsFile(flags.output, connectorSecretsProperties(secrets));
      console.log(`${flags.output}: ${secrets.size} secrets (${[...secrets.keys()].join(', ')})`);
    });
  connect
    .command('list')
    .description('every connector of the worker with its state and tasks')
    .option('--json', 'print JSON')
    .action(async (flags: { json?: boolean }) => {
      const s = readConnectSettings({ warehouse: false }, undefined);
      const list = await s.connect.listConnectors();
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
            `${c.name}: ${c.state} (tasks ${tasks}) ${c.config['topics'] ?? ''} -> ${c.config['collection.name.format'] ?? ''}`,
          ),
        );
      }
    });
  connect
    .command('delete')
    .description("delete the resources' sinks (tables and rows stay)")
    .argument('<resource...>', 'resources (or all)')
    .option('--prefix <prefix>', 'topic prefix (default: GAMEDATA_TOPIC_PREFIX or "gamedata")')
    .action(async (names: string[], flags: { prefix?: string }) => {
      const resources = parseResources(names);
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
export async function landDemoInWarehouse(topicPrefix: string, brokers: string[]): Promise<boolean> {
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
  // the demo's tables stay; its sinks go (each demo run has its own prefix, so they would pile up in the worker)
  for (const resource of RESOURCES) await s.connect.deleteConnector(sinkConnectorName(topicPrefix, resource));
  console.log(
    `warehouse: tables kept in schema ${report.tables[0]?.table.split('.')[0] ?? ''}; the demo's sinks removed`,
  );
  return report.ok;
}
