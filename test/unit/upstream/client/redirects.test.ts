/**
 * The API key never follows a redirect to another origin (issue 34, item 5): real HTTP servers on loopback and the
 * real global fetch. A same-origin redirect is followed with the key; a cross-origin one is not followed at all.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createRateLimiter } from '../../../../src/upstream/client/rate-limiter.js';
import { resolveClientRetryPolicy } from '../../../../src/upstream/client/retry.js';
import { createTransport } from '../../../../src/upstream/client/transport.js';

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
});

async function serve(
  handler: (req: IncomingMessage, port: number) => [number, Record<string, string>, string],
) {
  const seen: IncomingMessage[] = [];
  const server = createServer((req, res) => {
    seen.push(req);
    const [status, headers, body] = handler(req, (server.address() as AddressInfo).port);
    res.writeHead(status, headers);
    res.end(body);
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { seen, port: (server.address() as AddressInfo).port };
}

const transportTo = (port: number) =>
  createTransport({
    baseUrl: `http://127.0.0.1:${port}/trpc`,
    apiKey: 'api-key-canary',
    fetch: (url, init) => fetch(url, init),
    timeoutMs: 2000,
    limiter: createRateLimiter(),
    retry: resolveClientRetryPolicy({ initialMs: 1, maxMs: 2, retries: 0 }),
  });

const OK = JSON.stringify({ result: { data: { ok: true } } });

describe('redirects', () => {
  it('a redirect to another origin is not followed: the other host never sees the key', async () => {
    const other = await serve(() => [200, { 'content-type': 'application/json' }, OK]);
    const api = await serve(() => [302, { location: `http://localhost:${other.port}/trpc/x.y` }, '']);
    await expect(transportTo(api.port).send([{ procedure: 'x.y', input: {} }])).rejects.toThrow(/HTTP 302/);
    expect(other.seen).toHaveLength(0);
    expect(api.seen[0]?.headers['x-api-key']).toBe('api-key-canary');
  });

  it('a redirect within the origin is followed, with the key', async () => {
    const api = await serve((req) =>
      req.url?.startsWith('/v2/') === true
        ? [200, { 'content-type': 'application/json' }, OK]
        : [307, { location: `/v2${req.url ?? ''}` }, ''],
    );
    const [slot] = await transportTo(api.port).send([{ procedure: 'x.y', input: {} }]);
    expect(slot).toEqual({ ok: true, data: { ok: true } });
    expect(api.seen.map((r) => r.headers['x-api-key'])).toEqual(['api-key-canary', 'api-key-canary']);
  });
});
