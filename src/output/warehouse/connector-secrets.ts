/**
 * The sink connectors' secrets through Kafka's config providers, never inline. Connect keeps a connector's config in
 * its config topic and gives it back from its REST API (`GET /connectors/<name>/config`): an inline password is at
 * rest in plain text in Kafka and in every listing. With a secrets file, each secret in the config is a reference
 * `${file:<path>:<key>}`, which the worker's `FileConfigProvider` resolves when it starts the connector's tasks
 * (worker setting `config.providers=file`,
 * `config.providers.file.class=org.apache.kafka.common.config.provider.FileConfigProvider`). The file, a Java
 * properties file on the worker, holds the keys of {@link CONNECTOR_SECRET_KEYS}; `gamedata connect secrets-file`
 * writes it from the pipeline's settings (mode 600).
 */

/** The keys of the secrets file, per secret. */
export const CONNECTOR_SECRET_KEYS = {
  /** The warehouse user's password (`connection.password`). */
  warehousePassword: 'warehouse.password',
  /** The whole `sasl.jaas.config` line of the connector's Kafka clients (it holds the SASL password). */
  kafkaSaslJaasConfig: 'kafka.sasl.jaas.config',
  /** The PEM private key of the client certificate (`ssl.keystore.key`, mutual TLS). */
  kafkaSslKeystoreKey: 'kafka.ssl.keystore.key',
  /** The passphrase of that key (`ssl.key.password`). */
  kafkaSslKeyPassword: 'kafka.ssl.key.password',
  /** The registry password of the Avro converter (`value.converter.apicurio.auth.password`). */
  registryPassword: 'registry.password',
  /** The registry's `Authorization: Bearer <token>` header value. */
  registryAuthorization: 'registry.authorization',
  /** The Iceberg JDBC catalog database's password (`iceberg.catalog.jdbc.password`, the Iceberg sink). */
  icebergCatalogPassword: 'iceberg.catalog.password',
} as const;

export type ConnectorSecretName = keyof typeof CONNECTOR_SECRET_KEYS;

/**
 * What goes in a connector config for a secret: with a secrets file, the reference to its key; without, the value.
 * @example connectorSecret('warehousePassword', 'pw', '/etc/connect/gamedata.properties')
 * // '${file:/etc/connect/gamedata.properties:warehouse.password}'
 */
export function connectorSecret(
  name: ConnectorSecretName,
  value: string,
  secretsFile: string | undefined,
  collect?: Map<string, string>,
): string {
  const key = CONNECTOR_SECRET_KEYS[name];
  collect?.set(key, value);
  return secretsFile === undefined ? value : `\${file:${secretsFile}:${key}}`;
}

/** One value of a Java properties file (`Properties.load`): backslashes, line breaks, leading blanks, non-ASCII. */
export function escapePropertyValue(value: string): string {
  let out = '';
  for (const [i, ch] of [...value].entries()) {
    const code = ch.codePointAt(0) ?? 0;
    if (ch === '\\') out += '\\\\';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch === ' ' && i === 0) out += '\\ ';
    else if (code < 0x20 || code > 0x7e)
      // UTF-16 units as \uXXXX (Properties.load reads ISO-8859-1 otherwise)
      for (const unit of ch.split('')) out += `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`;
    else out += ch;
  }
  return out;
}

/** The secrets file's text: one `key=value` line per secret (sorted), with a header saying what it is. */
export function connectorSecretsProperties(secrets: ReadonlyMap<string, string>): string {
  const lines = [...secrets.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, value]) => `${key}=${escapePropertyValue(value)}`);
  return [
    '# Secrets of the gamedata sink connectors, read by the Connect worker (FileConfigProvider). Keep it mode 600.',
    ...lines,
    '',
  ].join('\n');
}
