/**
 * docs/configuration.md's security table (issue 34): every security setting has a row with its Confluent equivalent
 * and what a wrong value prints, and the first line quoted for a wrong value is what `loadConfig` really prints for one.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../../src/foundation/config/load-config.js';
import { SECURITY_ENV_NAMES } from '../../../../src/foundation/config/security-settings.js';

const DOC = readFileSync(
  fileURLToPath(new URL('../../../../docs/configuration.md', import.meta.url)),
  'utf8',
);

/** The rows of the table under "| Setting | Confluent / Kafka equivalent | A wrong value prints |". */
function rows(): { settings: string[]; confluent: string; prints: string }[] {
  const start = DOC.indexOf('| Setting | Confluent / Kafka equivalent | A wrong value prints |');
  expect(start).toBeGreaterThan(0);
  const out: { settings: string[]; confluent: string; prints: string }[] = [];
  for (const line of DOC.slice(start).split('\n').slice(2)) {
    if (!line.startsWith('|')) break;
    // cells split on | not escaped as \|
    const cells = line
      .split(/(?<!\\)\|/)
      .slice(1, -1)
      .map((c) => c.trim().replaceAll('\\|', '|'));
    out.push({
      settings: [...(cells[0] ?? '').matchAll(/`([A-Z0-9_]+)`/g)].map((m) => m[1] ?? ''),
      confluent: cells[1] ?? '',
      prints: cells[2] ?? '',
    });
  }
  return out;
}

const dir = mkdtempSync(join(tmpdir(), 'security-docs-'));
const pem = join(dir, 'ca.pem');
writeFileSync(pem, '-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n');
const sasl = { GAMEDATA_KAFKA_SECURITY_PROTOCOL: 'SASL_SSL' };
const oauth = { ...sasl, GAMEDATA_KAFKA_SASL_MECHANISM: 'OAUTHBEARER' };
const endpoint = { ...oauth, GAMEDATA_KAFKA_SASL_OAUTHBEARER_TOKEN_ENDPOINT_URL: 'http://127.0.0.1:1/token' };
const ssl = { GAMEDATA_KAFKA_SECURITY_PROTOCOL: 'SSL' };

/** A wrong value of each setting. */
const WRONG: Record<string, NodeJS.ProcessEnv> = {
  GAMEDATA_KAFKA_SECURITY_PROTOCOL: { GAMEDATA_KAFKA_SECURITY_PROTOCOL: 'TLS' },
  GAMEDATA_KAFKA_SASL_MECHANISM: { ...sasl, GAMEDATA_KAFKA_SASL_MECHANISM: 'GSSAPI' },
  GAMEDATA_KAFKA_SASL_USERNAME: {
    ...sasl,
    GAMEDATA_KAFKA_SASL_MECHANISM: 'PLAIN',
    GAMEDATA_KAFKA_SASL_PASSWORD: 'p-123456',
  },
  GAMEDATA_KAFKA_SASL_PASSWORD: {
    ...sasl,
    GAMEDATA_KAFKA_SASL_MECHANISM: 'PLAIN',
    GAMEDATA_KAFKA_SASL_USERNAME: 'u',
  },
  GAMEDATA_KAFKA_SASL_OAUTHBEARER_TOKEN_FILE: {
    ...oauth,
    GAMEDATA_KAFKA_SASL_OAUTHBEARER_TOKEN_FILE: join(dir, 'no'),
  },
  GAMEDATA_KAFKA_SASL_OAUTHBEARER_TOKEN_ENDPOINT_URL: {
    ...endpoint,
    GAMEDATA_KAFKA_SASL_OAUTHBEARER_TOKEN_ENDPOINT_URL: 'ftp://idp/token',
    GAMEDATA_KAFKA_SASL_OAUTHBEARER_CLIENT_ID: 'c',
    GAMEDATA_KAFKA_SASL_OAUTHBEARER_CLIENT_SECRET: 's-123456',
  },
  GAMEDATA_KAFKA_SASL_OAUTHBEARER_CLIENT_ID: {
    ...endpoint,
    GAMEDATA_KAFKA_SASL_OAUTHBEARER_CLIENT_SECRET: 's-123456',
  },
  GAMEDATA_KAFKA_SASL_OAUTHBEARER_CLIENT_SECRET: {
    ...endpoint,
    GAMEDATA_KAFKA_SASL_OAUTHBEARER_CLIENT_ID: 'c',
  },
  GAMEDATA_KAFKA_SASL_OAUTHBEARER_SCOPE: {
    ...oauth,
    GAMEDATA_KAFKA_SASL_OAUTHBEARER_TOKEN_FILE: pem,
    GAMEDATA_KAFKA_SASL_OAUTHBEARER_SCOPE: 'kafka',
  },
  GAMEDATA_KAFKA_SASL_OAUTHBEARER_TOKEN_ENDPOINT_CA_LOCATION: {
    ...endpoint,
    GAMEDATA_KAFKA_SASL_OAUTHBEARER_CLIENT_ID: 'c',
    GAMEDATA_KAFKA_SASL_OAUTHBEARER_CLIENT_SECRET: 's-123456',
    GAMEDATA_KAFKA_SASL_OAUTHBEARER_TOKEN_ENDPOINT_CA_LOCATION: pem,
  },
  GAMEDATA_KAFKA_SSL_CA_LOCATION: { ...ssl, GAMEDATA_KAFKA_SSL_CA_LOCATION: join(dir, 'no.pem') },
  GAMEDATA_KAFKA_SSL_CERTIFICATE_LOCATION: { ...ssl, GAMEDATA_KAFKA_SSL_CERTIFICATE_LOCATION: pem },
  GAMEDATA_KAFKA_SSL_KEY_LOCATION: { ...ssl, GAMEDATA_KAFKA_SSL_KEY_LOCATION: pem },
  GAMEDATA_KAFKA_SSL_KEY_PASSWORD: { ...ssl, GAMEDATA_KAFKA_SSL_KEY_PASSWORD: 'k-123456' },
  GAMEDATA_SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO: { GAMEDATA_SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO: 'nocolon' },
  GAMEDATA_SCHEMA_REGISTRY_BEARER_TOKEN: {
    GAMEDATA_SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO: 'u:p-123456',
    GAMEDATA_SCHEMA_REGISTRY_BEARER_TOKEN: 't-123456',
  },
  GAMEDATA_SCHEMA_REGISTRY_SSL_CA_LOCATION: {
    SCHEMA_REGISTRY_URL: 'http://127.0.0.1:1',
    GAMEDATA_SCHEMA_REGISTRY_SSL_CA_LOCATION: pem,
  },
  REDIS_URL: { REDIS_URL: 'http://u:p@127.0.0.1:1' },
  GAMEDATA_REDIS_TLS_CA_LOCATION: { REDIS_URL: 'redis://127.0.0.1:1', GAMEDATA_REDIS_TLS_CA_LOCATION: pem },
  GAMEDATA_CONNECT_BASIC_AUTH_USER_INFO: { GAMEDATA_CONNECT_BASIC_AUTH_USER_INFO: 'nocolon' },
  GAMEDATA_CONNECT_SSL_CA_LOCATION: {
    CONNECT_URL: 'http://127.0.0.1:1',
    GAMEDATA_CONNECT_SSL_CA_LOCATION: pem,
  },
  GAMEDATA_CONNECT_SECRETS_FILE: { GAMEDATA_CONNECT_SECRETS_FILE: 'relative/secrets.properties' },
};

function printed(env: NodeJS.ProcessEnv): string {
  try {
    loadConfig({ env: { KAFKA_BROKERS: '127.0.0.1:1', ...env } });
    return '(no error)';
  } catch (error) {
    return (error as Error).message;
  }
}

describe("docs/configuration.md's security table", () => {
  it('has a row for every security setting, each with its Confluent equivalent and what a wrong value prints', () => {
    const table = rows();
    const documented = new Set(table.flatMap((r) => r.settings));
    for (const name of [...Object.values(SECURITY_ENV_NAMES), 'REDIS_URL'])
      expect({ name, documented: documented.has(name) }).toEqual({ name, documented: true });
    for (const row of table) {
      expect(row.confluent, row.settings.join()).not.toBe('');
      expect(row.prints, row.settings.join()).toMatch(/`[^`]+`/);
    }
  });

  it('quotes, for each setting, the line loadConfig prints for a wrong value', () => {
    for (const row of rows()) {
      const setting = row.settings[0] ?? '';
      const env = WRONG[setting];
      expect({ setting, hasCase: env !== undefined }).toEqual({ setting, hasCase: true });
      const quoted = /`([^`]+)`/.exec(row.prints)?.[1] ?? '';
      const actual = printed(env ?? {});
      expect({ setting, quoted, found: actual.includes(quoted) }, actual).toEqual({
        setting,
        quoted,
        found: true,
      });
    }
  });
});
