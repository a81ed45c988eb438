import { describe, expect, it } from 'vitest';
import {
  createDriftTracker,
  dominantType,
  jsonTypeOf,
  mergeDriftRecord,
  normalizeDriftPath,
} from '../../../../src/pipeline/drift/index.js';
import { toAvroValue } from '../../../../src/output/encoding/avro-mapping.js';
import { EXTRA_FIELD } from '../../../../src/output/encoding/avro-schema.js';
import { Transaction } from '../../../../src/foundation/models/catalogue.js';

describe('drift tracker', () => {
  it('folds a page into one entry per kind and path, with JSON types, indices as []', () => {
    const t = createDriftTracker();
    t.unknownField('', 'sellerMuId', 'mu1');
    t.unknownField('', 'sellerMuId', 'mu2');
    t.unknownField('', 'sellerMuId', 7);
    t.unknownField('candidates[0]', 'foo', true);
    t.unknownField('candidates[12]', 'foo', null);
    t.wrongType('money', '12.5');
    expect(t.page()).toEqual({
      dropped: 0,
      entries: [
        { kind: 'new_field', path: 'sellerMuId', count: 3, types: { string: 2, integer: 1 } },
        { kind: 'new_field', path: 'candidates[].foo', count: 2, types: { boolean: 1, null: 1 } },
        { kind: 'type_changed', path: 'money', count: 1, types: { string: 1 } },
      ],
    });
  });

  it('keeps at most maxPaths paths per page and counts the rest as dropped', () => {
    const t = createDriftTracker({ maxPaths: 2 });
    for (const key of ['a', 'b', 'c', 'a', 'd']) t.unknownField('', key, 1);
    const page = t.page();
    expect(page.entries.map((e) => [e.path, e.count])).toEqual([
      ['a', 2],
      ['b', 1],
    ]);
    expect(page.dropped).toBe(2);
  });

  it('names JSON types and normalises paths', () => {
    expect([1, 1.5, 's', false, {}, [], null].map(jsonTypeOf)).toEqual([
      'integer',
      'number',
      'string',
      'boolean',
      'object',
      'array',
      'null',
    ]);
    expect(normalizeDriftPath('a[3].b[10].c')).toBe('a[].b[].c');
    expect(normalizeDriftPath('plain.path')).toBe('plain.path');
    expect(dominantType({ null: 9, string: 3, integer: 1 })).toBe('string');
    expect(dominantType({ null: 2 })).toBeUndefined();
  });

  it('merges a page entry into a stored record: counts and types add, first seen stays, last seen moves', () => {
    const first = mergeDriftRecord(
      undefined,
      { kind: 'new_field', path: 'x', count: 2, types: { string: 2 } },
      1000,
    );
    expect(first).toEqual({
      kind: 'new_field',
      path: 'x',
      count: 2,
      types: { string: 2 },
      firstSeenMs: 1000,
      lastSeenMs: 1000,
    });
    const second = mergeDriftRecord(
      first,
      { kind: 'new_field', path: 'x', count: 3, types: { string: 1, integer: 2 } },
      5000,
    );
    expect(second).toMatchObject({
      count: 5,
      types: { string: 3, integer: 2 },
      firstSeenMs: 1000,
      lastSeenMs: 5000,
    });
  });
});

describe('toAvroValue drift options', () => {
  const record = {
    _id: 't1',
    money: 1.5,
    sellerMuId: 'mu1',
    item: { code: 'knife', foo: 3 },
  };

  it('tells the sink of every unknown field at any depth, and still keeps them in _extra (freeze)', () => {
    const t = createDriftTracker();
    const value = toAvroValue(Transaction, record, { sink: t });
    expect(value[EXTRA_FIELD]).toBe('{"sellerMuId":"mu1"}');
    expect((value['item'] as Record<string, unknown>)[EXTRA_FIELD]).toBe('{"foo":3}');
    expect(t.page().entries).toEqual([
      { kind: 'new_field', path: 'item.foo', count: 1, types: { integer: 1 } },
      { kind: 'new_field', path: 'sellerMuId', count: 1, types: { string: 1 } },
    ]);
  });

  it('drops unknown fields after counting them (discard)', () => {
    const t = createDriftTracker();
    const value = toAvroValue(Transaction, record, { sink: t, discardUnknown: true });
    expect(value[EXTRA_FIELD]).toBeNull();
    expect((value['item'] as Record<string, unknown>)[EXTRA_FIELD]).toBeNull();
    expect(t.page().entries).toHaveLength(2);
  });
});
