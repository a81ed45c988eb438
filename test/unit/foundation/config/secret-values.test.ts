import { describe, expect, it } from 'vitest';
import { addressOf, withoutCredentials } from '../../../../src/foundation/config/address-of.js';
import {
  MASK,
  maskDeep,
  maskError,
  maskWith,
  NO_SECRETS,
  secretsOf,
  type Secrets,
} from '../../../../src/foundation/config/secret-values.js';
import { ServiceError } from '../../../../src/foundation/errors/index.js';

// a password with a quote and a backslash: JSON escapes both
const PASSWORD = 'pa"ss\\w0rd-7';
const secrets: Secrets = secretsOf({
  kafkaSaslPassword: PASSWORD,
  schemaRegistryBasicAuthUserInfo: 'gamedata:reg-secret-42',
  apiKey: 'ab1', // under 4 characters
  redisUrl: 'rediss://gamedata:r3dis-pw@127.0.0.1:26479',
});

describe('maskWith', () => {
  it('masks a secret raw, JSON-escaped (once and twice), URL-encoded and in base64', () => {
    const once = JSON.stringify(PASSWORD).slice(1, -1);
    const twice = JSON.stringify(once).slice(1, -1);
    const forms = [
      PASSWORD,
      once,
      twice,
      encodeURIComponent(PASSWORD),
      Buffer.from(PASSWORD).toString('base64'),
      Buffer.from(PASSWORD).toString('base64url'),
    ];
    for (const form of forms) {
      const out = maskWith(`before ${form} after`, secrets);
      expect(out, form).toBe(`before ${MASK} after`);
    }
  });

  it('masks the base64 of a user:password (what HTTP basic auth sends) and the password alone', () => {
    const header = `authorization: Basic ${Buffer.from('gamedata:reg-secret-42').toString('base64')}`;
    expect(maskWith(header, secrets)).toBe(`authorization: Basic ${MASK}`);
    expect(maskWith('password reg-secret-42 refused', secrets)).toBe(`password ${MASK} refused`);
  });

  it('masks the credentials of any URL, known or not, and keeps the address', () => {
    expect(maskWith('GET https://someone:hunter2@registry.example:8081/subjects failed', NO_SECRETS)).toBe(
      `GET https://someone:${MASK}@registry.example:8081/subjects failed`,
    );
    expect(maskWith('redis://:x@127.0.0.1:6379 refused', NO_SECRETS)).toBe(
      `redis://:${MASK}@127.0.0.1:6379 refused`,
    );
    // no credentials: unchanged
    expect(maskWith('https://registry.example:8081/x and a:b@c', NO_SECRETS)).toBe(
      'https://registry.example:8081/x and a:b@c',
    );
  });

  it('masks a secret under 4 characters where it stands whole, not inside words', () => {
    expect(secrets.short).toEqual(['ab1']);
    expect(maskWith('key="ab1"', secrets)).toBe(`key="${MASK}"`);
    expect(maskWith('api_key=ab1&x=1', secrets)).toBe(`api_key=${MASK}&x=1`);
    expect(maskWith('{"apiKey": "ab1"}', secrets)).toBe(`{"apiKey": "${MASK}"}`);
    expect(maskWith('http://u:ab1@h:1/', secrets)).toBe(`http://u:${MASK}@h:1/`);
    expect(maskWith('tab1e ab12 cab1', secrets)).toBe('tab1e ab12 cab1');
  });
});

describe('maskError', () => {
  it('masks the message, the stack and the causes in place (the class stays)', () => {
    const cause = new Error(`connect to https://u:${encodeURIComponent(PASSWORD)}@h:1 failed`);
    const error = new ServiceError(`registry said: bad password ${PASSWORD}`, 'schema-registry', {
      cause,
      retriable: true,
    });
    const masked = maskError(error, secrets);
    expect(masked).toBe(error);
    expect(masked).toBeInstanceOf(ServiceError);
    expect(masked.retriable).toBe(true);
    expect(masked.message).toBe(`registry said: bad password ${MASK}`);
    expect(masked.stack).not.toContain(PASSWORD);
    expect(masked.stack).toContain(MASK);
    expect(cause.message).toBe(`connect to https://u:${MASK}@h:1 failed`);
  });

  it('leaves what is not an error alone', () => {
    expect(maskError('text', secrets)).toBe('text');
  });
});

describe('maskDeep', () => {
  it('masks every string of a report, a short secret as a whole field, and keeps the rest', () => {
    const report = {
      runs: [{ reason: `HTTP 401 for gamedata:reg-secret-42`, fetched: 3 }],
      tail: { lastError: 'ab1', lag: null },
      config: { 'api.key': 'ab1', topics: 'gamedata.users' },
    };
    expect(maskDeep(report, secrets)).toEqual({
      runs: [{ reason: `HTTP 401 for ${MASK}`, fetched: 3 }],
      tail: { lastError: MASK, lag: null },
      config: { 'api.key': MASK, topics: 'gamedata.users' },
    });
    expect(report.tail.lastError).toBe('ab1'); // a copy
  });
});

describe('addressOf / withoutCredentials', () => {
  it('names the address, never the credentials', () => {
    expect(addressOf('https://u:pw@registry.example:8081/apis')).toBe('registry.example:8081');
    expect(addressOf('not a url')).toBe('(invalid address)');
    expect(withoutCredentials('http://u:pw@api.example/trpc')).toBe('http://api.example/trpc');
    expect(withoutCredentials('http://api.example:3000')).toBe('http://api.example:3000');
    expect(withoutCredentials('http://u:pw@api.example:3000')).toBe('http://api.example:3000');
  });
});
