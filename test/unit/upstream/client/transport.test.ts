import { describe, expect, it } from 'vitest';
import { createRateLimiter } from '../../../../src/upstream/client/rate-limiter.js';
import { resolveClientRetryPolicy } from '../../../../src/upstream/client/retry.js';
import { createTransport, isSlotError } from '../../../../src/upstream/client/transport.js';
import type { FetchLike } from '../../../../src/upstream/client/transport.js';
import { NetworkError, NotFoundError, UpstreamError } from '../../../../src/foundation/errors/index.js';

interface Seen {
  url: string;
  init: RequestInit;
}

/** A recording fake fetch answering from a script. */
function scripted(answers: (() => Response | Promise<Response>)[]): FetchLike & { seen: Seen[] } {
  const seen: Seen[] = [];
  const f = (async (url: string, init: RequestInit) => {
    seen.push({ url, init });
    const next = answers.shift();
    if (!next) throw new Error('no more answers');
    return next();
  }) as FetchLike & { seen: Seen[] };
  f.seen = seen;
  return f;
}

const json = (body: unknown, status = 200, headers: Record<string, string> = {}): Response =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

function transport(fetch: FetchLike) {
  return createTransport({
    baseUrl: 'http://up.test/trpc/',
    apiKey: 'secret',
    fetch,
    timeoutMs: 1000,
    limiter: createRateLimiter(),
    retry: resolveClientRetryPolicy({ initialMs: 1, maxMs: 2, retries: 2 }),
  });
}

describe('transport (tRPC wire format)', () => {
  it('sends one call as GET ?input= with X-API-Key, several as POST /p0,p1?batch=1', async () => {
    const f = scripted([
      () => json({ result: { data: { a: 1 } } }),
      () => json([{ result: { data: 1 } }, { result: { data: 2 } }]),
    ]);
    const t = transport(f);
    expect(await t.send([{ procedure: 'user.getUserById', input: { userId: 'x', skip: null } }])).toEqual([
      { ok: true, data: { a: 1 } },
    ]);
    expect(f.seen[0]?.url).toBe(
      `http://up.test/trpc/user.getUserById?input=${encodeURIComponent('{"userId":"x"}')}`,
    );
    expect((f.seen[0]?.init.headers as Record<string, string>)['x-api-key']).toBe('secret');
    const r = await t.send([
      { procedure: 'a.b', input: { x: 1 } },
      { procedure: 'c.d', input: {} },
    ]);
    expect(r.map((x) => x.ok && x.data)).toEqual([1, 2]);
    expect(f.seen[1]?.url).toBe('http://up.test/trpc/a.b,c.d?batch=1');
    expect(f.seen[1]?.init.method).toBe('POST');
    expect(JSON.parse(f.seen[1]?.init.body as string)).toEqual({ '0': { x: 1 }, '1': {} });
  });

  it('a 207 settles per slot: errors carry status, procedure and code', async () => {
    const f = scripted([
      () =>
        json(
          [
            { result: { data: 1 } },
            {
              error: {
                message: 'User not found',
                code: -32004,
                data: { code: 'NOT_FOUND', httpStatus: 404 },
              },
            },
          ],
          207,
        ),
    ]);
    const [a, b] = await transport(f).send([
      { procedure: 'p', input: 1 },
      { procedure: 'q', input: 2 },
    ]);
    expect(a).toEqual({ ok: true, data: 1 });
    expect(b?.ok === false && b.error).toBeInstanceOf(NotFoundError);
    expect(b?.ok === false && isSlotError(b.error)).toBe(true);
    expect(b?.ok === false && b.error.procedure).toBe('q');
  });

  it('retries a whole-request 503 and a network error, not a 413', async () => {
    const f = scripted([
      () => new Response('bad gateway', { status: 503 }),
      () => Promise.reject(new TypeError('fetch failed')),
      () => json({ result: { data: 'ok' } }),
    ]);
    expect(await transport(f).send([{ procedure: 'p', input: 1 }])).toEqual([{ ok: true, data: 'ok' }]);
    expect(f.seen).toHaveLength(3);
    const g = scripted([() => json({ error: { message: 'Batch size too large (max 50)' } }, 413)]);
    await expect(
      transport(g).send([
        { procedure: 'p', input: 1 },
        { procedure: 'p', input: 2 },
      ]),
    ).rejects.toBeInstanceOf(UpstreamError);
    expect(g.seen).toHaveLength(1);
  });

  it('an unparsable 200 body is retried, then raised', async () => {
    const f = scripted([
      () => new Response('{"result":', { status: 200 }),
      () => new Response('{"result":', { status: 200 }),
      () => new Response('{"res', { status: 200 }),
    ]);
    await expect(transport(f).send([{ procedure: 'p', input: 1 }])).rejects.toThrow(/unreadable answer/);
    expect(f.seen).toHaveLength(3);
    const g = scripted([
      () => Promise.reject(new TypeError('fetch failed')),
      () => Promise.reject(new TypeError('fetch failed')),
      () => Promise.reject(new TypeError('fetch failed')),
    ]);
    await expect(transport(g).send([{ procedure: 'p', input: 1 }])).rejects.toBeInstanceOf(NetworkError);
  });
});
