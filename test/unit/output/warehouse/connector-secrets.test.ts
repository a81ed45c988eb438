/**
 * The sink connectors' secrets through config providers (issue 34, item 4): with a secrets file, no secret is in
 * the config Connect stores, each is a `${file:<path>:<key>}` reference, and the secrets file holds exactly the
 * referenced keys; `connect list` shows the references and masks what is inline.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  buildSinkConnectorConfig,
  connectorSecretsProperties,
  escapePropertyValue,
  inlineSecretKeys,
  maskConnectorConfig,
  type SinkConnectorOptions,
} from '../../../../src/output/warehouse/index.js';

const dir = mkdtempSync(join(tmpdir(), 'connector-secrets-'));
const keyFile = join(dir, 'client.key');
const certFile = join(dir, 'client.pem');
const KEY = '-----BEGIN PRIVATE KEY-----\nMIIEvQ-key-material\n-----END PRIVATE KEY-----\n';
writeFileSync(keyFile, KEY);
writeFileSync(certFile, '-----BEGIN CERTIFICATE-----\nMIIC\n-----END CERTIFICATE-----\n');

const SASL_PW = 'sasl-"pw"\\9';
const secrets = [SASL_PW, 'pg-pass-31', 'reg-pass-77', 'key-pass-55', 'MIIEvQ-key-material'];
const options: SinkConnectorOptions = {
  resource: 'users',
  topicPrefix: 'gamedata',
  warehouseUrl: 'postgresql://gamedata:pg-pass-31@db:5432/gamedata',
  security: {
    settings: {
      kafkaSecurityProtocol: 'SASL_SSL',
      kafkaSaslMechanism: 'SCRAM-SHA-512',
      kafkaSaslUsername: 'gamedata',
      kafkaSaslPassword: SASL_PW,
      kafkaSslCertificateLocation: certFile,
      kafkaSslKeyLocation: keyFile,
      kafkaSslKeyPassword: 'key-pass-55',
      schemaRegistryBasicAuthUserInfo: 'gamedata:reg-pass-77',
    },
    registryUrl: 'https://registry:8081/apis/ccompat/v7',
  },
};
const FILE = '/etc/kafka-connect/gamedata-secrets.properties';

describe('connector secrets through a secrets file', () => {
  it('inline without one (and said so), references with one', () => {
    const inline = buildSinkConnectorConfig(options).config;
    expect(inlineSecretKeys(inline)).toEqual(
      expect.arrayContaining([
        'connection.password',
        'consumer.override.sasl.jaas.config',
        'consumer.override.ssl.keystore.key',
        'consumer.override.ssl.key.password',
        'value.converter.apicurio.auth.password',
      ]),
    );

    const collected = new Map<string, string>();
    const { config } = buildSinkConnectorConfig({ ...options, secretsFile: FILE, collectSecrets: collected });
    const text = JSON.stringify(config);
    for (const secret of secrets) expect(text, secret).not.toContain(secret);
    expect(inlineSecretKeys(config)).toEqual([]);
    expect(config['connection.password']).toBe(`\${file:${FILE}:warehouse.password}`);
    for (const client of ['consumer', 'producer', 'admin']) {
      expect(config[`${client}.override.sasl.jaas.config`]).toBe(`\${file:${FILE}:kafka.sasl.jaas.config}`);
      expect(config[`${client}.override.ssl.keystore.key`]).toBe(`\${file:${FILE}:kafka.ssl.keystore.key}`);
    }
    expect(config['value.converter.apicurio.auth.password']).toBe(`\${file:${FILE}:registry.password}`);
    // every reference names a key the file holds
    const referenced = new Set([...text.matchAll(/\$\{file:[^:]+:([^}]+)\}/g)].map((m) => m[1]));
    expect([...referenced].sort()).toEqual([...collected.keys()].sort());
    // `connect list`: references shown (they are no secrets)
    expect(maskConnectorConfig(config)['connection.password']).toBe(`\${file:${FILE}:warehouse.password}`);
    expect(maskConnectorConfig(buildSinkConnectorConfig(options).config)['connection.password']).toBe(
      '[REDACTED]',
    );
  });

  it('the secrets file is a Java properties file holding each value exactly', () => {
    const collected = new Map<string, string>();
    buildSinkConnectorConfig({ ...options, secretsFile: FILE, collectSecrets: collected });
    const text = connectorSecretsProperties(collected);
    expect(text).toContain('warehouse.password=pg-pass-31\n');
    expect(text).toContain('kafka.ssl.keystore.key=-----BEGIN PRIVATE KEY-----\\nMIIEvQ-key-material\\n');
    expect(text).toContain(
      'kafka.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="gamedata" password="sasl-\\\\"pw\\\\"\\\\\\\\9";',
    );
    expect(escapePropertyValue(' a\tb\\c\u00e9\n')).toBe('\\ a\\tb\\\\c\\u00e9\\n');
  });

  it('GAMEDATA_CONNECT_SECRETS_FILE must be an absolute path without ":" or "}"', async () => {
    const { loadConfig } = await import('../../../../src/foundation/config/load-config.js');
    expect(() => loadConfig({ env: { GAMEDATA_CONNECT_SECRETS_FILE: 'relative/x' } })).toThrow(
      /absolute path/,
    );
    expect(() => loadConfig({ env: { GAMEDATA_CONNECT_SECRETS_FILE: '/a:b' } })).toThrow(/must not contain/);
    expect(loadConfig({ env: { GAMEDATA_CONNECT_SECRETS_FILE: FILE } }).connectSecretsFile).toBe(FILE);
  });
});
