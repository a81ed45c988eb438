import { describe, expect, it } from 'vitest';
import { createDriftTracker, createQuietFields } from '../../../../src/pipeline/drift/index.js';

const page = (n: number, withField: boolean): Record<string, unknown>[] =>
  Array.from({ length: n }, (_, i) => ({ _id: String(i), a: 1, ...(withField ? { b: 'x' } : {}) }));

describe('field_gone_quiet', () => {
  it('a field seen, then absent from afterRecords records in a row, is reported once as the run, then per page', () => {
    const quiet = createQuietFields({ afterRecords: 100 });
    const observe = (records: Record<string, unknown>[]) => {
      const t = createDriftTracker();
      quiet.observe('donations', ['a', 'b'], records, t);
      return t.page().entries.map((e) => [e.kind, e.path, e.count]);
    };
    expect(observe(page(50, true))).toEqual([]);
    expect(observe(page(50, false))).toEqual([]); // 50 in a row: not yet
    expect(observe(page(50, false))).toEqual([['field_gone_quiet', 'b', 100]]);
    expect(observe(page(20, false))).toEqual([['field_gone_quiet', 'b', 20]]);
    expect(observe(page(10, true))).toEqual([]); // back: the run ends
    expect(observe(page(90, false))).toEqual([]);
  });

  it('a field never seen (a listing-less or unused field) is not quiet', () => {
    const quiet = createQuietFields({ afterRecords: 10 });
    const t = createDriftTracker();
    for (let i = 0; i < 5; i++) quiet.observe('donations', ['b'], page(50, false), t);
    expect(t.page().entries).toEqual([]);
  });
});
