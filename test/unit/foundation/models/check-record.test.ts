import { describe, expect, it } from 'vitest';
import { models, checkRecord, unknownKeys, recordVersion } from '../../../../src/foundation/models/index.js';

describe('checkRecord', () => {
  it('accepts a conforming record, absent and null fields, and unknown fields', () => {
    const tx = {
      _id: '6740f0a0aaaaaaaaaaaaaaaa',
      __v: 0,
      money: 1.5,
      quantity: 2,
      createdAt: '2026-11-01T00:00:00.000Z',
      item: { skills: { attack: 3 }, stats: { a: 1 } },
      sellerId: null,
      sellerCountryId: 'c1',
    };
    expect(checkRecord(models.Transaction, tx)).toEqual([]);
    expect(unknownKeys(models.Transaction, tx)).toEqual(['sellerCountryId']);
  });

  it('names the path of every problem, nested and in arrays', () => {
    const election = {
      _id: 'e1',
      votesCount: 1.5,
      createdAt: 'not a date',
      candidates: [
        { user: 'u1', voteCount: 3 },
        { user: 7, isElected: 'yes' },
      ],
      votes: [1, 2],
    };
    const issues = checkRecord(models.Election, election);
    expect(issues.map((i) => i.path).sort()).toEqual(
      ['candidates[1].isElected', 'candidates[1].user', 'createdAt', 'votes', 'votesCount'].sort(),
    );
    expect(issues.find((i) => i.path === 'createdAt')?.message).toMatch(/date-time/);
  });

  it('requires _id on entities only', () => {
    expect(checkRecord(models.Donation, { amount: 1 }).map((i) => i.path)).toEqual(['_id']);
    expect(checkRecord(models.Donation, { _id: '' }).map((i) => i.path)).toEqual(['_id']);
    // Sub-models carry an optional _id; ElectionCandidate has none at all.
    expect(checkRecord(models.Equipment, { itemId: 'x' })).toEqual([]);
    expect(checkRecord(models.ElectionCandidate, { _id: 5 })).toEqual([]);
    expect(checkRecord(models.User, 'text')).toEqual([
      { path: '', message: 'expected User object, got string "text"' },
    ]);
  });

  it('every model field has a kind the encoders know', () => {
    const kinds = new Set<string>();
    const walk = (fields: Record<string, { kind: string }>) => {
      for (const f of Object.values(fields)) kinds.add(f.kind);
    };
    for (const m of Object.values(models)) walk(m.fields);
    expect(
      [...kinds].every((k) =>
        ['string', 'integer', 'number', 'boolean', 'datetime', 'json', 'map', 'array', 'model'].includes(k),
      ),
    ).toBe(true);
  });
});

describe('recordVersion', () => {
  it('is empty for immutable resources and updatedAt, then __v, then createdAt for the others', () => {
    expect(recordVersion('transactions', { _id: 'a', updatedAt: 'x' })).toBe('');
    expect(recordVersion('users', { _id: 'a', updatedAt: '2026-01-01T00:00:00.000Z', __v: 3 })).toBe(
      '2026-01-01T00:00:00.000Z',
    );
    expect(recordVersion('elections', { _id: 'a', __v: 3, createdAt: 'c' })).toBe('3');
    expect(recordVersion('elections', { _id: 'a', createdAt: 'c' })).toBe('c');
    expect(recordVersion('parties', { _id: 'a', updatedAt: { bad: true } })).toBe('');
  });
});
