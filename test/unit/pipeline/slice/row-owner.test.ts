// One owner walk per trade (src/pipeline/slice/row-owner.ts): of the walks of a trade's parties exactly one claims it.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ownedRows, ownsTrade } from '../../../../src/pipeline/slice/row-owner.js';

const userId = fc.integer({ min: 0, max: 40 }).map((n) => n.toString(16).padStart(24, '0'));
const party = fc.oneof(userId, fc.constant(undefined), fc.constant('not-an-id'), fc.constant(42));

describe('ownsTrade', () => {
  it('of the walks of a trade’s well-formed parties exactly one claims it, the smaller id’s', () => {
    fc.assert(
      fc.property(party, party, (buyerId, sellerId) => {
        const row = { _id: 't', buyerId, sellerId };
        const parties = [...new Set([buyerId, sellerId])].filter(
          (p): p is string => typeof p === 'string' && /^[a-f\d]{24}$/.test(p),
        );
        const claimers = parties.filter((p) => ownsTrade(p, row));
        if (parties.length > 0) expect(claimers).toEqual([parties.sort()[0]]);
      }),
    );
  });

  it('claims whatever it cannot place: a walk that is not among the row’s parties', () => {
    fc.assert(
      fc.property(userId, party, party, (walker, buyerId, sellerId) => {
        fc.pre(walker !== buyerId && walker !== sellerId);
        expect(ownsTrade(walker, { _id: 't', buyerId, sellerId })).toBe(true);
      }),
    );
  });

  it('keeps a self-trade and a single-party row with the walk that reads it', () => {
    const a = '0'.repeat(23) + 'a';
    expect(ownsTrade(a, { buyerId: a, sellerId: a })).toBe(true);
    expect(ownsTrade(a, { buyerId: a, userId: a })).toBe(true);
    expect(ownsTrade(a, { sellerId: a })).toBe(true);
  });
});

describe('ownedRows', () => {
  it('drops the rows another walk owns and counts them; without a walker it keeps every row', () => {
    const [a, b, c] = ['a', 'b', 'c'].map((x) => '0'.repeat(23) + x) as [string, string, string];
    const rows = [
      { _id: '1', buyerId: a, sellerId: b },
      { _id: '2', buyerId: c, sellerId: b },
      { _id: '3', buyerId: b },
    ];
    expect(ownedRows(b, rows)).toEqual({ owned: [rows[1], rows[2]], others: 1 });
    expect(ownedRows(undefined, rows)).toEqual({ owned: rows, others: 0 });
  });
});
