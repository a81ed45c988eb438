import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { maskSecrets } from '../../../../src/app/cli/mask-secrets.js';
import { collectSecrets } from '../../../../src/foundation/config/secret-values.js';
import { ServiceError } from '../../../../src/foundation/errors/index.js';
import {
  buildSinkConnectorConfig,
  createConnectClient,
  maskConnectorConfig,
} from '../../../../src/output/warehouse/index.js';

const CANARY = 'canary-Connect-9b2e';
const dir = mkdtempSync(join(tmpdir(), 'connector-security-'));
const cert = join(dir, 'client.pem');
const key = join(dir, 'client.key');
writeFileSync(cert, '-----BEGIN CERTIFICATE-----\nC\n-----END CERTIFICATE-----\n');
writeFileSync(key, '-----BEGIN PRIVATE KEY-----\nK\n-----END PRIVATE KEY-----\n');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const base = {
  resource: 'users' as const,
  topicPrefix: 'gamedata',
  warehouseUrl: 'postgresql://gd:pg-secret-77@127.0.0.1:15432/gamedata',
};

describe('sink connector security', () => {
  it('gives the sink consumer, the DLQ producer and admin the SASL_SSL settings, and the converter the registry auth', () => {
    const { config } = buildSinkConnectorConfig({
      ...base,
      security: {
        settings: {
          kafkaSecurityProtocol: 'SASL_SSL',
          kafkaSaslMechanism: 'SCRAM-SHA-512',
          kafkaSaslUsername: 'app',
          kafkaSaslPassword: CANARY,
          kafkaSslCaLocation: '/etc/ca.pem',
          schemaRegistryBasicAuthUserInfo: `sr:${CANARY}`,
          schemaRegistrySslCaLocation: '/etc/ca.pem',
        },
        registryUrl: 'https://127.0.0.1:28082/apis/ccompat/v7',
      },
    });
    for (const client of ['consumer', 'producer', 'admin']) {
      expect(config[`${client}.override.security.protocol`]).toBe('SASL_SSL');
      expect(config[`${client}.override.sasl.mechanism`]).toBe('SCRAM-SHA-512');
      expect(config[`${client}.override.sasl.jaas.config`]).toBe(
        `org.apache.kafka.common.security.scram.ScramLoginModule required username="app" password="${CANARY}";`,
      );
      expect(config[`${client}.override.ssl.truststore.type`]).toBe('PEM');
      expect(config[`${client}.override.ssl.truststore.location`]).toBe('/etc/ca.pem');
    }
    expect(config['consumer.override.isolation.level']).toBe('read_committed');
    expect(config['value.converter']).toBe('io.apicurio.registry.utils.converter.AvroConverter');
    expect(config['value.converter.apicurio.registry.url']).toBe('https://127.0.0.1:28082/apis/registry/v2');
    expect(config['value.converter.apicurio.auth.username']).toBe('sr');
    expect(config['value.converter.apicurio.auth.password']).toBe(CANARY);
    // Java's KeyStore has no PEM type: the registry CA is left to the worker's JVM
    expect(
      Object.keys(config).filter((k) => k.startsWith('value.converter') && k.includes('truststore')),
    ).toEqual([]);

    const masked = JSON.stringify(maskConnectorConfig(config));
    expect(masked).not.toContain(CANARY);
    expect(masked).not.toContain('pg-secret-77');
    expect(maskConnectorConfig(config)['consumer.override.sasl.mechanism']).toBe('SCRAM-SHA-512');
  });

  it('carries a client certificate and key for mutual TLS (the key masked)', () => {
    const { config } = buildSinkConnectorConfig({
      ...base,
      security: {
        settings: {
          kafkaSecurityProtocol: 'SSL',
          kafkaSslCertificateLocation: cert,
          kafkaSslKeyLocation: key,
        },
      },
    });
    expect(config['consumer.override.security.protocol']).toBe('SSL');
    expect(config['consumer.override.ssl.keystore.type']).toBe('PEM');
    expect(config['consumer.override.ssl.keystore.certificate.chain']).toContain('BEGIN CERTIFICATE');
    expect(config['consumer.override.ssl.keystore.key']).toContain('BEGIN PRIVATE KEY');
    expect(config['value.converter']).toBeUndefined();
    expect(JSON.stringify(maskConnectorConfig(config))).not.toContain('BEGIN PRIVATE KEY');
  });

  it('adds nothing for a plaintext cluster without registry credentials', () => {
    const plain = buildSinkConnectorConfig(base).config;
    const withNone = buildSinkConnectorConfig({
      ...base,
      security: { settings: { kafkaSecurityProtocol: 'PLAINTEXT' } },
    }).config;
    expect(withNone).toEqual(plain);
  });

  it('the Connect REST client sends basic auth, and 401 is one non-retried line without the password', async () => {
    const seen: (string | null)[] = [];
    let calls = 0;
    const fetch = ((_input: string | URL | Request, init?: RequestInit) => {
      calls++;
      seen.push(new Headers(init?.headers).get('authorization'));
      return Promise.resolve(new Response('{"error_code":401,"message":"Unauthorized"}', { status: 401 }));
    }) as typeof globalThis.fetch;
    const client = createConnectClient({
      url: 'http://127.0.0.1:18083',
      fetch,
      basicAuthUserInfo: `co:${CANARY}`,
    });
    const error: unknown = await client.listConnectors().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServiceError);
    expect((error as ServiceError).retriable).toBe(false);
    expect((error as ServiceError).message).toBe(
      'Kafka Connect at 127.0.0.1:18083: authentication failed (HTTP 401) (check GAMEDATA_CONNECT_BASIC_AUTH_USER_INFO)',
    );
    expect(calls).toBe(1);
    expect(seen[0]).toBe(`Basic ${Buffer.from(`co:${CANARY}`).toString('base64')}`);
  });

  it('the CLI masks the Connect password and the registry password alone', () => {
    const secrets = collectSecrets({
      GAMEDATA_CONNECT_BASIC_AUTH_USER_INFO: `co:${CANARY}`,
      GAMEDATA_SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO: 'sr:registry-pw-31',
    });
    expect(maskSecrets(`a ${CANARY} b registry-pw-31 c`, secrets)).toBe('a [REDACTED] b [REDACTED] c');
  });
});
