/** SASL OAUTHBEARER with a static token file (issue 34, item 6): settings, checks, and the kafkajs token provider. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../../src/foundation/config/load-config.js';
import { resolveClientSecurity } from '../../../../src/foundation/config/security-settings.js';

const dir = mkdtempSync(join(tmpdir(), 'oauthbearer-'));
const tokenFile = join(dir, 'token');
writeFileSync(tokenFile, 'header.payload-one.\n');
const base = {
  KAFKA_BROKERS: 'b:9093',
  GAMEDATA_KAFKA_SECURITY_PROTOCOL: 'SASL_SSL',
  GAMEDATA_KAFKA_SASL_MECHANISM: 'oauthbearer',
};

function issues(env: NodeJS.ProcessEnv): string {
  try {
    loadConfig({ env });
    return '';
  } catch (error) {
    const e = error as Error & { issues?: string[] };
    return [e.message, ...(e.issues ?? [])].join('\n');
  }
}

describe('OAUTHBEARER', () => {
  it('needs the token file, not a user and password', () => {
    expect(issues({ ...base })).toMatch(/GAMEDATA_KAFKA_SASL_OAUTHBEARER_TOKEN_FILE is not set/);
    expect(issues({ ...base })).not.toMatch(/GAMEDATA_KAFKA_SASL_USERNAME is not set/);
    expect(issues({ ...base, GAMEDATA_KAFKA_SASL_OAUTHBEARER_TOKEN_FILE: tokenFile })).toBe('');
    expect(
      issues({
        ...base,
        GAMEDATA_KAFKA_SASL_OAUTHBEARER_TOKEN_FILE: tokenFile,
        GAMEDATA_KAFKA_SASL_PASSWORD: 'pw-1234',
      }),
    ).toMatch(/are set but GAMEDATA_KAFKA_SASL_MECHANISM is OAUTHBEARER/);
    expect(
      issues({
        ...base,
        GAMEDATA_KAFKA_SASL_MECHANISM: 'SCRAM-SHA-512',
        GAMEDATA_KAFKA_SASL_USERNAME: 'u',
        GAMEDATA_KAFKA_SASL_PASSWORD: 'pw-1234',
        GAMEDATA_KAFKA_SASL_OAUTHBEARER_TOKEN_FILE: tokenFile,
      }),
    ).toMatch(
      /GAMEDATA_KAFKA_SASL_OAUTHBEARER_TOKEN_FILE is set but GAMEDATA_KAFKA_SASL_MECHANISM is not OAUTHBEARER/,
    );
    expect(issues({ ...base, GAMEDATA_KAFKA_SASL_OAUTHBEARER_TOKEN_FILE: join(dir, 'missing') })).toMatch(
      /GAMEDATA_KAFKA_SASL_OAUTHBEARER_TOKEN_FILE: no such file/,
    );
  });

  it('gives kafkajs a provider that reads the file at each authentication (a refreshed token is picked up)', async () => {
    const config = loadConfig({ env: { ...base, GAMEDATA_KAFKA_SASL_OAUTHBEARER_TOKEN_FILE: tokenFile } });
    const sasl = resolveClientSecurity(config).kafka.sasl;
    expect(sasl?.mechanism).toBe('oauthbearer');
    if (sasl?.mechanism !== 'oauthbearer') throw new Error('not oauthbearer');
    expect(await sasl.oauthBearerProvider()).toEqual({ value: 'header.payload-one.' });
    writeFileSync(tokenFile, 'header.payload-two.');
    expect(await sasl.oauthBearerProvider()).toEqual({ value: 'header.payload-two.' });
    writeFileSync(tokenFile, '  \n');
    await expect(sasl.oauthBearerProvider()).rejects.toThrow(/OAUTHBEARER_TOKEN_FILE: .* is empty/);
  });
});
