/** Connect client errors name the address, never the credentials of the URL or those an answer quotes. */
import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_POLICY } from '../../../src/client/retry.js';
import { createConnectClient } from '../../../src/warehouse/index.js';
import { buildDeadLetter } from '../../../src/publish/dead-letter.js';
import { secretsOf } from '../../../src/config/secret-values.js';
import { EncodingError } from '../../../src/errors.js';

const fastRetry = { ...DEFAULT_RETRY_POLICY, maxAttempts: 1, initialDelayMs: 1, maxDelayMs: 1 };

describe('Connect client errors', () => {
  it('an unreachable worker: the address only (not the user:password of its URL)', async () => {
    const fetch = (() => Promise.reject(new TypeError('fetch failed'))) as typeof globalThis.fetch;
    const client = createConnectClient({
      url: 'http://admin:c0nnect-pw@connect.example:8083',
      fetch,
      retry: fastRetry,
      basicAuthUserInfo: false,
    });
    const error = await client.listConnectors().then(
      () => new Error('no error'),
      (e: unknown) => e as Error,
    );
    expect(error.message).toMatch(/^Kafka Connect at connect\.example:8083 did not answer GET \/connectors/);
    expect(error.message).not.toContain('c0nnect-pw');
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
