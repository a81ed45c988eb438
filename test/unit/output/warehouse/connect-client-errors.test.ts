/** Connect client errors name the address, never the credentials of the URL or those an answer quotes. */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_POLICY } from '../../../../src/foundation/retry/index.js';
import { createConnectClient } from '../../../../src/output/warehouse/index.js';
import { buildDeadLetter } from '../../../../src/pipeline/publish/dead-letter.js';
import { secretsOf } from '../../../../src/foundation/config/secret-values.js';
import type { ServiceError } from '../../../../src/foundation/errors/index.js';
import { EncodingError } from '../../../../src/foundation/errors/index.js';

const fastRetry = { ...DEFAULT_RETRY_POLICY, retries: 0, initialMs: 1, maxMs: 1 };

describe('Connect client errors', () => {
  it('an unreachable worker: the address only', async () => {
    const fetch = (() => Promise.reject(new TypeError('fetch failed'))) as typeof globalThis.fetch;
    const client = createConnectClient({
      url: 'http://connect.example:8083',
      fetch,
      retry: fastRetry,
      basicAuthUserInfo: 'admin:c0nnect-pw',
    });
    const error = await client.listConnectors().then(
      () => new Error('no error'),
      (e: unknown) => e as Error,
    );
    expect(error.message).toMatch(/^Kafka Connect at connect\.example:8083 did not answer GET \/connectors/);
    expect(error.message).not.toContain('c0nnect-pw');
  });

  it('a URL with user:password@ (fetch would refuse it): one line at once, no request, no retry, no password', async () => {
    let calls = 0;
    const fetch = (() => {
      calls++;
      return Promise.resolve(new Response('[]'));
    }) as typeof globalThis.fetch;
    const client = createConnectClient({
      url: 'http://admin:c0nnect-pw@connect.example:8083',
      fetch,
      retry: { ...DEFAULT_RETRY_POLICY, retries: 7 },
      basicAuthUserInfo: false,
    });
    const error = await client.listConnectors().then(
      () => new Error('no error'),
      (e: unknown) => e as ServiceError,
    );
    expect(error.message).toBe(
      'Kafka Connect at connect.example:8083: CONNECT_URL carries credentials (user:password@), which are never sent; put them in GAMEDATA_CONNECT_BASIC_AUTH_USER_INFO',
    );
    expect((error as ServiceError).retriable).toBe(false);
    expect(calls).toBe(0);
  });

  it("an answer quoting a URL with credentials (a JDBC sink's error): masked", async () => {
    const fetch = (() =>
      Promise.resolve(
        new Response(
          JSON.stringify({ message: 'cannot connect to postgresql://gamedata:pg-pw-9@db:5432/x' }),
          {
            status: 400,
          },
        ),
      )) as typeof globalThis.fetch;
    const client = createConnectClient({ url: 'http://connect.example:8083', fetch, retry: fastRetry });
    const error = await client.listConnectors().then(
      () => new Error('no error'),
      (e: unknown) => e as Error,
    );
    expect(error.message).toContain('postgresql://gamedata:[REDACTED]@db:5432/x');
    expect(error.message).not.toContain('pg-pw-9');
  });
});

describe('dead letters', () => {
  it('mask a secret in the error message header (Kafka keeps it)', () => {
    const dlq = buildDeadLetter({
      resource: 'users',
      record: { _id: 'u1' },
      error: new EncodingError('bad record near api key k3y-s3cret', '$'),
      lineage: { runId: 'r', sliceId: 's', sourceOperation: 'op', fetchedAt: 1 },
      options: { secrets: secretsOf({ apiKey: 'k3y-s3cret' }) },
    });
    expect(Object.values(dlq.headers).join(' ')).not.toContain('k3y-s3cret');
    expect(Object.values(dlq.headers).join(' ')).toContain('[REDACTED]');
  });
});

describe('Connect client transport security', () => {
  it('warns once when credentials would go over plain http://, not over https:// (nor for a URL whose own credentials are refused)', () => {
    const warnings: string[] = [];
    const fetch = (() => Promise.resolve(new Response('[]'))) as typeof globalThis.fetch;
    createConnectClient({
      url: 'http://connect.example:8083',
      fetch,
      basicAuthUserInfo: 'u:secret-pw-1',
      onWarning: (l) => warnings.push(l),
    });
    createConnectClient({
      url: 'http://u:secret-pw-1@connect.example:8083',
      fetch,
      basicAuthUserInfo: false,
      onWarning: (l) => warnings.push(l),
    });
    createConnectClient({
      url: 'https://connect.example:8083',
      fetch,
      basicAuthUserInfo: 'u:secret-pw-1',
      onWarning: (l) => warnings.push(l),
    });
    createConnectClient({
      url: 'http://connect.example:8083',
      fetch,
      basicAuthUserInfo: false,
      onWarning: (l) => warnings.push(l),
    });
    expect(warnings).toHaveLength(1);
    for (const w of warnings) {
      expect(w).toMatch(/^Kafka Connect at connect\.example:8083: credentials go over plain http:\/\//);
      expect(w).not.toContain('secret-pw-1');
    }
  });

  it('trusts the CA it is given for an https:// worker', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'connect-ca-'));
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
    const server = createServer({ cert, key: readFileSync(join(dir, 'key.pem'), 'utf8') }, (req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(req.url?.startsWith('/connectors') ? '{}' : '[]');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const { port } = server.address() as AddressInfo;
      const url = `https://127.0.0.1:${port}`;
      const trusted = createConnectClient({ url, ca: cert, retry: fastRetry, basicAuthUserInfo: false });
      expect(await trusted.listConnectors()).toEqual([]);
      const untrusted = createConnectClient({ url, retry: fastRetry, basicAuthUserInfo: false });
      await expect(untrusted.listConnectors()).rejects.toThrow(/did not answer/);
    } finally {
      await new Promise((r) => server.close(r));
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
