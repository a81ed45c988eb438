// The registry client over real HTTP (the library's axios stack): a request that times out is retried with a fresh
// timeout (the library's own retry layer counted one timeout across all attempts, so it never retried one). The
// registry is a loopback stand-in that leaves the first request of a schema unanswered, then answers.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRegistryClient } from '../../../../src/output/encoding/registry-client.js';

const requests: string[] = [];
const server = createServer((req, res) => {
  requests.push(`${req.method} ${req.url}`);
  if (requests.length === 1) return; // never answered: the client's timeout fires
  res.setHeader('content-type', 'application/vnd.schemaregistry.v1+json');
  res.end(JSON.stringify({ schema: '"string"', schemaType: 'AVRO' }));
});
let url: string;

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/apis/ccompat/v7`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('registry client timeouts', () => {
  it('retries a timed-out lookup with a fresh timeout and answers', async () => {
    const client = createRegistryClient({ url, timeoutMs: 300, retryDelayMs: 10 });
    const info = await client.getBySubjectAndId('t-value', 7);
    expect(info.schema).toBe('"string"');
    expect(requests).toEqual([
      'GET /apis/ccompat/v7/schemas/ids/7?subject=t-value',
      'GET /apis/ccompat/v7/schemas/ids/7?subject=t-value',
    ]);
  });
});
