/** Raw HTTP proves each wire fact of upstream-facts.md against the running simulator. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../../../tools/simulator/index.js';
import { KEY, batch, data, get, type Rec } from './helpers.js';

let sim: Simulator;
let user: Rec;
let party: Rec;
let article: Rec;
beforeAll(async () => {
  sim = await startSimulator({ port: 0, seed: 11 });
  user = sim.truth('users')[0] as Rec;
  party = sim.truth('parties')[0] as Rec;
  article = sim.truth('articles')[0] as Rec;
});
afterAll(async () => {
  await sim.close();
});
beforeEach(() => {
  sim.configure({ rateLimit: { enabled: true, keyed: 500, anonymous: 100, windowMs: 60_000 } });
  sim.resetStats();
});

describe('wire protocol', () => {
  it('the URL ends in /trpc on loopback', () => {
    expect(sim.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/trpc$/);
  });

  it('single GET: {"result":{"data":...}} in plain JSON', async () => {
    const a = await get(sim, 'user.getUserById', { userId: user['_id'] });
    expect(a.status).toBe(200);
    expect(a.headers.get('content-type')).toMatch(/application\/json/);
    expect(a.body).toEqual({ result: { data: user } });
  });

  it('batch POST: one envelope per call, in order, procedures mixed', async () => {
    const a = await batch(sim, [
      ['user.getUserLite', { userId: user['_id'] }],
      ['party.getById', { partyId: party['_id'] }],
      ['article.getArticleLiteById', { articleId: article['_id'] }],
      ['country.getAllCountries', {}],
    ]);
    expect(a.status).toBe(200);
    const out = a.body as Array<{ result: { data: Rec } }>;
    expect(out).toHaveLength(4);
    expect(out[0]?.result.data['_id']).toBe(user['_id']);
    expect(out[0]?.result.data['missions']).toBeUndefined(); // lite profile
    expect(out[1]?.result.data).toEqual(party);
    expect(out[2]?.result.data['_id']).toBe(article['_id']);
    expect(out[2]?.result.data['content']).toBeUndefined(); // lite article: no body
    expect(out[3]?.result.data).toEqual(sim.truth('countries'));
    expect(sim.stats().batchSizes).toEqual({ '4': 1 });
    expect(sim.stats().procedureCalls.total).toBe(4);
  });

  it('207 when some calls fail, each failed slot with its own error envelope', async () => {
    const a = await batch(sim, [
      ['user.getUserById', { userId: user['_id'] }],
      ['user.getUserById', { userId: 'ffffffffffffffffffffffff' }],
      ['article.getArticlesPaginated', { limit: 5 }],
    ]);
    expect(a.status).toBe(207);
    const [ok, missing, invalid] = a.body as Array<Rec>;
    expect(ok).toEqual({ result: { data: user } });
    expect(missing).toMatchObject({
      error: { code: -32004, data: { code: 'NOT_FOUND', httpStatus: 404, path: 'user.getUserById' } },
    });
    expect(invalid).toMatchObject({
      error: { code: -32600, data: { code: 'BAD_REQUEST', httpStatus: 400 } },
    });
    expect(JSON.stringify(a.body)).not.toContain('stack');
  });

  it('every call failing alike: the batch answers with that status', async () => {
    const a = await batch(sim, [
      ['user.getUserById', { userId: 'ffffffffffffffffffffffff' }],
      ['party.getById', { partyId: 'nope' }],
    ]);
    expect(a.status).toBe(404);
    expect((a.body as unknown[]).length).toBe(2);
  });

  it('413 "Batch size too large (max 50)" above 50 procedures; 50 pass', async () => {
    const calls = (n: number): Array<[string, unknown]> =>
      Array.from({ length: n }, () => ['country.getAllCountries', {}]);
    const big = await batch(sim, calls(51));
    expect(big.status).toBe(413);
    expect(big.text).toContain('Batch size too large (max 50)');
    const fifty = await batch(sim, calls(50));
    expect(fifty.status).toBe(200);
    expect((fifty.body as unknown[]).length).toBe(50);
  });

  it('401 "API token required" for transactions without X-API-Key; any non-empty key works', async () => {
    const none = await get(sim, 'transaction.getPaginatedTransactions', { limit: 1 }, null);
    expect(none.status).toBe(401);
    expect(none.body).toMatchObject({
      error: { message: 'API token required', data: { code: 'UNAUTHORIZED', httpStatus: 401 } },
    });
    expect((await get(sim, 'transaction.getPaginatedTransactions', { limit: 1 }, 'anything')).status).toBe(
      200,
    );
    // Other operations are open to anonymous callers.
    expect((await get(sim, 'user.getUserById', { userId: user['_id'] }, null)).status).toBe(200);
  });

  it('a configured key list refuses other keys', async () => {
    sim.configure({ apiKeys: ['good'] });
    try {
      expect((await get(sim, 'transaction.getPaginatedTransactions', { limit: 1 }, 'good')).status).toBe(200);
      expect((await get(sim, 'transaction.getPaginatedTransactions', { limit: 1 }, 'bad')).status).toBe(401);
    } finally {
      sim.configure({ apiKeys: undefined });
    }
  });

  it('400 for invalid input: limit out of 1..100, missing feed type, unknown keys, superjson wrapper, bad cursor', async () => {
    const bad: Array<[string, unknown]> = [
      ['transaction.getPaginatedTransactions', { limit: 101 }],
      ['transaction.getPaginatedTransactions', { limit: 0 }],
      ['article.getArticlesPaginated', { limit: 10 }],
      ['article.getArticlesPaginated', { type: 'hot' }],
      ['user.getUsersByCountry', { limit: 10 }],
      ['user.getUserById', { userId: user['_id'], extra: 1 }],
      ['user.getUserLite', { userId: 'not-an-object-id' }],
      ['user.getUserById', { json: { userId: user['_id'] } }],
      ['transaction.getPaginatedTransactions', { transactionType: 'gift' }],
      ['transaction.getPaginatedTransactions', { cursor: 'v2.%%%' }],
      ['party.getManyPaginated', { limit: 500 }],
    ];
    for (const [procedure, input] of bad) {
      const a = await get(sim, procedure, input);
      expect(a.status, `${procedure} ${JSON.stringify(input)}`).toBe(400);
      expect(a.body).toMatchObject({ error: { data: { code: 'BAD_REQUEST', httpStatus: 400 } } });
    }
    expect((await get(sim, 'transaction.getPaginatedTransactions', { limit: 100 })).status).toBe(200);
  });

  it('404 for unknown ids and unknown procedures', async () => {
    for (const [procedure, input] of [
      ['user.getUserById', { userId: '000000000000000000000000' }],
      ['user.getUserLite', { userId: '000000000000000000000000' }],
      ['party.getById', { partyId: 'x' }],
      ['article.getArticleById', { articleId: 'x' }],
      ['article.getArticleLiteById', { articleId: 'x' }],
      ['inventory.fetchCurrentEquipment', { userId: 'x' }],
      ['nothing.here', {}],
    ] as const) {
      expect((await get(sim, procedure, input)).status, procedure).toBe(404);
    }
  });

  it('a v1 cursor sent to the v2 service answers 500, as upstream', async () => {
    const a = await get(sim, 'transaction.getPaginatedTransactions', {
      cursor: '2026-10-30T00:00:00.000Z|000000000000000000000000',
    });
    expect(a.status).toBe(500);
  });

  it('method override: queries may be POSTed singly', async () => {
    const r = await fetch(`${sim.url}/user.getUserById`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ userId: user['_id'] }),
    });
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ result: { data: user } });
  });

  it('pages carry items and nextCursor, no hasMore unless asked', async () => {
    const page = await data(sim, 'transaction.getPaginatedTransactions', { limit: 3 });
    expect(Object.keys(page).sort()).toEqual(['items', 'nextCursor']);
    sim.configure({ hasMore: true });
    try {
      const more = await data(sim, 'transaction.getPaginatedTransactions', { limit: 3 });
      expect(more.hasMore).toBe(true);
    } finally {
      sim.configure({ hasMore: false });
    }
  });
});

describe('rate limit', () => {
  it('sends ratelimit-* headers on every answer, counting a batch as one request', async () => {
    const a = await get(sim, 'country.getAllCountries', {}, 'rl-key-1');
    expect(a.headers.get('ratelimit-limit')).toBe('500');
    expect(a.headers.get('ratelimit-remaining')).toBe('499');
    expect(a.headers.get('ratelimit-policy')).toBe('500;w=60');
    expect(Number(a.headers.get('ratelimit-reset'))).toBeGreaterThan(0);
    const b = await batch(
      sim,
      Array.from({ length: 50 }, () => ['country.getAllCountries', {}] as [string, unknown]),
      'rl-key-1',
    );
    expect(b.headers.get('ratelimit-remaining')).toBe('498');
    const err = await get(sim, 'user.getUserById', { userId: 'x' }, 'rl-key-1');
    expect(err.status).toBe(404);
    expect(err.headers.get('ratelimit-remaining')).toBe('497');
    const anon = await get(sim, 'country.getAllCountries', {}, null);
    expect(anon.headers.get('ratelimit-limit')).toBe('100');
    expect(anon.headers.get('ratelimit-policy')).toBe('100;w=60');
  });

  it('answers 429 with Retry-After past the limit, per key, and counts it', async () => {
    sim.configure({ rateLimit: { keyed: 5, windowMs: 2_000 } });
    const statuses: number[] = [];
    let last = await get(sim, 'country.getAllCountries', {}, 'storm');
    statuses.push(last.status);
    for (let i = 0; i < 6; i++) {
      last = await get(sim, 'country.getAllCountries', {}, 'storm');
      statuses.push(last.status);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429]);
    expect(last.headers.get('retry-after')).toMatch(/^[12]$/);
    expect(last.headers.get('ratelimit-remaining')).toBe('0');
    expect(last.body).toMatchObject({ error: { data: { code: 'TOO_MANY_REQUESTS', httpStatus: 429 } } });
    // Another key has its own budget.
    expect((await get(sim, 'country.getAllCountries', {}, 'calm')).status).toBe(200);
    expect(sim.stats().rateLimited).toBe(2);
    expect(sim.stats().byStatus['429']).toBe(2);
    // The window resets.
    await new Promise((r) => setTimeout(r, 2_100));
    expect((await get(sim, 'country.getAllCountries', {}, 'storm')).status).toBe(200);
  });

  it('switched off: no limit and no headers', async () => {
    sim.configure({ rateLimit: { enabled: false, keyed: 1 } });
    const a = await get(sim, 'country.getAllCountries', {}, KEY);
    const b = await get(sim, 'country.getAllCountries', {}, KEY);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(b.headers.get('ratelimit-limit')).toBeNull();
  });
});

describe('introspection', () => {
  it('GET /__sim/stats, POST /__sim/reset-stats, GET /__sim/truth/<resource> (NDJSON)', async () => {
    const base = sim.url.replace(/\/trpc$/, '');
    await get(sim, 'country.getAllCountries', {});
    const stats = (await (await fetch(`${base}/__sim/stats`)).json()) as {
      httpRequests: number;
      procedureCalls: { byProcedure: Rec };
    };
    expect(stats.httpRequests).toBe(1);
    expect(stats.procedureCalls.byProcedure).toEqual({ 'country.getAllCountries': 1 });
    expect((await fetch(`${base}/__sim/reset-stats`, { method: 'POST' })).status).toBe(204);
    expect(sim.stats().httpRequests).toBe(0);
    const ndjson = await (await fetch(`${base}/__sim/truth/parties`)).text();
    const lines = ndjson
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Rec);
    expect(lines).toEqual(sim.truth('parties'));
    expect((await fetch(`${base}/__sim/truth/nothing`)).status).toBe(404);
    // Introspection is not an upstream request.
    expect(sim.stats().httpRequests).toBe(0);
  });
});
