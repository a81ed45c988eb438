import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { models, checkRecord } from '../../../../src/foundation/models/index.js';
import type { ModelDef } from '../../../../src/foundation/models/index.js';
import { createWorld, SIMULATOR_RESOURCES, TRANSACTION_TYPES } from '../../../../tools/simulator/index.js';
import type { SimulatorResource } from '../../../../tools/simulator/index.js';

const NOW = Date.parse('2026-11-01T00:00:00.000Z');
const H72 = 72 * 3_600_000;
const world = createWorld({ seed: 1, scale: 'small' });
const truth = Object.fromEntries(SIMULATOR_RESOURCES.map((r) => [r, world.truth(r)])) as Record<
  SimulatorResource,
  Record<string, unknown>[]
>;

const MODEL: Record<SimulatorResource, ModelDef> = {
  articles: models.ArticleLite,
  transactions: models.Transaction,
  parties: models.Party,
  users: models.User,
  elections: models.Election,
  donations: models.Donation,
  countries: models.Country,
};
const digest = (value: unknown): string => createHash('sha256').update(JSON.stringify(value)).digest('hex');
const sortField = (r: SimulatorResource): string => (r === 'articles' ? 'publishedAt' : 'createdAt');

/** Every dotted leaf path of a value (arrays collapse to []). */
function paths(value: unknown, prefix = '', out = new Set<string>()): Set<string> {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    for (const [k, v] of Object.entries(value)) paths(v, prefix === '' ? k : `${prefix}.${k}`, out);
  } else out.add(prefix);
  return out;
}
/** Every leaf path a model defines (json fields are leaves). */
function modelPaths(model: ModelDef, prefix = '', out = new Set<string>()): Set<string> {
  for (const [k, type] of Object.entries(model.fields)) {
    const p = prefix === '' ? k : `${prefix}.${k}`;
    if (type.kind === 'model') modelPaths(type.model, p, out);
    else out.add(p);
  }
  return out;
}

describe('world', () => {
  it('same seed, same truth byte for byte; different seed, different world', () => {
    const again = createWorld({ seed: 1, scale: 'small' });
    const other = createWorld({ seed: 2, scale: 'small' });
    for (const r of SIMULATOR_RESOURCES) {
      expect(digest(again.truth(r))).toBe(digest(truth[r]));
      expect(digest(other.truth(r))).not.toBe(digest(truth[r]));
    }
  });

  it('builds the small scale in under 2 s', () => {
    const t0 = performance.now();
    createWorld({ seed: 9, scale: 'small' });
    expect(performance.now() - t0).toBeLessThan(2000);
  });

  it('orders every truth newest first by (sort time, _id), with unique ObjectIds consistent with createdAt', () => {
    for (const r of SIMULATOR_RESOURCES) {
      const records = truth[r];
      expect(records.length).toBeGreaterThan(0);
      const ids = new Set<string>();
      // One assertion per resource (thousands of expect() calls would dominate the run time).
      const problems: string[] = [];
      records.forEach((rec, i) => {
        const id = String(rec['_id']);
        if (!/^[0-9a-f]{24}$/.test(id)) problems.push(`${id}: not an ObjectId`);
        ids.add(id);
        if (parseInt(id.slice(0, 8), 16) !== Math.floor(Date.parse(String(rec['createdAt'])) / 1000))
          problems.push(`${id}: first 4 bytes are not createdAt`);
        if (!Number.isInteger(rec['__v'])) problems.push(`${id}: __v`);
        if (!(Date.parse(String(rec[sortField(r)])) < NOW)) problems.push(`${id}: not older than now`);
        const prev = records[i - 1];
        if (prev !== undefined) {
          const a = Date.parse(String(prev[sortField(r)]));
          const b = Date.parse(String(rec[sortField(r)]));
          if (!(a > b || (a === b && String(prev['_id']) > id))) problems.push(`${id}: out of order`);
        }
      });
      expect(problems, r).toEqual([]);
      expect(ids.size).toBe(records.length);
    }
  });

  it('conforms to the model catalogue, and fills every field of every model somewhere', () => {
    for (const r of SIMULATOR_RESOURCES) {
      const seen = new Set<string>();
      for (const rec of truth[r]) {
        expect(checkRecord(MODEL[r], rec)).toEqual([]);
        paths(rec, '', seen);
      }
      for (const p of modelPaths(MODEL[r])) {
        if ((r === 'articles' && p === 'comments') || (r === 'transactions' && p === 'item.slot')) continue;
        const covered = [...seen].some((s) => s === p || s.startsWith(`${p}.`));
        expect(covered, `${r}: field ${p} never filled`).toBe(true);
      }
    }
  });

  it('leaves some optional user fields out, as real data does', () => {
    const leaves = [...modelPaths(models.User)];
    const present = truth.users.map((u) => paths(u));
    // Every user has its identity; no leaf is always there, except the ones the world sets itself.
    for (const p of present)
      for (const k of ['username', 'country', 'createdAt', 'updatedAt']) expect(p.has(k)).toBe(true);
    const sometimesAbsent = leaves.filter((leaf) =>
      present.some((p) => ![...p].some((s) => s === leaf || s.startsWith(`${leaf}.`))),
    );
    expect(sometimesAbsent.length).toBeGreaterThan(leaves.length / 2);
    expect(truth.users.some((u) => !('mu' in u))).toBe(true);
    expect(truth.users.some((u) => 'mu' in u)).toBe(true);
  });

  it('serves equipment by slot with the slot set (the catalogue field transactions leave out)', () => {
    const gear = world.equipmentOf(world.store('users').table.length - 1);
    expect(Object.keys(gear)).toContain('weapon');
    for (const [slot, item] of Object.entries(gear)) {
      expect(item['slot']).toBe(slot);
      expect(checkRecord(models.Equipment, item)).toEqual([]);
    }
  });

  it('has every transaction type, extra upstream fields, and a >100-row burst in one millisecond inside 72 h', () => {
    const txs = truth.transactions;
    expect(new Set(txs.map((t) => t['transactionType']))).toEqual(new Set(TRANSACTION_TYPES));
    const extras = ['sellerMuId', 'buyerMuId', 'sellerCountryId', 'buyerCountryId'];
    expect(txs.filter((t) => !extras.every((k) => k in t))).toEqual([]);
    // Every transaction is reachable from a user walk.
    expect(txs.filter((t) => typeof t['buyerId'] !== 'string')).toEqual([]);
    const perMs = new Map<string, number>();
    for (const t of txs) perMs.set(String(t['createdAt']), (perMs.get(String(t['createdAt'])) ?? 0) + 1);
    const [burstAt, size] = [...perMs.entries()].sort((a, b) => b[1] - a[1])[0] as [string, number];
    expect(size).toBeGreaterThan(100);
    expect(Date.parse(burstAt)).toBeGreaterThanOrEqual(NOW - H72);
    expect(txs.filter((t) => Date.parse(String(t['createdAt'])) >= NOW - H72).length).toBeGreaterThan(1000);
    expect(
      txs.filter((t) => Date.parse(String(t['createdAt'])) < NOW - 30 * 24 * 3_600_000).length,
    ).toBeGreaterThan(1000);
  });

  it('case openings carry the case as itemCode and the content as item', () => {
    const cases = truth.transactions.filter((t) => t['transactionType'] === 'openCase');
    expect(cases.length).toBeGreaterThan(0);
    for (const t of cases) {
      expect(String(t['itemCode'])).toMatch(/^case/);
      expect((t['item'] as Record<string, unknown>)['itemCode']).not.toBe(t['itemCode']);
    }
  });

  it('references existing entities', () => {
    const users = new Set(truth.users.map((u) => u['_id']));
    const countries = new Set(truth.countries.map((c) => c['_id']));
    const parties = new Set(truth.parties.map((p) => p['_id']));
    const bad = truth.transactions.filter(
      (t) =>
        !users.has(t['buyerId']) ||
        (t['sellerId'] !== undefined && !users.has(t['sellerId'])) ||
        !countries.has(t['countryId']) ||
        (t['partyId'] !== undefined && !parties.has(t['partyId'])),
    );
    expect(bad).toEqual([]);
    expect(truth.users.filter((u) => !countries.has(u['country']))).toEqual([]);
    const candidates = truth.elections.flatMap((e) => e['candidates'] as Array<Record<string, unknown>>);
    expect(candidates.filter((c) => !users.has(c['user']))).toEqual([]);
    expect(
      truth.donations.filter(
        (d) =>
          !users.has(d['userId']) ||
          ['muId', 'countryId', 'partyId'].filter((k) => d[k] !== undefined).length !== 1,
      ),
    ).toEqual([]);
  });

  it('live mode adds records after the old ones and bumps versions deterministically', () => {
    const a = createWorld({ seed: 4 });
    const b = createWorld({ seed: 4 });
    const rates = { ratePerSecond: 50, changeRatePerSecond: 20 };
    const before = a.store('transactions').table.length;
    a.advanceTo(NOW + 60_000, rates);
    b.advanceTo(NOW + 30_000, rates);
    b.advanceTo(NOW + 60_000, rates);
    expect(a.nowMs).toBe(NOW + 60_000);
    const txs = a.truth('transactions');
    expect(txs.length).toBeGreaterThan(before + 1000);
    expect(Date.parse(String(txs[0]?.['createdAt']))).toBeGreaterThanOrEqual(NOW);
    // Advancing in one step or two gives the same world (changes are the costly part to compare: full truth).
    for (const r of ['users', 'parties', 'articles', 'elections'] as const)
      expect(digest(b.truth(r)), r).toBe(digest(a.truth(r)));
    for (const r of ['transactions', 'donations'] as const) {
      const ta = a.store(r).table;
      const tb = b.store(r).table;
      expect(tb.length).toBe(ta.length);
      expect(tb.oid(tb.length - 1)).toBe(ta.oid(ta.length - 1));
      expect(digest(b.store(r).build(tb.length - 1))).toBe(digest(a.store(r).build(ta.length - 1)));
    }
    const changed = a.truth('users').filter((u) => Date.parse(String(u['updatedAt'])) >= NOW);
    expect(changed.length).toBeGreaterThan(0);
  });
});
