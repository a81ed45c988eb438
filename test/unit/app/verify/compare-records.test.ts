import { describe, expect, it } from 'vitest';
import { compareRecords, versionKey } from '../../../../src/app/verify/index.js';

describe('compareRecords', () => {
  it('counts matched, missing, unexpected and duplicates; excludes expected dead letters', () => {
    const r = compareRecords(['a', 'b', 'b', 'x', 'b'], ['a', 'b', 'c', 'm'], new Set(['m']));
    expect(r).toMatchObject({
      matched: 2,
      missing: 1,
      unexpected: 1,
      duplicates: 2,
      consumed: 5,
      expected: 3,
    });
    expect(r.missingSample).toEqual(['c']);
    expect(r.duplicateSample).toEqual(['b x3']);
  });

  it('keys versions by epoch ms so ISO text and Avro millis compare equal', () => {
    expect(versionKey('users', { _id: 'u', updatedAt: '2026-01-01T00:00:00.000Z' })).toBe('u@1767225600000');
    expect(versionKey('users', { _id: 'u', updatedAt: '2026-01-01T00:00:00Z' })).toBe('u@1767225600000');
    expect(versionKey('donations', { _id: 'd', updatedAt: 'x' })).toBe('d');
  });
});
