/**
 * OAUTHBEARER tokens from an OIDC token endpoint (issue 34): the settings and their checks, and the provider against
 * a real HTTP token endpoint on loopback (the request it sends, caching, refresh before expiry, failures as one
 * line without the secret). The broker side (a token the broker validates, refused ones) is in test/e2e/secured.test.ts.
 */
import { execFileSync } from 'node:child_process';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../../src/foundation/config/load-config.js';
import { createTokenEndpointProvider } from '../../../../src/foundation/config/oauthbearer-token-endpoint.js';
import {
  plaintextCredentialWarnings,
  resolveClientSecurity,
} from '../../../../src/foundation/config/security-settings.js';
import { ServiceError } from '../../../../src/foundation/errors/index.js';

const SECRET = 'cl1ent-secret with:colon&amp';
const b64 = (o: object): string => Buffer.from(JSON.stringify(o)).toString('base64url');

interface Seen {
  authorization: string | undefined;
  body: URLSearchParams;
}
let server: Server;
let url = '';
const seen: Seen[] = [];
/** What the endpoint answers next: status and JSON body. */
let next: (n: number) => { status: number; json: object } = () => ({ status: 200, json: {} });

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({ authorization: req.headers.authorization, body: new URLSearchParams(body) });
      const answer = next(seen.length);
      res.writeHead(answer.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(answer.json));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  url = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}/oauth2/token`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function issues(env: NodeJS.ProcessEnv): string {
  try {
    loadConfig({ env });
    return '';
  } catch (error) {
    const e = error as Error & { issues?: string[] };
    return [e.message, ...(e.issues ?? [])].join('\n');
  }
}

/** The issues of a ConfigError's text (`issues` repeats them after the message: the lines after the first). */
const issueList = (text: string): string[] =>
  text
    .split('\n')
    .slice(1)
    .filter((l) => !l.startsWith('  '));

const oauthEnv = (): NodeJS.ProcessEnv => ({
  KAFKA_BROKERS: 'b:9093',
  GAMEDATA_KAFKA_SECURITY_PROTOCOL: 'SASL_SSL',
  GAMEDATA_KAFKA_SASL_MECHANISM: 'OAUTHBEARER',
  GAMEDATA_KAFKA_SASL_OAUTHBEARER_TOKEN_ENDPOINT_URL: url,
  GAMEDATA_KAFKA_SASL_OAUTHBEARER_CLIENT_ID: 'gamedata app',
  GAMEDATA_KAFKA_SASL_OAUTHBEARER_CLIENT_SECRET: SECRET,
  GAMEDATA_KAFKA_SASL_OAUTHBEARER_SCOPE: 'kafka.write kafka.read',
});

describe('OAUTHBEARER token endpoint settings', () => {
  it('needs a client id and secret, one token source, and a CA only for https; never echoes the secret', () => {
    expect(issues(oauthEnv())).toBe('');
    const withoutSecret = { ...oauthEnv(), GAMEDATA_KAFKA_SASL_OAUTHBEARER_CLIENT_SECRET: '' };
    expect(issues(withoutSecret)).toMatch(
      /GAMEDATA_KAFKA_SASL_OAUTHBEARER_CLIENT_SECRET is not set \(GAMEDATA_KAFKA_SASL_OAUTHBEARER_TOKEN_ENDPOINT_URL needs it\)/,
    );
    const dir = mkdtempSync(join(tmpdir(), 'oidc-'));
    const token = join(dir, 'token');
    writeFileSync(token, 'a.b.c');
    expect(issues({ ...oauthEnv(), GAMEDATA_KAFKA_SASL_OAUTHBEARER_TOKEN_FILE: token })).toMatch(
      /GAMEDATA_KAFKA_SASL_OAUTHBEARER_TOKEN_FILE and GAMEDATA_KAFKA_SASL_OAUTHBEARER_TOKEN_ENDPOINT_URL are both set/,
    );
    const ca = join(dir, 'ca.pem');
    writeFileSync(ca, '-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n');
    expect(issues({ ...oauthEnv(), GAMEDATA_KAFKA_SASL_OAUTHBEARER_TOKEN_ENDPOINT_CA_LOCATION: ca })).toMatch(
      /TOKEN_ENDPOINT_CA_LOCATION is set but GAMEDATA_KAFKA_SASL_OAUTHBEARER_TOKEN_ENDPOINT_URL is not an https:\/\/ URL/,
    );
    const withCredentialsInUrl = {
      ...oauthEnv(),
      GAMEDATA_KAFKA_SASL_OAUTHBEARER_TOKEN_ENDPOINT_URL: url.replace(
        '://',
        `://app:${SECRET.slice(0, 12)}@`,
      ),
    };
    const shown = issues(withCredentialsInUrl);
    expect(shown).toMatch(/TOKEN_ENDPOINT_URL .*must not carry credentials/);
    // a mechanism other than OAUTHBEARER with the token endpoint's settings: each named once; the secret never shown
    const scram = issues({
      ...oauthEnv(),
      GAMEDATA_KAFKA_SASL_MECHANISM: 'SCRAM-SHA-512',
      GAMEDATA_KAFKA_SASL_USERNAME: 'u',
      GAMEDATA_KAFKA_SASL_PASSWORD: 'pw-12345678',
    });
    expect(scram).toMatch(
      /GAMEDATA_KAFKA_SASL_OAUTHBEARER_CLIENT_SECRET is set but GAMEDATA_KAFKA_SASL_MECHANISM is not OAUTHBEARER/,
    );
    expect(issueList(scram).filter((l) => l.includes('TOKEN_ENDPOINT_URL is set but'))).toHaveLength(1);
    for (const text of [shown, scram, issues(withoutSecret)]) expect(text).not.toContain(SECRET.slice(0, 12));
    expect(issues({ ...oauthEnv(), GAMEDATA_KAFKA_SECURITY_PROTOCOL: 'SSL' })).toMatch(
      /GAMEDATA_KAFKA_SASL_OAUTHBEARER_TOKEN_ENDPOINT_URL is set but GAMEDATA_KAFKA_SECURITY_PROTOCOL is SSL/,
    );
  });

  it('warns when the client secret would go over plain http:// to another host', () => {
    const config = loadConfig({ env: oauthEnv() });
    expect(plaintextCredentialWarnings(config, config)).toEqual([]);
    const remote = loadConfig({
      env: { ...oauthEnv(), GAMEDATA_KAFKA_SASL_OAUTHBEARER_TOKEN_ENDPOINT_URL: 'http://idp.example/token' },
    });
    expect(plaintextCredentialWarnings(remote, remote)).toEqual([
      expect.stringMatching(/OAuth client secret and tokens go over plain http:\/\/ .*use https:\/\//),
    ]);
  });
});

describe('OAUTHBEARER token endpoint provider', () => {
  it('asks by the client-credentials grant (basic auth, form-encoded), caches, and replaces the token before it expires', async () => {
    seen.length = 0;
    let clock = 1_000_000_000_000;
    next = (n) => ({
      status: 200,
      // the JWT's exp (60 s) is shorter than expires_in (3600 s): the shorter life wins
      json: {
        access_token: `${b64({ alg: 'RS256' })}.${b64({ sub: 'gamedata', exp: clock / 1000 + 60, n })}.sig`,
        token_type: 'Bearer',
        expires_in: 3600,
      },
    });
    const config = loadConfig({ env: oauthEnv() });
    const sasl = resolveClientSecurity(config).kafka.sasl;
    if (sasl?.mechanism !== 'oauthbearer') throw new Error('not oauthbearer');
    expect(typeof sasl.oauthBearerProvider).toBe('function');
    const provider = createTokenEndpointProvider({
      tokenEndpointUrl: url,
      clientId: 'gamedata app',
      clientSecret: SECRET,
      scope: 'kafka.write kafka.read',
      now: () => clock,
    });
    const first = await provider();
    expect(seen).toHaveLength(1);
    const [user, password] = Buffer.from((seen[0]?.authorization ?? '').replace(/^Basic /, ''), 'base64')
      .toString()
      .split(':');
    // RFC 6749 §2.3.1: id and secret form-encoded before basic auth
    expect([user, password]).toEqual(['gamedata+app', 'cl1ent-secret+with%3Acolon%26amp']);
    expect(Object.fromEntries(seen[0]?.body ?? [])).toEqual({
      grant_type: 'client_credentials',
      scope: 'kafka.write kafka.read',
    });
    // 60 s life: replaced after 30 s (at least 30 s before expiry, not before half), cached until then
    clock += 29_000;
    expect(await provider()).toEqual(first);
    expect(seen).toHaveLength(1);
    clock += 1_500;
    const second = await provider();
    expect(seen).toHaveLength(2);
    expect(second.value).not.toBe(first.value);
    // a refresh that fails while the token still has life keeps it; with none left, the failure is thrown
    next = () => ({ status: 503, json: { error: 'temporarily_unavailable' } });
    clock += 31_000;
    expect(await provider()).toEqual(second);
    expect(seen).toHaveLength(3);
    clock += 30_000;
    await expect(provider()).rejects.toThrow(/OAuth token endpoint at 127\.0\.0\.1:\d+ failed \(HTTP 503\)/);
  });

  it('a refusal is one non-retriable line naming host:port and the settings, never the secret', async () => {
    next = () => ({
      status: 401,
      json: { error: 'invalid_client', error_description: `bad secret ${SECRET}` },
    });
    const provider = createTokenEndpointProvider({
      tokenEndpointUrl: url,
      clientId: 'x',
      clientSecret: SECRET,
    });
    const error = await provider().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ServiceError);
    const e = error as ServiceError;
    expect(e.retriable).toBe(false);
    expect(e.message).toMatch(
      /^OAuth token endpoint at 127\.0\.0\.1:\d+: authentication failed \(HTTP 401, invalid_client\) \(check GAMEDATA_KAFKA_SASL_OAUTHBEARER_CLIENT_ID, GAMEDATA_KAFKA_SASL_OAUTHBEARER_CLIENT_SECRET/,
    );
    expect(e.message).not.toContain(SECRET);
    expect(e.message.split('\n')).toHaveLength(1);
    next = () => ({ status: 200, json: { token_type: 'Bearer' } });
    await expect(provider()).rejects.toThrow(/the answer has no access_token/);
    // nothing listens: retriable, names the setting
    const gone = createTokenEndpointProvider({
      tokenEndpointUrl: 'http://127.0.0.1:1/token',
      clientId: 'x',
      clientSecret: SECRET,
    });
    const unreachable = await gone().then(
      () => undefined,
      (x: unknown) => x as ServiceError,
    );
    expect(unreachable?.retriable).toBe(true);
    expect(unreachable?.message).toMatch(
      /^OAuth token endpoint at 127\.0\.0\.1:1 did not answer: ECONNREFUSED \(check GAMEDATA_KAFKA_SASL_OAUTHBEARER_TOKEN_ENDPOINT_URL\)$/,
    );
  });

  it('an https:// endpoint with a private CA: refused without the CA (one permanent line), answered with it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'oidc-tls-'));
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    const cert = readFileSync(join(dir, 'cert.pem'), 'utf8');
    const tls = createHttpsServer({ key: readFileSync(join(dir, 'key.pem')), cert }, (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ access_token: 'a.b.c', expires_in: 300 }));
    });
    await new Promise<void>((resolve) => tls.listen(0, '127.0.0.1', resolve));
    try {
      const address = tls.address();
      const tokenEndpointUrl = `https://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}/token`;
      const untrusted = await createTokenEndpointProvider({
        tokenEndpointUrl,
        clientId: 'x',
        clientSecret: SECRET,
      })().then(
        () => undefined,
        (e: unknown) => e as ServiceError,
      );
      expect(untrusted?.retriable).toBe(false);
      expect(untrusted?.message).toMatch(
        /^OAuth token endpoint at 127\.0\.0\.1:\d+: certificate not trusted: .*\(check GAMEDATA_KAFKA_SASL_OAUTHBEARER_TOKEN_ENDPOINT_CA_LOCATION\)$/,
      );
      const trusted = createTokenEndpointProvider({
        tokenEndpointUrl,
        clientId: 'x',
        clientSecret: SECRET,
        ca: cert,
      });
      expect(await trusted()).toEqual({ value: 'a.b.c' });
    } finally {
      tls.closeAllConnections();
      await new Promise<void>((resolve) => tls.close(() => resolve()));
    }
  });
});
