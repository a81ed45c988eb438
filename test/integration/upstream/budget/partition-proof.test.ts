/**
 * Issue 23's proof against the simulator (no other service): walks partitioned by `itemCode` checked against the
 * unfiltered feed of the 72 h window. Rows of the types without an outer item (wage, applicationFee, donation,
 * articleTip) carry none of the partition's keys: the proof must find them (their types unproven), and the full
 * history read as the plan says (itemCode walks on the proven types, per-user walks on the unproven ones) must
 * return every row of the simulator's truth, the partition's each once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../../../src/upstream/client/index.js';
import { createListing, type ListingFilters } from '../../../../src/upstream/client/listing.js';
import { readSlice } from '../../../../src/upstream/client/read-slice.js';
import { proveCoverage, type ProofRow } from '../../../../src/pipeline/planner/prove-coverage.js';
import { ITEM_CODES, TRANSACTION_TYPES, startSimulator } from '../../../../tools/simulator/index.js';

const HOUR = 3_600_000;
let sim: Awaited<ReturnType<typeof startSimulator>>;
let client: ReturnType<typeof createClient>;

interface Row {
  _id: string;
  transactionType: string;
  itemCode?: string;
  buyerId?: string;
  sellerId?: string;
}

beforeAll(async () => {
  sim = await startSimulator({ port: 0, scale: 'small', seed: 7, rateLimit: { enabled: false } });
  client = createClient({ baseUrl: sim.url, apiKey: 'proof', cache: false });
});

afterAll(async () => {
  await sim.close();
});

async function walk(
  filters: ListingFilters,
  start: number,
  end: number,
): Promise<{ rows: Row[]; pages: number }> {
  const rows: Row[] = [];
  let pages = 0;
  for await (const page of readSlice<Row>(client, createListing('transactions', filters), { start, end })) {
    pages++;
    rows.push(...page.items);
  }
  return { rows, pages };
}

const proofRow = (r: Row): ProofRow => ({ id: r._id, type: r.transactionType });

describe('the partition proof on the 72 h window', () => {
  it('finds the rows outside the partition, and the plan it gives reads the whole history exactly', async () => {
    const end = sim.now();
    const start = end - 72 * HOUR;
    const feed = (await walk({}, start, end)).rows;
    expect(feed.length).toBeGreaterThan(0);
    const walks = await Promise.all(
      ITEM_CODES.map(async (itemCode) => (await walk({ itemCode }, start, end)).rows),
    );
    const proof = proveCoverage(
      feed.map(proofRow),
      walks.map((w) => w.map(proofRow)),
      TRANSACTION_TYPES,
    );

    // What the proof found: every feed row without an outer item is uncovered, nothing is read twice or from outside.
    expect(proof.uncovered).toBe(feed.filter((r) => r.itemCode === undefined).length);
    expect(proof.uncovered).toBeGreaterThan(0);
    expect(proof.repeated).toBe(0);
    expect(proof.foreign).toBe(0);
    expect(proof.complete).toBe(false);
    for (const t of ['wage', 'applicationFee', 'donation', 'articleTip'])
      expect(proof.unprovenTypes).toContain(t);
    expect(proof.provenTypes).toContain('trading');

    // The full history by the plan: partition walks on the proven types, per-user walks on the rest.
    const truth = sim.truth('transactions') as unknown as Row[];
    const reads = new Map<string, number>();
    let partitionPages = 0;
    for (const itemCode of ITEM_CODES) {
      const w = await walk({ itemCode, transactionType: proof.provenTypes }, 0, Infinity);
      partitionPages += w.pages;
      for (const r of w.rows) reads.set(r._id, (reads.get(r._id) ?? 0) + 1);
    }
    // Each row of a proven type once.
    expect([...reads.values()].every((n) => n === 1)).toBe(true);
    const users = (sim.truth('users') as unknown as { _id: string }[]).map((u) => u._id);
    let userPages = 0;
    await Promise.all(
      Array.from({ length: 8 }, async (_, lane) => {
        for (let i = lane; i < users.length; i += 8) {
          const w = await walk({ userId: users[i]!, transactionType: proof.unprovenTypes }, 0, Infinity);
          userPages += w.pages;
          for (const r of w.rows) reads.set(r._id, (reads.get(r._id) ?? 0) + 1);
        }
      }),
    );
    expect([...reads.keys()].sort()).toEqual(truth.map((r) => r._id).sort());
    // The per-user walks read only the unproven types.
    const proven = new Set(proof.provenTypes);
    const provenRows = truth.filter((r) => proven.has(r.transactionType)).length;
    // Full pages, then at most a partial and an empty page per walk (the upstream sends a cursor on a partial page).
    expect(partitionPages).toBeLessThanOrEqual(Math.ceil(provenRows / 100) + 2 * ITEM_CODES.length);
    expect(userPages).toBeGreaterThan(0);
  });
});
