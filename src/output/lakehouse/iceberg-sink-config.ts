/**
 * The Kafka Connect sink that lands one resource topic in an Apache Iceberg table, as a pure function of its
 * settings: Iceberg's own sink (`org.apache.iceberg:iceberg-kafka-connect`, 1.10.x), one table `<namespace>.<resource>`
 * per resource in a JDBC catalog (PostgreSQL), created on the first record from the record's Connect schema (the
 * worker's Avro converter reads the registry), new fields added as columns (`iceberg.tables.evolve-schema-enabled`),
 * transactions partitioned by day of `createdAt`. The sink only appends (1.10 has no upsert mode): immutable
 * resources hold each record once; the changing ones hold every version published, and the latest per `_id` is a
 * query (docs/consuming.md, "Lakehouse").
 *
 * Exactly once: the sink's tasks read only committed records (`consumer.override.isolation.level=read_committed`),
 * send the data files they wrote to the coordinator over the control topic in Kafka transactions, and the coordinator
 * commits them to the table together with the offsets they cover (in the snapshot summary and the control group);
 * a restarted worker resumes from those offsets, so a crash neither loses nor doubles a record, provided a new
 * coordinator reads the control topic from its earliest retained event until it has committed once
 * (`iceberg.kafka.auto.offset.reset=earliest`, below; the sink's default, `latest`, loses a first commit's files).
 */
import { ConfigError } from '../../foundation/errors/index.js';
import { RESOURCE_INFO, type ResourceName, topicName } from '../../foundation/models/index.js';
import { connectorSecret } from '../warehouse/connector-secrets.js';
import {
  connectorSecurityConfig,
  toJdbcTarget,
  warehouseSchemaName,
  type ConnectorSecurity,
} from '../warehouse/sink-connector-config.js';

/** Connector class of Iceberg's Kafka Connect sink. */
export const ICEBERG_SINK_CLASS = 'org.apache.iceberg.connect.IcebergSinkConnector';
/** The catalog implementation the sink loads (Iceberg's JDBC catalog, in iceberg-core). */
export const ICEBERG_JDBC_CATALOG_CLASS = 'org.apache.iceberg.jdbc.JdbcCatalog';
/** Table files through Hadoop's FileSystem (file: paths on a local disk, hdfs:, ...). */
export const ICEBERG_HADOOP_FILE_IO_CLASS = 'org.apache.iceberg.hadoop.HadoopFileIO';

/** Partition spec per resource, where one helps a reader prune (time-ranged queries of the big table). */
export const ICEBERG_PARTITION_BY: Readonly<Partial<Record<ResourceName, string>>> = {
  transactions: 'day(createdAt)',
};

export const DEFAULT_ICEBERG_SINK_OPTIONS = {
  tasksMax: 1,
  catalogName: 'gamedata',
  commitIntervalMs: 10_000,
  commitTimeoutMs: 30_000,
} as const;

export interface IcebergSinkOptions {
  resource: ResourceName;
  /** Topics are `<topicPrefix>.<resource>`. */
  topicPrefix: string;
  /**
   * The catalog database as Connect reaches it: a SQLAlchemy URL (`postgresql+psycopg2://user:pw@host:port/db`, what
   * PyIceberg's SqlCatalog takes and the stack prints as ICEBERG_CATALOG_URI) or a plain `postgresql://` URL.
   */
  catalogUri: string;
  /** Where new tables' files go, as Connect sees it (`file:///...`, `hdfs://...`). */
  warehouse: string;
  /** The tables' namespace. @default the topic prefix with `.` and `-` as `_` (as the JDBC sink's schema) */
  namespace?: string | undefined;
  /** The catalog's name in its database (readers must use the same). @default 'gamedata' */
  catalogName?: string | undefined;
  /** How often the coordinator commits to the tables: the longest a committed record waits to be visible. */
  commitIntervalMs?: number | undefined;
  /** How long a commit waits for every task's files before it commits what it has (the rest goes next time). */
  commitTimeoutMs?: number | undefined;
  tasksMax?: number | undefined;
  /**
   * The sink consumers' `session.timeout.ms` (the tasks' and the sink's control-topic consumers'): after a worker
   * dies, its consumers are members of their groups until it ends, so the restarted tasks wait that long for their
   * partitions, and the new coordinator for the control topic. @default the consumer's (45000)
   */
  consumerSessionTimeoutMs?: number | undefined;
  /** See SinkConnectorOptions.security (the JDBC sink's). */
  security?: ConnectorSecurity | undefined;
  /** See SinkConnectorOptions.secretsFile: the catalog password becomes a `${file:...}` reference. */
  secretsFile?: string | undefined;
  collectSecrets?: Map<string, string>;
}

export interface IcebergSinkConnector {
  name: string;
  /** `<namespace>.<resource>` */
  table: string;
  config: Record<string, string>;
}

/** `<prefix>.<resource>.iceberg-sink`. */
export function icebergConnectorName(topicPrefix: string, resource: ResourceName): string {
  return `${topicName(topicPrefix, resource)}.iceberg-sink`;
}

/** `<prefix>.iceberg-control`: the control topic the prefix's sinks and their coordinators talk over. */
export function icebergControlTopic(topicPrefix: string): string {
  return `${topicPrefix}.iceberg-control`;
}

/** The namespace of a prefix's tables: the option, else the prefix as a JDBC-sink schema name. */
export function icebergNamespace(topicPrefix: string, namespace?: string): string {
  const ns = namespace ?? warehouseSchemaName(topicPrefix);
  if (!/^[A-Za-z0-9_]{1,63}$/.test(ns))
    throw new ConfigError(
      `ICEBERG_NAMESPACE must be 1-63 characters of A-Z a-z 0-9 _, got ${JSON.stringify(ns)}`,
    );
  return ns;
}

/** A SQLAlchemy (`postgresql+psycopg2://`) or plain `postgresql://` URL -> the JDBC URL and credentials. */
export function catalogJdbcTarget(catalogUri: string): ReturnType<typeof toJdbcTarget> {
  const plain = catalogUri.replace(/^postgres(ql)?\+[a-z0-9_]+:/i, 'postgresql:');
  try {
    return toJdbcTarget(plain);
  } catch (err) {
    throw new ConfigError(
      'ICEBERG_CATALOG_URI must be postgresql[+driver]://user:password@host:port/database (the Iceberg JDBC catalog)',
      [`ICEBERG_CATALOG_URI: ${(err as Error).message}`],
    );
  }
}

function positive(name: string, value: number): string {
  if (!Number.isSafeInteger(value) || value < 1)
    throw new ConfigError(`${name} must be an integer >= 1, got ${String(value)}`);
  return String(value);
}

/**
 * The connector's name and config (PUT /connectors/<name>/config: creating it twice changes nothing).
 * Converters are the worker's (StringConverter keys, the registry's Avro converter for values).
 */
export function buildIcebergSinkConfig(options: IcebergSinkOptions): IcebergSinkConnector {
  const d = DEFAULT_ICEBERG_SINK_OPTIONS;
  const topic = topicName(options.topicPrefix, options.resource);
  const namespace = icebergNamespace(options.topicPrefix, options.namespace);
  const table = `${namespace}.${options.resource}`;
  const target = catalogJdbcTarget(options.catalogUri);
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(options.warehouse))
    throw new ConfigError(
      `ICEBERG_WAREHOUSE must be a URL such as file:///data/lakehouse, got ${JSON.stringify(options.warehouse)}`,
    );
  const name = icebergConnectorName(options.topicPrefix, options.resource);
  const partitionBy = ICEBERG_PARTITION_BY[options.resource];
  return {
    name,
    table,
    config: {
      'connector.class': ICEBERG_SINK_CLASS,
      'tasks.max': positive('tasksMax', options.tasksMax ?? d.tasksMax),
      topics: topic,
      // only records of committed transactions: the coordinator commits what our producers committed, nothing else
      'consumer.override.isolation.level': 'read_committed',
      'consumer.override.auto.offset.reset': 'earliest',
      ...(options.consumerSessionTimeoutMs === undefined
        ? {}
        : {
            'consumer.override.session.timeout.ms': positive(
              'consumerSessionTimeoutMs',
              options.consumerSessionTimeoutMs,
            ),
            // and the sink's own control-topic consumers: a killed worker's coordinator stays a member of its
            // `-coord` group until this ends, and the new coordinator reads nothing until then
            'iceberg.kafka.session.timeout.ms': String(options.consumerSessionTimeoutMs),
          }),
      'iceberg.tables': table,
      'iceberg.tables.auto-create-enabled': 'true',
      'iceberg.tables.evolve-schema-enabled': 'true',
      ...(partitionBy === undefined ? {} : { [`iceberg.table.${table}.partition-by`]: partitionBy }),
      'iceberg.tables.auto-create-props.gamedata.resource': options.resource,
      'iceberg.tables.auto-create-props.gamedata.history':
        RESOURCE_INFO[options.resource].dedup === 'id'
          ? 'append (immutable records)'
          : 'append (every version)',
      'iceberg.control.topic': icebergControlTopic(options.topicPrefix),
      // The coordinator's control-topic group (`connect-<name>-coord`) gets its first committed offset only after its
      // first table commit, and the sink's default for a group without one is `latest`. A task writes its data files,
      // then commits its source offsets with the files' DATA_WRITTEN event on the control topic, in one transaction:
      // a coordinator that dies before its first table commit (a kill -9 of the worker, a failed task) is replaced
      // by one that starts at the log end, skips those events, and the table never gets the files (the e2e lost all
      // of donations so, issue 50). From the earliest retained event it re-reads them; what a table already holds is
      // skipped by the control-topic offsets its snapshots record, so nothing is doubled either.
      'iceberg.kafka.auto.offset.reset': 'earliest',
      'iceberg.control.commit.interval-ms': positive(
        'commitIntervalMs',
        options.commitIntervalMs ?? d.commitIntervalMs,
      ),
      'iceberg.control.commit.timeout-ms': positive(
        'commitTimeoutMs',
        options.commitTimeoutMs ?? d.commitTimeoutMs,
      ),
      'iceberg.catalog': options.catalogName ?? d.catalogName,
      'iceberg.catalog.catalog-impl': ICEBERG_JDBC_CATALOG_CLASS,
      'iceberg.catalog.uri': target.jdbcUrl,
      'iceberg.catalog.jdbc.user': target.user,
      'iceberg.catalog.jdbc.password': connectorSecret(
        'icebergCatalogPassword',
        target.password,
        options.secretsFile,
        options.collectSecrets,
      ),
      'iceberg.catalog.warehouse': options.warehouse,
      'iceberg.catalog.io-impl': ICEBERG_HADOOP_FILE_IO_CLASS,
      ...(options.security === undefined
        ? {}
        : connectorSecurityConfig(options.security, options.secretsFile, options.collectSecrets)),
    },
  };
}
