/**
 * Low items of the security review (issue 34, item 5): a config file that is not JSON is reported without quoting
 * its text (a password with it); a key or certificate that is not PEM is one config line at start; the Redis TLS
 * scheme is case-insensitive (`REDISS://` keeps its CA).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../../src/foundation/config/load-config.js';
import { plaintextCredentialWarnings } from '../../../../src/foundation/config/security-settings.js';
import { redisTlsOptions } from '../../../../src/pipeline/queue/connect-redis.js';

const dir = mkdtempSync(join(tmpdir(), 'config-hygiene-'));
const PEM_CA = '-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n';

function configError(env: NodeJS.ProcessEnv): string {
  try {
    loadConfig({ env });
  } catch (error) {
    const e = error as Error & { issues?: string[] };
    return [e.message, ...(e.issues ?? [])].join('\n');
  }
  return 'no error';
}

describe('config hygiene', () => {
  it('an invalid config file: where the error is, never the text around it', () => {
    const file = join(dir, 'bad.json');
    writeFileSync(file, '{\n  "kafkaBrokers": "b:1",\n  "kafkaSaslPassword": hunter2-canary\n}\n');
    const message = configError({ GAMEDATA_CONFIG: file });
    expect(message).toMatch(/is not valid JSON \(a syntax error/);
    // a message that gives a position: line and column
    writeFileSync(file, `{\n  "a": "x" "hunter2-canary"\n}`);
    expect(configError({ GAMEDATA_CONFIG: file })).toMatch(
      /is not valid JSON \(a syntax error at line 2, column 12\)/,
    );
    expect(message).not.toContain('hunter2');
  });

  it('a key or certificate file without a PEM block: one line naming the setting', () => {
    const ca = join(dir, 'ca.pem');
    const der = join(dir, 'client.der');
    writeFileSync(ca, PEM_CA);
    writeFileSync(der, Buffer.from([0x30, 0x82, 0x04, 0xa4, 0x02, 0x01, 0x00]));
    const message = configError({
      GAMEDATA_KAFKA_SECURITY_PROTOCOL: 'SSL',
      GAMEDATA_KAFKA_SSL_CA_LOCATION: ca,
      GAMEDATA_KAFKA_SSL_CERTIFICATE_LOCATION: der,
      GAMEDATA_KAFKA_SSL_KEY_LOCATION: der,
    });
    expect(message).toMatch(/GAMEDATA_KAFKA_SSL_KEY_LOCATION: not a PEM file/);
    expect(message).toMatch(/GAMEDATA_KAFKA_SSL_CERTIFICATE_LOCATION: not a PEM file/);
    expect(message).not.toMatch(/GAMEDATA_KAFKA_SSL_CA_LOCATION/);
  });

  it('REDISS:// is TLS with its CA, whatever the case of the scheme', () => {
    const ca = join(dir, 'redis-ca.pem');
    writeFileSync(ca, PEM_CA);
    expect(redisTlsOptions('REDISS://u:p@h:1', { ca: PEM_CA })).toEqual({ tls: { ca: PEM_CA } });
    expect(redisTlsOptions('redis://u:p@h:1', { ca: PEM_CA })).toEqual({});
    expect(configError({ REDIS_URL: 'REDISS://h:6380', GAMEDATA_REDIS_TLS_CA_LOCATION: ca })).toBe(
      'no error',
    );
  });
});

describe('plaintext credential warnings', () => {
  const none = { kafkaBrokers: ['broker.example:9092'], schemaRegistryUrl: undefined, redisUrl: undefined };
  it('SASL PLAIN over SASL_PLAINTEXT, registry credentials over http://, a Redis password over redis://', () => {
    const lines = plaintextCredentialWarnings(
      {
        kafkaSecurityProtocol: 'SASL_PLAINTEXT',
        kafkaSaslMechanism: 'PLAIN',
        schemaRegistryBasicAuthUserInfo: 'u:reg-pw-canary',
      },
      {
        kafkaBrokers: ['broker.example:9092'],
        schemaRegistryUrl: 'http://registry.example:8081',
        redisUrl: 'redis://:redis-pw-canary@redis.example:6379',
      },
    );
    expect(lines).toHaveLength(3);
    expect(lines.join('\n')).not.toMatch(/canary/);
  });
  it('nothing for TLS, SCRAM, no credentials, or loopback addresses', () => {
    expect(
      plaintextCredentialWarnings(
        { kafkaSecurityProtocol: 'SASL_PLAINTEXT', kafkaSaslMechanism: 'SCRAM-SHA-512' },
        none,
      ),
    ).toEqual([]);
    expect(
      plaintextCredentialWarnings({ kafkaSecurityProtocol: 'SASL_SSL', kafkaSaslMechanism: 'PLAIN' }, none),
    ).toEqual([]);
    expect(
      plaintextCredentialWarnings(
        {},
        { ...none, schemaRegistryUrl: 'http://registry.example', redisUrl: 'redis://redis.example' },
      ),
    ).toEqual([]);
    expect(
      plaintextCredentialWarnings(
        {
          kafkaSecurityProtocol: 'SASL_PLAINTEXT',
          kafkaSaslMechanism: 'PLAIN',
          schemaRegistryBearerToken: 'tok-123',
        },
        {
          kafkaBrokers: ['127.0.0.1:9092'],
          schemaRegistryUrl: 'http://localhost:8081',
          redisUrl: 'redis://:pw12@127.0.0.1:6379',
        },
      ),
    ).toEqual([]);
  });
});
