/** The simulator's `transactionsWithoutCountry` over HTTP: such rows are outside every countryId filter (issue 23). */
import { describe, expect, it } from 'vitest';
import { startSimulator } from '../../../../tools/simulator/index.js';

type Row = Record<string, unknown>;

describe('transactionsWithoutCountry over the wire', () => {
  it('rows without a country are outside every countryId filter and inside the walks of its users', async () => {
    const sim = await startSimulator({
      seed: 3,
      scale: 'small',
      transactionsWithoutCountry: { wage: 0.25 },
      rateLimit: { enabled: false },
    });
    try {
      const call = async (input: Record<string, unknown>): Promise<Row[]> => {
        const res = await fetch(
          `${sim.url}/transaction.getPaginatedTransactions?input=${encodeURIComponent(JSON.stringify(input))}`,
          { headers: { 'X-API-Key': 'k' } },
        );
        return ((await res.json()) as { result: { data: { items: Row[] } } }).result.data.items;
      };
      const missing = (sim.truth('transactions') as Row[]).find(
        (r) => r['transactionType'] === 'wage' && !('countryId' in r),
      );
      expect(missing).toBeDefined();
      const buyer = String(missing?.['buyerId']);
      const byUser = await call({ userId: buyer, transactionType: 'wage', limit: 100 });
      expect(byUser.some((r) => r['_id'] === missing?.['_id'])).toBe(true);
      // Every country's wage walk, and none returns the row.
      for (const countryId of sim.world.countryIds) {
        const rows = await call({ countryId, transactionType: 'wage', limit: 100 });
        expect(rows.some((r) => r['_id'] === missing?.['_id'])).toBe(false);
      }
    } finally {
      await sim.close();
    }
  });
});
