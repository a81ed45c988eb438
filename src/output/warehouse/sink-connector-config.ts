/**
 * The Kafka Connect sink that lands one resource topic in PostgreSQL, as a pure function of its settings: Debezium's
 * JDBC sink in upsert mode keyed by `_id` (the string key hoisted into a struct), one table per resource in a schema
 * named after the topic prefix, nested records flattened into `<parent>_<child>` columns, arrays of records and
 * typed maps (`finishedToursMap`, ...) as `jsonb` (the stack's `ArraysOfRecordsToJson` transform: once before
 * `Flatten`, which refuses MAP fields, and once after it, for arrays of records inside nested records), arrays of
 * strings as `text[]`, new nullable fields added
 * as columns (`schema.evolution=basic`), records the converter or a transform cannot handle sent to the connector's
 * own dead-letter topic, and only committed records read (`isolation.level=read_committed`).
 */
import { readFileSync } from 'node:fs';
import type { SecuritySettings } from '../../foundation/config/index.js';
import { ConfigError } from '../../foundation/errors/index.js';
import type { ResourceName } from '../../foundation/models/index.js';
import { topicName } from '../../foundation/models/index.js';
import { connectorSecret } from './connector-secrets.js';

export interface SinkConnectorOptions {
  resource: ResourceName;
  /** Topics are `<topicPrefix>.<resource>`. */
  topicPrefix: string;
  /** The database as Connect reaches it: `postgresql://user:password@host:port/database`. */
  warehouseUrl: string;
  /** Tasks of the connector (at most the topic's partitions do work). @default 1 */
  tasksMax?: number;
  /** Replication factor of the connector's dead-letter topic. @default 1 */
  dlqReplicationFactor?: number;
  /** Records per database batch. @default 500 */
  batchSize?: number;
  /**
   * How the connector reaches a secured Kafka and registry: the pipeline's own security settings (file paths as
   * Connect sees them). With SASL or TLS, the connector's consumer, its dead-letter producer and admin get the
   * matching `*.override.*` settings; with registry credentials, the connector carries its own Avro converter
   * settings (`registryUrl` needed). A registry's private CA is not passed on (the converter wants a Java trust
   * store): the worker's JVM must trust it. @default none (the worker's own settings)
   */
  security?: ConnectorSecurity;
  /**
   * Path, as the Connect worker sees it, of the secrets file (`GAMEDATA_CONNECT_SECRETS_FILE`, see
   * `connector-secrets.ts`): every secret of the config becomes a `${file:<path>:<key>}` reference.
   * @default none: the secrets inline (kept in Connect's config topic)
   */
  secretsFile?: string | undefined;
  /** Filled with each secret's key and value (what the secrets file must hold). */
  collectSecrets?: Map<string, string>;
}

/** See {@link SinkConnectorOptions.security}. */
export interface ConnectorSecurity {
  settings: Partial<SecuritySettings>;
  /** SCHEMA_REGISTRY_URL (its Confluent-compatible URL; the converter's v2 URL is derived from it). */
  registryUrl?: string | undefined;
}

/** The Apicurio Avro converter of the stack's Connect worker (scripts/stack/warehouse.sh). */
export const AVRO_CONVERTER_CLASS = 'io.apicurio.registry.utils.converter.AvroConverter';

export const DEFAULT_SINK_CONNECTOR_OPTIONS = {
  tasksMax: 1,
  dlqReplicationFactor: 1,
  batchSize: 500,
} as const satisfies Partial<SinkConnectorOptions>;

/** Connector class of Debezium's JDBC sink (io.debezium:debezium-connector-jdbc). */
export const JDBC_SINK_CLASS = 'io.debezium.connector.jdbc.JdbcSinkConnector';
/** The stack's transform (scripts/stack/connect/ArraysOfRecordsToJson.java). */
export const ARRAYS_TO_JSON_CLASS = 'gamedata.connect.ArraysOfRecordsToJson$Value';

export interface SinkConnector {
  name: string;
  config: Record<string, string>;
}

/** `<prefix>` with `.` and `-` turned into `_`: the PostgreSQL schema of a prefix's tables. */
export function warehouseSchemaName(topicPrefix: string): string {
  const schema = topicPrefix.replace(/[.-]/g, '_');
  if (!/^[A-Za-z0-9_]{1,63}$/.test(schema)) {
    throw new ConfigError(
      `the warehouse schema of topic prefix ${JSON.stringify(topicPrefix)} would be ${JSON.stringify(schema)}: ` +
        'it must be 1-63 characters of A-Z a-z 0-9 _ (after . and - become _)',
    );
  }
  return schema;
}

/** `<prefix>.<resource>.postgres-sink`. */
export function sinkConnectorName(topicPrefix: string, resource: ResourceName): string {
  return `${topicName(topicPrefix, resource)}.postgres-sink`;
}

/** `<topic>.connect-dlq`: the connector's own dead-letter topic (the pipeline's `<topic>.dlq` is another one). */
export function connectDlqTopicName(topic: string): string {
  return `${topic}.connect-dlq`;
}

/** Query parameters of a PostgreSQL URL that hold a secret (pgjdbc's `password`, and `sslpassword` of the key). */
const SECRET_QUERY_PARAMS: ReadonlySet<string> = new Set(['password', 'sslpassword']);

export interface JdbcTarget {
  /** `jdbc:postgresql://host:port/database` (query parameters kept). */
  jdbcUrl: string;
  user: string;
  password: string;
  database: string;
}

/**
 * `postgresql://user:password@host:port/database?params` -> the JDBC URL and credentials.
 * @throws ConfigError when the URL is not a postgresql:// URL with a user and a database.
 */
export function toJdbcTarget(warehouseUrl: string): JdbcTarget {
  let url: URL;
  try {
    url = new URL(warehouseUrl);
  } catch {
    throw new ConfigError('WAREHOUSE_URL must be a postgresql://user:password@host:port/database URL', [
      'WAREHOUSE_URL: not a URL',
    ]);
  }
  const database = decodeURIComponent(url.pathname.replace(/^\//, ''));
  const user = decodeURIComponent(url.username);
  if (
    !['postgresql:', 'postgres:'].includes(url.protocol) ||
    url.hostname === '' ||
    database === '' ||
    user === ''
  ) {
    throw new ConfigError(
      `WAREHOUSE_URL must be postgresql://user:password@host:port/database (protocol ${url.protocol}, ` +
        `host ${JSON.stringify(url.hostname)}, user ${user === '' ? 'missing' : 'set'}, database ${JSON.stringify(database)})`,
      ['WAREHOUSE_URL: needs a user, a host and a database'],
    );
  }
  // A password in the query would land inline in `connection.url`, in Connect's config topic and REST API: refused
  // (issue 48). The password goes in user:password@, from where it takes the secrets file.
  const secretParam = [...url.searchParams.keys()].find((k) => SECRET_QUERY_PARAMS.has(k.toLowerCase()));
  if (secretParam !== undefined)
    throw new ConfigError(
      `WAREHOUSE_URL carries a secret in its query (${secretParam}=), which would be stored inline in Connect's config; put the password in postgresql://user:password@host/database (it then goes through GAMEDATA_CONNECT_SECRETS_FILE) and leave ${secretParam} out`,
      [`WAREHOUSE_URL: ${secretParam} in the query`],
    );
  const port = url.port === '' ? '5432' : url.port;
  return {
    jdbcUrl: `jdbc:postgresql://${url.hostname}:${port}/${encodeURIComponent(database)}${url.search}`,
    user,
    password: decodeURIComponent(url.password),
    database,
  };
}

/**
 * The connector's name and config (PUT /connectors/<name>/config: creating it twice changes nothing).
 * Converters are the worker's (StringConverter keys, the registry's Avro converter for values).
 * @throws ConfigError for a prefix without a legal schema name, a bad URL or a bad number.
 */
export function buildSinkConnectorConfig(options: SinkConnectorOptions): SinkConnector {
  const tasksMax = options.tasksMax ?? DEFAULT_SINK_CONNECTOR_OPTIONS.tasksMax;
  const dlqReplication = options.dlqReplicationFactor ?? DEFAULT_SINK_CONNECTOR_OPTIONS.dlqReplicationFactor;
  const batchSize = options.batchSize ?? DEFAULT_SINK_CONNECTOR_OPTIONS.batchSize;
  for (const [name, value] of [
    ['tasksMax', tasksMax],
    ['dlqReplicationFactor', dlqReplication],
    ['batchSize', batchSize],
  ] as const) {
    if (!Number.isSafeInteger(value) || value < 1)
      throw new ConfigError(`${name} must be an integer >= 1, got ${String(value)}`);
  }
  const topic = topicName(options.topicPrefix, options.resource);
  const schema = warehouseSchemaName(options.topicPrefix);
  const target = toJdbcTarget(options.warehouseUrl);
  return {
    name: sinkConnectorName(options.topicPrefix, options.resource),
    config: {
      'connector.class': JDBC_SINK_CLASS,
      'tasks.max': String(tasksMax),
      topics: topic,
      'connection.url': target.jdbcUrl,
      'connection.username': target.user,
      'connection.password': connectorSecret(
        'warehousePassword',
        target.password,
        options.secretsFile,
        options.collectSecrets,
      ),
      // one row per _id, the newest version wins; a tombstone deletes the row
      'insert.mode': 'upsert',
      'primary.key.mode': 'record_key',
      'primary.key.fields': '_id',
      'delete.enabled': 'true',
      'schema.evolution': 'basic',
      'quote.identifiers': 'true',
      'collection.name.format': `${schema}.${options.resource}`,
      'batch.size': String(batchSize),
      // Debezium needs a struct key with primary.key.mode=record_key: the plain string key becomes {_id}
      transforms: 'key,maps,flatten,json',
      'transforms.key.type': 'org.apache.kafka.connect.transforms.HoistField$Key',
      'transforms.key.field': '_id',
      // Flatten$Value fails on a MAP field ("does not support MAP for record with schemas"): top-level maps (and
      // arrays of records) become jsonb strings first; the second pass catches arrays of records Flatten lifted
      'transforms.maps.type': ARRAYS_TO_JSON_CLASS,
      'transforms.flatten.type': 'org.apache.kafka.connect.transforms.Flatten$Value',
      'transforms.flatten.delimiter': '_',
      'transforms.json.type': ARRAYS_TO_JSON_CLASS,
      'errors.tolerance': 'all',
      'errors.log.enable': 'true',
      'errors.log.include.messages': 'false',
      'errors.deadletterqueue.topic.name': connectDlqTopicName(topic),
      'errors.deadletterqueue.topic.replication.factor': String(dlqReplication),
      'errors.deadletterqueue.context.headers.enable': 'true',
      // only records of committed transactions (the pipeline's producers may become transactional)
      'consumer.override.isolation.level': 'read_committed',
      'consumer.override.auto.offset.reset': 'earliest',
      ...(options.security === undefined
        ? {}
        : connectorSecurityConfig(options.security, options.secretsFile, options.collectSecrets)),
    },
  };
}

/**
 * The Kafka client settings (Java client names) of the pipeline's security settings: `security.protocol`,
 * `sasl.mechanism`, `sasl.jaas.config`, PEM trust store and (mutual TLS) key store.
 */
export function kafkaClientSecurityConfig(
  s: Partial<SecuritySettings>,
  secretsFile?: string,
  collect?: Map<string, string>,
): Record<string, string> {
  const protocol = s.kafkaSecurityProtocol ?? 'PLAINTEXT';
  if (protocol === 'PLAINTEXT') return {};
  const out: Record<string, string> = { 'security.protocol': protocol };
  if (s.kafkaSaslMechanism === 'OAUTHBEARER')
    // Java's clients fetch their own tokens (sasl.oauthbearer.token.endpoint.url, a login callback handler): a token
    // file of this process is nothing a connector could use
    throw new ConfigError(
      'gamedata connect create with GAMEDATA_KAFKA_SASL_MECHANISM=OAUTHBEARER: the connectors cannot use a token file; give the Connect worker its own OAuth settings and create the connectors with another mechanism',
    );
  if (protocol.startsWith('SASL_') && s.kafkaSaslMechanism !== undefined) {
    const module =
      s.kafkaSaslMechanism === 'PLAIN'
        ? 'org.apache.kafka.common.security.plain.PlainLoginModule'
        : 'org.apache.kafka.common.security.scram.ScramLoginModule';
    out['sasl.mechanism'] = s.kafkaSaslMechanism;
    out['sasl.jaas.config'] = connectorSecret(
      'kafkaSaslJaasConfig',
      `${module} required username=${jaasQuote(s.kafkaSaslUsername ?? '')} password=${jaasQuote(s.kafkaSaslPassword ?? '')};`,
      secretsFile,
      collect,
    );
  }
  if (protocol === 'SSL' || protocol === 'SASL_SSL') {
    if (s.kafkaSslCaLocation !== undefined) {
      out['ssl.truststore.type'] = 'PEM';
      out['ssl.truststore.location'] = s.kafkaSslCaLocation;
    }
    if (s.kafkaSslCertificateLocation !== undefined && s.kafkaSslKeyLocation !== undefined) {
      // Kafka's PEM key store takes the certificate chain and the (PKCS#8) key as values
      out['ssl.keystore.type'] = 'PEM';
      out['ssl.keystore.certificate.chain'] = readFileSync(s.kafkaSslCertificateLocation, 'utf8');
      out['ssl.keystore.key'] = connectorSecret(
        'kafkaSslKeystoreKey',
        readFileSync(s.kafkaSslKeyLocation, 'utf8'),
        secretsFile,
        collect,
      );
      if (s.kafkaSslKeyPassword !== undefined)
        out['ssl.key.password'] = connectorSecret(
          'kafkaSslKeyPassword',
          s.kafkaSslKeyPassword,
          secretsFile,
          collect,
        );
    }
  }
  return out;
}

/** The connector settings for {@link ConnectorSecurity}. */
export function connectorSecurityConfig(
  security: ConnectorSecurity,
  secretsFile?: string,
  collect?: Map<string, string>,
): Record<string, string> {
  const out: Record<string, string> = {};
  const kafka = kafkaClientSecurityConfig(security.settings, secretsFile, collect);
  // the sink's consumer, the dead-letter queue's producer and the admin that creates that topic
  for (const client of ['consumer', 'producer', 'admin'])
    for (const [key, value] of Object.entries(kafka)) out[`${client}.override.${key}`] = value;
  const s = security.settings;
  const registryAuth =
    s.schemaRegistryBasicAuthUserInfo !== undefined || s.schemaRegistryBearerToken !== undefined;
  if (registryAuth && security.registryUrl !== undefined) {
    // A connector that sets converter properties must name the converter and all of them (the worker's are not merged).
    const v2 = security.registryUrl.replace(/\/apis\/ccompat\/v\d+\/?$/, '') + '/apis/registry/v2';
    out['value.converter'] = AVRO_CONVERTER_CLASS;
    out['value.converter.apicurio.registry.url'] = v2;
    out['value.converter.apicurio.registry.as-confluent'] = 'true';
    out['value.converter.apicurio.registry.use-id'] = 'contentId';
    out['value.converter.apicurio.registry.headers.enabled'] = 'false';
    if (s.schemaRegistryBasicAuthUserInfo !== undefined) {
      const at = s.schemaRegistryBasicAuthUserInfo.indexOf(':');
      out['value.converter.apicurio.auth.username'] = s.schemaRegistryBasicAuthUserInfo.slice(0, at);
      out['value.converter.apicurio.auth.password'] = connectorSecret(
        'registryPassword',
        s.schemaRegistryBasicAuthUserInfo.slice(at + 1),
        secretsFile,
        collect,
      );
    } else if (s.schemaRegistryBearerToken !== undefined) {
      out['value.converter.apicurio.registry.request.headers.Authorization'] = connectorSecret(
        'registryAuthorization',
        `Bearer ${s.schemaRegistryBearerToken}`,
        secretsFile,
        collect,
      );
    }
    // No trust store here: the converter's client loads it with Java's KeyStore, which has no PEM type. A registry
    // with a private CA must be trusted by the Connect worker's JVM (javax.net.ssl.trustStore).
  }
  return out;
}

/** Connector config keys whose values are secrets (passwords, JAAS, private keys, tokens). */
const SECRET_CONFIG_KEY =
  /password|jaas\.config|keystore\.key$|auth\.user\.info|headers\.authorization$|token/i;

/** A config value that is one config-provider reference (`${file:/path:key}`, `${env:NAME}`): no secret itself. */
const CONFIG_REFERENCE = /^\$\{[a-z][a-z0-9_-]*:[^}]*\}$/i;

/**
 * `config` with every secret value replaced by `[REDACTED]`: what `connect list` prints. A config-provider reference
 * is shown as it is (it names where the secret lives, not the secret).
 */
export function maskConnectorConfig(config: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(config).map(([key, value]) => [
      key,
      SECRET_CONFIG_KEY.test(key) && !CONFIG_REFERENCE.test(value) ? '[REDACTED]' : value,
    ]),
  );
}

/** The keys of `config` that hold a secret inline (not through a config provider): Connect will store it as is. */
export function inlineSecretKeys(config: Readonly<Record<string, string>>): string[] {
  return Object.entries(config)
    .filter(([key, value]) => SECRET_CONFIG_KEY.test(key) && value !== '' && !CONFIG_REFERENCE.test(value))
    .map(([key]) => key);
}

/** A JAAS option value in double quotes (backslash and quote escaped). */
function jaasQuote(value: string): string {
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}
