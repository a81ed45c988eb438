import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { models, checkRecord } from '../../../src/models/index.js';
import type { ModelDef } from '../../../src/models/index.js';
import { createWorld, SIMULATOR_RESOURCES, TRANSACTION_TYPES } from '../../../src/simulator/index.js';
import type { SimulatorResource } from '../../../src/simulator/index.js';

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
      records.forEach((rec, i) => {
        const id = String(rec['_id']);
        expect(id).toMatch(/^[0-9a-f]{24}$/);
        ids.add(id);
        expect(parseInt(id.slice(0, 8), 16)).toBe(Math.floor(Date.parse(String(rec['createdAt'])) / 1000));
        expect(Number.isInteger(rec['__v'])).toBe(true);
        expect(Date.parse(String(rec[sortField(r)]))).toBeLessThan(NOW);
        const prev = records[i - 1];
        if (prev !== undefined) {
          const a = Date.parse(String(prev[sortField(r)]));
          const b = Date.parse(String(rec[sortField(r)]));
          expect(a > b || (a === b && String(prev['_id']) > id)).toBe(true);
        }
      });
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
    for (const t of txs) {
      for (const k of ['sellerMuId', 'buyerMuId', 'sellerCountryId', 'buyerCountryId'])
        expect(k in t).toBe(true);
      expect(typeof t['buyerId']).toBe('string'); // every transaction is reachable from a user walk
    }
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
    for (const t of truth.transactions) {
      expect(users.has(t['buyerId'])).toBe(true);
      if (t['sellerId'] !== undefined) expect(users.has(t['sellerId'])).toBe(true);
      expect(countries.has(t['countryId'])).toBe(true);
      if (t['partyId'] !== undefined) expect(parties.has(t['partyId'])).toBe(true);
    }
    for (const u of truth.users) expect(countries.has(u['country'])).toBe(true);
    for (const e of truth.elections)
      for (const c of e['candidates'] as Array<Record<string, unknown>>)
        expect(users.has(c['user'])).toBe(true);
    for (const d of truth.donations) {
      expect(users.has(d['userId'])).toBe(true);
      expect(['muId', 'countryId', 'partyId'].filter((k) => d[k] !== undefined)).toHaveLength(1);
    }
  });

  it('live mode adds records after the old ones and bumps versions deterministically', () => {
    const a = createWorld({ seed: 4 });
    const b = createWorld({ seed: 4 });
    const rates = { ratePerSecond: 50, changeRatePerSecond: 20 };
    const before = a.truth('transactions').length;
    a.advanceTo(NOW + 60_000, rates);
    b.advanceTo(NOW + 30_000, rates);
    b.advanceTo(NOW + 60_000, rates);
    expect(a.nowMs).toBe(NOW + 60_000);
    const txs = a.truth('transactions');
    expect(txs.length).toBeGreaterThan(before + 1000);
    expect(Date.parse(String(txs[0]?.['createdAt']))).toBeGreaterThanOrEqual(NOW);
    for (const r of SIMULATOR_RESOURCES) expect(digest(b.truth(r)), r).toBe(digest(a.truth(r)));
    const changed = a.truth('users').filter((u) => Date.parse(String(u['updatedAt'])) >= NOW);
    expect(changed.length).toBeGreaterThan(0);
  });
});
