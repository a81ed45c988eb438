import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../../src/foundation/config/load-config.js';
import { resolveClientSecurity } from '../../../../src/foundation/config/security-settings.js';
import { collectSecrets, maskWith } from '../../../../src/foundation/config/secret-values.js';
import { maskSecrets } from '../../../../src/app/cli/mask-secrets.js';
import { ConfigError } from '../../../../src/foundation/errors/index.js';

const dir = mkdtempSync(join(tmpdir(), 'sec-settings-'));
const ca = join(dir, 'ca.pem');
const cert = join(dir, 'client.pem');
const key = join(dir, 'client.key');
writeFileSync(ca, '-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n');
const CERT = '-----BEGIN CERTIFICATE-----\nCERT\n-----END CERTIFICATE-----\n';
const KEY = '-----BEGIN PRIVATE KEY-----\nKEY\n-----END PRIVATE KEY-----\n';
writeFileSync(cert, CERT);
writeFileSync(key, KEY);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const CANARY = 'canary-Pa55w0rd-7f3a';

function configError(env: NodeJS.ProcessEnv): ConfigError {
  try {
    loadConfig({ env });
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error('loadConfig did not throw');
}

describe('security settings', () => {
  it('reads SASL_SSL / SCRAM with a private CA from the environment', () => {
    const config = loadConfig({
      env: {
        GAMEDATA_KAFKA_SECURITY_PROTOCOL: 'sasl_ssl',
        GAMEDATA_KAFKA_SASL_MECHANISM: 'scram-sha-512',
        GAMEDATA_KAFKA_SASL_USERNAME: 'app',
        GAMEDATA_KAFKA_SASL_PASSWORD: CANARY,
        GAMEDATA_KAFKA_SSL_CA_LOCATION: ca,
      },
    });
    expect(config.kafkaSecurityProtocol).toBe('SASL_SSL');
    expect(config.kafkaSaslMechanism).toBe('SCRAM-SHA-512');
    const security = resolveClientSecurity(config);
    expect(security.kafka.sasl).toEqual({ mechanism: 'scram-sha-512', username: 'app', password: CANARY });
    expect(security.kafka.ssl).toEqual({
      ca: '-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n',
    });
  });

  it('reads mutual TLS and registry / Redis / Connect settings from a config file', () => {
    const file = join(dir, 'config.json');
    writeFileSync(
      file,
      JSON.stringify({
        kafkaSecurityProtocol: 'SSL',
        kafkaSslCertificateLocation: cert,
        kafkaSslKeyLocation: key,
        kafkaSslKeyPassword: CANARY,
        schemaRegistryUrl: 'https://registry.example:8081',
        schemaRegistryBasicAuthUserInfo: `sr-user:${CANARY}`,
        schemaRegistrySslCaLocation: ca,
        redisUrl: `rediss://app:${CANARY}@127.0.0.1:6380`,
        redisTlsCaLocation: ca,
        connectBasicAuthUserInfo: `connect:${CANARY}`,
      }),
    );
    const config = loadConfig({ env: {}, configFile: file });
    const security = resolveClientSecurity(config);
    expect(security.kafka).toEqual({ ssl: { cert: CERT, key: KEY, passphrase: CANARY } });
    expect(security.registry.basicAuthUserInfo).toBe(`sr-user:${CANARY}`);
    expect(security.registry.ca).toContain('CA');
    expect(security.redis.ca).toContain('CA');
    expect(security.connectBasicAuthUserInfo).toBe(`connect:${CANARY}`);
  });

  it('defaults to PLAINTEXT with no ssl or sasl', () => {
    const config = loadConfig({ env: {} });
    expect(config.kafkaSecurityProtocol).toBe('PLAINTEXT');
    expect(resolveClientSecurity(config).kafka).toEqual({});
  });

  it('lists every problem at once, naming the settings and never a secret', () => {
    const error = configError({
      GAMEDATA_KAFKA_SECURITY_PROTOCOL: 'SASL_SSL',
      GAMEDATA_KAFKA_SASL_MECHANISM: 'GSSAPI',
      GAMEDATA_KAFKA_SASL_PASSWORD: CANARY,
      GAMEDATA_KAFKA_SSL_CA_LOCATION: join(dir, 'missing.pem'),
      GAMEDATA_KAFKA_SSL_CERTIFICATE_LOCATION: cert,
      GAMEDATA_SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO: CANARY,
      GAMEDATA_SCHEMA_REGISTRY_BEARER_TOKEN: `${CANARY}-token`,
      SCHEMA_REGISTRY_URL: 'http://127.0.0.1:18081',
      GAMEDATA_SCHEMA_REGISTRY_SSL_CA_LOCATION: ca,
      REDIS_URL: `redis://u:${CANARY}@127.0.0.1:1/`,
      GAMEDATA_REDIS_TLS_CA_LOCATION: ca,
    });
    const text = [error.message, ...error.issues].join('\n');
    expect(text).not.toContain(CANARY);
    for (const expected of [
      /GAMEDATA_KAFKA_SASL_MECHANISM \(env\): .*PLAIN/,
      /GAMEDATA_KAFKA_SASL_USERNAME is not set \(GAMEDATA_KAFKA_SECURITY_PROTOCOL=SASL_SSL needs it\)/,
      /GAMEDATA_KAFKA_SSL_CA_LOCATION: no such file: .*missing\.pem/,
      /GAMEDATA_KAFKA_SSL_CERTIFICATE_LOCATION and GAMEDATA_KAFKA_SSL_KEY_LOCATION go together/,
      /GAMEDATA_SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO \(env\): must be user:password .*; got \[REDACTED\]/,
      /GAMEDATA_SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO and GAMEDATA_SCHEMA_REGISTRY_BEARER_TOKEN|SSL_CA_LOCATION is set but SCHEMA_REGISTRY_URL/,
      /GAMEDATA_SCHEMA_REGISTRY_SSL_CA_LOCATION is set but SCHEMA_REGISTRY_URL is not an https:\/\/ URL/,
      /GAMEDATA_REDIS_TLS_CA_LOCATION is set but REDIS_URL is not a rediss:\/\/ URL/,
    ])
      expect(text).toMatch(expected);
  });

  it('refuses SASL or TLS files under a protocol that does not use them', () => {
    const error = configError({
      GAMEDATA_KAFKA_SASL_USERNAME: 'app',
      GAMEDATA_KAFKA_SSL_CA_LOCATION: ca,
    });
    expect(error.issues).toEqual([
      'GAMEDATA_KAFKA_SASL_USERNAME is set but GAMEDATA_KAFKA_SECURITY_PROTOCOL is PLAINTEXT (SASL needs SASL_SSL or SASL_PLAINTEXT)',
      'GAMEDATA_KAFKA_SSL_CA_LOCATION is set but GAMEDATA_KAFKA_SECURITY_PROTOCOL is PLAINTEXT (TLS needs SSL or SASL_SSL)',
    ]);
  });

  it('reports a path that is not a readable file', () => {
    const error = configError({
      GAMEDATA_KAFKA_SECURITY_PROTOCOL: 'SSL',
      GAMEDATA_KAFKA_SSL_CA_LOCATION: dir,
    });
    expect(error.message).toBe(`invalid configuration: GAMEDATA_KAFKA_SSL_CA_LOCATION: not a file: ${dir}`);
  });

  it('does not echo the password of a REDIS_URL it rejects', () => {
    const error = configError({ REDIS_URL: `redis://app:${CANARY}@` });
    expect(error.message).not.toContain(CANARY);
    expect(error.message).toContain('redis://app:[REDACTED]@');
  });
});

describe('one list of secrets', () => {
  const env: NodeJS.ProcessEnv = {
    GAMEDATA_API_KEY: 'api-key-1234',
    GAMEDATA_KAFKA_SECURITY_PROTOCOL: 'SASL_SSL',
    GAMEDATA_KAFKA_SASL_MECHANISM: 'PLAIN',
    GAMEDATA_KAFKA_SASL_USERNAME: 'app',
    GAMEDATA_KAFKA_SASL_PASSWORD: CANARY,
    GAMEDATA_SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO: 'sr:sr-secret-99',
    GAMEDATA_CONNECT_BASIC_AUTH_USER_INFO: 'co:connect-secret-42',
    REDIS_URL: 'rediss://app:gamedata@127.0.0.1:6380',
  };

  it('masks every declared secret wherever it appears, URL passwords inside URLs', () => {
    const secrets = collectSecrets(env);
    const line = `sasl ${CANARY} key api-key-1234 sr sr:sr-secret-99 pw connect-secret-42 url rediss://app:gamedata@127.0.0.1:6380 word gamedata`;
    const masked = maskSecrets(line, secrets);
    expect(masked).toBe(
      'sasl [REDACTED] key [REDACTED] sr [REDACTED] pw [REDACTED] url rediss://app:[REDACTED]@127.0.0.1:6380 word gamedata',
    );
  });

  it('still masks the environment when the config is invalid', () => {
    const secrets = collectSecrets({
      ...env,
      REDIS_URL: `redis://u:${CANARY}x@`,
      GAMEDATA_KAFKA_SSL_CA_LOCATION: '/nope',
    });
    expect(maskWith(`a ${CANARY} b redis://u:${CANARY}x@`, secrets)).not.toContain(CANARY);
  });
});
