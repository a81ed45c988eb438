/**
 * The registry client's credentials: basic auth (user info) and a bearer token reach the registry as an
 * Authorization header; a 401 is one non-retried ServiceError that names the registry by address only. A local
 * HTTP server on port 0 stands in for the registry (no network).
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRegistryClient, toRegistryError } from '../../../../src/output/encoding/registry-client.js';
import { resolveKafkaOptions } from '../../../../src/output/kafka/kafka-options.js';
import { ServiceError } from '../../../../src/foundation/errors/index.js';

const CANARY = 'canary-Registry-6d1c';
const seen: (string | undefined)[] = [];
let status = 200;
let server: Server;
let url = '';

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res) => {
    seen.push(req.headers.authorization);
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(status === 200 ? '["a-value"]' : '{"error_code":401,"message":"Unauthorized"}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/apis/ccompat/v7`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('registry credentials', () => {
  it('sends basic auth user info', async () => {
    seen.length = 0;
    status = 200;
    const client = createRegistryClient({ url, security: { basicAuthUserInfo: `sr:${CANARY}` } });
    expect(await client.getAllSubjects()).toEqual(['a-value']);
    expect(seen).toEqual([`Basic ${Buffer.from(`sr:${CANARY}`).toString('base64')}`]);
  });

  it('sends a bearer token', async () => {
    seen.length = 0;
    status = 200;
    const client = createRegistryClient({ url, security: { bearerToken: CANARY } });
    await client.getAllSubjects();
    expect(seen).toEqual([`Bearer ${CANARY}`]);
  });

  it('sends nothing with security false', async () => {
    seen.length = 0;
    status = 200;
    await createRegistryClient({ url, security: false }).getAllSubjects();
    expect(seen).toEqual([undefined]);
  });

  it('a 401 is not retried, and names the registry and the settings, not the credentials', async () => {
    seen.length = 0;
    status = 401;
    const client = createRegistryClient({
      url,
      security: { bearerToken: CANARY },
      maxRetries: 3,
      retryDelayMs: 1,
    });
    // the client rethrows the library's error (callers name it at their boundary with toRegistryError)
    const raw: unknown = await client.getAllSubjects().catch((e: unknown) => e);
    expect(seen).toHaveLength(1);
    const error = toRegistryError(raw, url, 'listing subjects');
    expect(error).toBeInstanceOf(ServiceError);
    expect(error.retriable).toBe(false);
    expect(error.message).toMatch(
      /^schema registry at 127\.0\.0\.1:\d+: authentication failed \(HTTP 401\) \(check GAMEDATA_SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO or GAMEDATA_SCHEMA_REGISTRY_BEARER_TOKEN\)/,
    );
    expect(error.message).not.toContain(CANARY);
  });
});

describe('Kafka client security options', () => {
  it('explicit options win over the process settings; false means none', () => {
    const sasl = { mechanism: 'scram-sha-512' as const, username: 'u', password: CANARY };
    const resolved = resolveKafkaOptions({ brokers: ['127.0.0.1:1'], ssl: { ca: 'CA' }, sasl });
    expect([resolved.ssl, resolved.sasl]).toEqual([{ ca: 'CA' }, sasl]);
    const none = resolveKafkaOptions({ brokers: ['127.0.0.1:1'], ssl: false, sasl: false });
    expect([none.ssl, none.sasl]).toEqual([undefined, undefined]);
  });
});
