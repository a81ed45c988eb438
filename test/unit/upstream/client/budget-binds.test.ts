/** `budgetBinds` (what `collectAll`'s `plan: 'auto'` asks): from the rate-limit headers, or the budget's own rule. */
import { describe, expect, it } from 'vitest';
import { createClient } from '../../../../src/upstream/client/index.js';

function fakeFetch(remaining: number) {
  const slot = { result: { data: { items: [], nextCursor: null } } };
  return (url: string): Promise<Response> =>
    Promise.resolve(
      new Response(JSON.stringify(url.includes('batch=1') ? [slot] : slot), {
        status: 200,
        headers: {
          'content-type': 'application/json',
          'ratelimit-limit': '500',
          'ratelimit-remaining': String(remaining),
          'ratelimit-reset': '30',
        },
      }),
    );
}

describe('budgetBinds', () => {
  it('binds when less than a fifth of the window is left, not before', async () => {
    for (const [remaining, binds] of [
      [400, false],
      [50, true],
    ] as const) {
      const client = createClient({
        baseUrl: 'http://127.0.0.1:1/trpc',
        apiKey: 'k',
        fetch: fakeFetch(remaining),
      });
      expect(client.budgetBinds?.()).toBe(false); // nothing known yet
      await client.transaction.getPaginated({ limit: 1 });
      expect(client.budgetBinds?.()).toBe(binds);
      expect(client.stats().rounds).toBe(1);
    }
  });

  it("asks a plugged-in budget's own rule", () => {
    const asked: number[] = [];
    const limiter = {
      acquire: async () => {},
      complete: () => {},
      state: () => undefined,
      binds: (n: number) => (asked.push(n), true),
    };
    const client = createClient({
      baseUrl: 'http://127.0.0.1:1/trpc',
      apiKey: 'k',
      maxInFlight: 4,
      budget: { limiter, attach: () => undefined } as never,
    });
    expect(client.budgetBinds?.()).toBe(true);
    expect(asked).toEqual([4]);
  });
});
