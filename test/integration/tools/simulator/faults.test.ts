/** Seeded, switchable faults: 5xx, per-slot 500s, resets, hangs, broken JSON, corrupted records; and latency. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { checkRecord, models } from '../../../../src/foundation/models/index.js';
import { startSimulator, type Simulator } from '../../../../tools/simulator/index.js';
import { KEY, batch, get, walk, type Rec } from './helpers.js';

let sim: Simulator;
const OFF = { http5xx: 0, batch5xx: 0, reset: 0, hang: 0, badJson: 0, malformed: 0 };
beforeAll(async () => {
  sim = await startSimulator({ port: 0, seed: 8, rateLimit: { enabled: false } });
});
afterAll(async () => {
  await sim.close();
});
beforeEach(() => {
  sim.configure({
    faults: { ...OFF, seed: 7 },
    latency: { requestMs: 0, feedHeadMs: 0, feedPerHourMs: 0, filteredMs: 0, procedureMs: 0 },
  });
  sim.resetStats();
});

async function outcome(): Promise<string> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), 1_000);
  try {
    const r = await fetch(`${sim.url}/country.getAllCountries`, {
      signal: controller.signal,
      headers: { 'x-api-key': KEY },
    });
    const text = await r.text();
    if (r.status !== 200) return `status ${r.status}`;
    try {
      JSON.parse(text);
      return 'ok';
    } catch {
      return 'bad json';
    }
  } catch (error) {
    return controller.signal.aborted ? 'hang' : `network ${(error as Error).message}`;
  } finally {
    clearTimeout(timer);
  }
}

describe('request faults', () => {
  it('always-on faults of each kind', async () => {
    sim.configure({ faults: { http5xx: 1 } });
    expect(await outcome()).toMatch(/^status 50[23]$/);
    sim.configure({ faults: { http5xx: 0, reset: 1 } });
    expect(await outcome()).toMatch(/^network/);
    sim.configure({ faults: { reset: 0, badJson: 1 } });
    expect(await outcome()).toBe('bad json');
    sim.configure({ faults: { badJson: 0, hang: 1 } });
    expect(await outcome()).toBe('hang');
    sim.configure({ faults: { hang: 0 } });
    expect(await outcome()).toBe('ok');
    expect(sim.stats().faults).toEqual({
      http5xx: 1,
      batch5xx: 0,
      reset: 1,
      hang: 1,
      badJson: 1,
      oversize: 0,
    });
  });

  it('rates are seeded: the same request sequence meets the same faults', async () => {
    const run = async (): Promise<string[]> => {
      // Naming the seed restarts the fault stream.
      sim.configure({ faults: { seed: 99, http5xx: 0.3, badJson: 0.2 } });
      const out: string[] = [];
      for (let i = 0; i < 30; i++) out.push(await outcome());
      return out;
    };
    const first = await run();
    const second = await run();
    expect(second).toEqual(first);
    expect(first.filter((o) => o !== 'ok').length).toBeGreaterThan(3);
    expect(first.filter((o) => o === 'ok').length).toBeGreaterThan(5);
  });

  it('batch5xx fails single slots with their own 500 envelope: the batch answers 207', async () => {
    sim.configure({ faults: { batch5xx: 0.3 } });
    const a = await batch(
      sim,
      Array.from({ length: 50 }, () => ['country.getAllCountries', {}] as [string, unknown]),
    );
    expect(a.status).toBe(207);
    const slots = a.body as Rec[];
    const failed = slots.filter((s) => 'error' in s);
    expect(failed.length).toBeGreaterThan(3);
    expect(failed.length).toBeLessThan(40);
    for (const f of failed)
      expect(f).toMatchObject({ error: { data: { code: 'INTERNAL_SERVER_ERROR', httpStatus: 500 } } });
    expect(sim.stats().faults.batch5xx).toBe(failed.length);
  });
});

describe('malformed records', () => {
  it('serves a deterministic share corrupted, lists them with their real _id, and keeps truth clean', async () => {
    sim.configure({ faults: { malformed: 0.05 } });
    const bad = sim.malformed('transactions');
    const window = sim
      .truth('transactions')
      .filter((t) => Date.parse(String(t['createdAt'])) >= Date.parse('2026-10-29T00:00:00Z'));
    expect(bad.length).toBeGreaterThan(100);
    expect(new Set(bad.map((b) => b.kind))).toEqual(new Set(['wrong-type', 'missing-id', 'invalid-date']));
    expect(sim.malformed('transactions')).toEqual(bad);
    expect(sim.malformed('countries')).toEqual([]);
    const { items } = await walk(sim, 'transaction.getPaginatedTransactions', {}, { limit: 100 });
    expect(items.length).toBe(window.length);
    const kinds = new Map(bad.map((b) => [b._id, b.kind]));
    let corrupted = 0;
    items.forEach((served, i) => {
      const clean = window[i] as Rec;
      const kind = kinds.get(String(clean['_id']));
      const issues = checkRecord(models.Transaction, served);
      if (kind === undefined) {
        expect(served).toEqual(clean);
      } else {
        corrupted++;
        expect(issues.length).toBeGreaterThan(0);
        if (kind === 'missing-id') expect(served['_id']).toBeUndefined();
        if (kind === 'invalid-date') expect(served['createdAt']).toBe('not-a-date');
        if (kind === 'wrong-type') expect(typeof served['money']).toBe('string');
      }
    });
    expect(corrupted).toBeGreaterThan(0);
    // Truth is the clean record.
    for (const t of sim.truth('transactions')) expect(typeof t['money']).toBe('number');
    // By-id reads are corrupted the same way.
    const users = sim.malformed('users');
    sim.configure({ faults: { malformed: 0.2 } });
    const user = sim.malformed('users')[0];
    expect(users.length).toBeLessThanOrEqual(sim.malformed('users').length);
    const a = await get(sim, 'user.getUserById', { userId: user?._id });
    expect(
      checkRecord(models.User, (a.body as { result: { data: Rec } }).result.data).length,
    ).toBeGreaterThan(0);
  });

  it('records carry the unknown fields upstream sends (sellerMuId, buyerMuId, sellerCountryId, buyerCountryId)', async () => {
    const a = await get(sim, 'transaction.getPaginatedTransactions', { limit: 10 });
    for (const t of (a.body as { result: { data: { items: Rec[] } } }).result.data.items)
      expect(Object.keys(t)).toEqual(
        expect.arrayContaining(['sellerMuId', 'buyerMuId', 'sellerCountryId', 'buyerCountryId']),
      );
  });
});

describe('latency', () => {
  it('adds the per-request delay and the depth-dependent cost of the unfiltered feed; a batch costs its slowest call', async () => {
    const time = async (f: () => Promise<unknown>): Promise<number> => {
      const t0 = performance.now();
      await f();
      return performance.now() - t0;
    };
    sim.configure({ latency: { requestMs: 150 } });
    expect(await time(() => get(sim, 'country.getAllCountries', {}))).toBeGreaterThanOrEqual(145);
    sim.configure({ latency: { requestMs: 0, feedHeadMs: 20, feedPerHourMs: 10, filteredMs: 50 } });
    const deep = `v2.${Buffer.from(
      JSON.stringify([
        { t: 'date', v: '2026-10-31T00:00:00.000Z' },
        { t: 'str', v: '0'.repeat(24) },
      ]),
    ).toString('base64url')}`;
    expect(
      await time(() => get(sim, 'transaction.getPaginatedTransactions', { limit: 1, cursor: deep })),
    ).toBeGreaterThanOrEqual(255);
    const filtered = await time(() =>
      batch(
        sim,
        Array.from({ length: 10 }, () => ['party.getManyPaginated', { limit: 1 }] as [string, unknown]),
      ),
    );
    expect(filtered).toBeGreaterThanOrEqual(45);
    expect(filtered).toBeLessThan(400); // concurrent, not 10 x 50 ms
  });
});

describe('records the upstream fixed (issue 48, dlq replay)', () => {
  it('a fixed record is served clean by id and in listings, and leaves malformed(); POST /__sim/fix does the same', async () => {
    const own = await startSimulator({ port: 0, seed: 8, rateLimit: { enabled: false } });
    try {
      own.configure({ faults: { malformed: 0.2 } });
      const bad = own.malformed('users').filter((b) => b.kind !== 'missing-id');
      const [first, second] = bad;
      if (first === undefined || second === undefined) throw new Error('two malformed users expected');
      const served = async (id: string): Promise<Rec> =>
        ((await get(own, 'user.getUserById', { userId: id })).body as { result: { data: Rec } }).result.data;
      expect(checkRecord(models.User, await served(first._id)).length).toBeGreaterThan(0);
      expect(own.fix('users', [first._id])).toBe(1);
      expect(checkRecord(models.User, await served(first._id))).toEqual([]);
      expect(own.malformed('users').map((b) => b._id)).not.toContain(first._id);
      // The other one is still served corrupted, until it is fixed over HTTP.
      expect(checkRecord(models.User, await served(second._id)).length).toBeGreaterThan(0);
      const base = own.url.replace(/\/trpc$/, '');
      const answer = await fetch(`${base}/__sim/fix`, {
        method: 'POST',
        body: JSON.stringify({ resource: 'users', ids: [second._id] }),
      });
      expect(await answer.json()).toEqual({ fixed: 2 });
      expect(checkRecord(models.User, await served(second._id))).toEqual([]);
      const refused = await fetch(`${base}/__sim/fix`, {
        method: 'POST',
        body: '{"resource":"nope","ids":[]}',
      });
      expect(refused.status).toBe(400);
    } finally {
      await own.close();
    }
  });
});
