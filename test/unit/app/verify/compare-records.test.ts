import { describe, expect, it } from 'vitest';
import { compareCounts, compareRecords, versionKey } from '../../../../src/app/verify/index.js';

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

  it('compareCounts on the topic counted as read gives what compareRecords gives on its keys', () => {
    for (let seed = 1; seed <= 50; seed++) {
      let x = seed;
      const next = (n: number): number => ((x = (x * 1103515245 + 12345) % 2 ** 31), x % n);
      const topic = Array.from({ length: next(40) }, () => `k${next(20)}`);
      const truth = Array.from({ length: next(30) }, () => `k${next(25)}`);
      const excluded = new Set([`k${next(25)}`]);
      const counts = new Map<string, number>();
      for (const k of topic) counts.set(k, (counts.get(k) ?? 0) + 1);
      expect(compareCounts(counts, topic.length, truth, excluded)).toEqual(
        compareRecords(topic, truth, excluded),
      );
    }
  });
});
