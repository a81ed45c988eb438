/**
 * Issue 48, item 1, at the budget: a fetcher whose requests reach no upstream must not serve the key. Two budgets on
 * one API key, prefix and upstream identity (the real Redis); the first, which wins the fetcher lease, sends through
 * a client whose API URL is a closed port (the same origin seen from a machine that cannot reach it), the second
 * through the real simulator. Every call of the second is answered exactly (as a standalone client reads it); the
 * bad fetcher gives up the lease after `unreachableLimit` requests and cools down, and the good one takes over. And
 * the budget's Redis key depends on the upstream's origin: the same key on another upstream is another budget.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { budgetKeys, createSharedBudget, type SharedBudget } from '../../../../src/upstream/budget/index.js';
import { createClient } from '../../../../src/upstream/client/index.js';
import { startSimulator } from '../../../../tools/simulator/index.js';
import { freePort } from '../../../helpers/free-ports.js';

const redisUrl = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:16379';
const prefix = `it-unreach-${randomUUID().slice(0, 8)}:`;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

let sim: Awaited<ReturnType<typeof startSimulator>>;
const conns: Redis[] = [];
const budgets: SharedBudget[] = [];

function connection(): Redis {
  const r = new Redis(redisUrl, { maxRetriesPerRequest: null });
  conns.push(r);
  return r;
}

beforeAll(async () => {
  sim = await startSimulator({ port: 0, scale: 'small', seed: 5, rateLimit: { enabled: false } });
});

afterAll(async () => {
  for (const b of budgets) await b.close().catch(() => undefined);
  const control = connection();
  const keys = await control.keys(`${prefix}*`);
  if (keys.length > 0) await control.del(...keys);
  for (const r of conns) await r.quit().catch(() => undefined);
  await sim.close();
});

describe('a fetcher that reaches no upstream (issue 48)', () => {
  it('gives up the lease after unreachableLimit requests; every call of the good process is answered exactly', async () => {
    const apiKey = `key-${randomUUID()}`;
    const upstream = 'http://game.example:4000';
    const options = {
      prefix,
      apiKey,
      upstream,
      leaseMs: 600,
      unreachableLimit: 2,
      unreachableCoolDownMs: 20_000,
    };
    const badBudget = createSharedBudget({ ...options, redis: connection() });
    budgets.push(badBudget);
    const badUrl = `http://127.0.0.1:${await freePort()}/trpc`;
    createClient({ baseUrl: badUrl, apiKey, budget: badBudget, cache: false, retry: { retries: 0 } });
    for (let i = 0; i < 100 && !badBudget.isLeader(); i++) await sleep(20);
    expect(badBudget.isLeader()).toBe(true);

    const goodBudget = createSharedBudget({ ...options, redis: connection() });
    budgets.push(goodBudget);
    const good = createClient({ baseUrl: sim.url, apiKey, budget: goodBudget, cache: false });
    const reference = createClient({ baseUrl: sim.url, apiKey: 'reference', cache: false });
    const users = (sim.truth('users') as unknown as { _id: string }[]).slice(0, 30).map((u) => u._id);

    const answers = await Promise.all(users.map((userId) => good.call('user.getUserById', { userId })));
    const want = await Promise.all(users.map((userId) => reference.call('user.getUserById', { userId })));
    expect(answers).toEqual(want);
    // The bad fetcher stepped down and stays out (cooling down); the good one leads.
    expect(badBudget.isLeader()).toBe(false);
    expect(goodBudget.isLeader()).toBe(true);
    await sleep(1_500);
    expect(badBudget.isLeader()).toBe(false);
  }, 60_000);

  it("the budget's Redis key includes the upstream's origin", () => {
    const a = budgetKeys(prefix, 'k', 'http://127.0.0.1:4000');
    expect(budgetKeys(prefix, 'k', 'http://127.0.0.1:4000').base).toBe(a.base);
    expect(budgetKeys(prefix, 'k', 'http://127.0.0.1:4001').base).not.toBe(a.base);
    expect(budgetKeys(prefix, 'k', 'https://staging.example').base).not.toBe(a.base);
    // The key itself never appears in a key name.
    expect(a.base).not.toContain('k:');
  });
});
