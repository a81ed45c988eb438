import avro from 'avsc';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RESOURCE_INFO, RESOURCES } from '../../../../src/foundation/models/resources.js';
import { Transaction, User, Election } from '../../../../src/foundation/models/catalogue.js';
import { canonicalRecord, fromAvroValue, toAvroValue } from '../../../../src/output/encoding/avro-mapping.js';
import { generateAvroSchema } from '../../../../src/output/encoding/avro-schema.js';
import { AVRO_TYPE_OPTIONS } from '../../../../src/output/encoding/avro-types.js';
import { EncodingError } from '../../../../src/foundation/errors/index.js';
import type { ModelDef } from '../../../../src/foundation/models/field.js';
import { modelArb } from './record-arbitrary.js';

function typeOf(model: ModelDef): avro.Type {
  return avro.Type.forSchema(generateAvroSchema(model) as avro.Schema, { ...AVRO_TYPE_OPTIONS });
}

function roundTrip(model: ModelDef, record: Record<string, unknown>): Record<string, unknown> {
  const type = typeOf(model);
  const decoded = type.fromBuffer(type.toBuffer(toAvroValue(model, record))) as Record<string, unknown>;
  return fromAvroValue(model, decoded);
}

describe('record <-> Avro mapping', () => {
  it.each(RESOURCES)(
    '%s: encode -> Avro binary -> decode equals the canonical record (property)',
    (resource) => {
      const model = RESOURCE_INFO[resource].model;
      fc.assert(
        fc.property(modelArb(model), (record) => {
          expect(roundTrip(model, record)).toStrictEqual(canonicalRecord(model, record));
        }),
        { numRuns: resource === 'users' ? 30 : 100 },
      );
    },
  );

  it('keeps unknown top-level fields in _extra and gives them back beside the known ones', () => {
    const record = { _id: 't1', money: 1.5, sellerCountryId: 'c9', buyerMuId: null };
    const value = toAvroValue(Transaction, record);
    expect(value['_extra']).toBe('{"sellerCountryId":"c9","buyerMuId":null}');
    expect(value['sellerCountryId']).toBeUndefined();
    expect(roundTrip(Transaction, record)).toMatchObject({
      _id: 't1',
      money: 1.5,
      sellerCountryId: 'c9',
      buyerMuId: null,
    });
  });

  it("keeps unknown fields of a sub-model in that sub-record's _extra (nothing lost at any depth)", () => {
    const record = { _id: 't2', item: { code: 'gun', skills: { attack: 3, newSkill: 7 }, wear: 0.5 } };
    const value = toAvroValue(Transaction, record) as {
      item: Record<string, unknown> & { skills: Record<string, unknown> };
    };
    expect(value.item['_extra']).toBe('{"wear":0.5}');
    expect(value.item.skills['_extra']).toBe('{"newSkill":7}');
    const back = roundTrip(Transaction, record) as {
      item: { wear: number; skills: { newSkill: number; attack: number } };
    };
    expect(back.item.wear).toBe(0.5);
    expect(back.item.skills).toMatchObject({ attack: 3, newSkill: 7 });
  });

  it('maps date-times to timestamp-millis and back to ISO-8601 with milliseconds', () => {
    const record = {
      _id: 'u1',
      createdAt: '2024-03-01T10:20:30Z',
      dates: { lastWorkAt: '2024-03-01T10:20:30.123+02:00' },
    };
    const value = toAvroValue(User, record) as { createdAt: Date };
    expect(value.createdAt).toBeInstanceOf(Date);
    const back = roundTrip(User, record) as { createdAt: string; dates: { lastWorkAt: string } };
    expect(back.createdAt).toBe('2024-03-01T10:20:30.000Z');
    expect(back.dates.lastWorkAt).toBe('2024-03-01T08:20:30.123Z');
  });

  it('maps free-form objects to JSON strings and back', () => {
    const record = { _id: 'e1', votes: { a: 1, b: [1, 2] }, candidates: [{ user: 'u', voteCount: 3 }, null] };
    expect(toAvroValue(Election, record)['votes']).toBe('{"a":1,"b":[1,2]}');
    const back = roundTrip(Election, record) as { votes: unknown; candidates: unknown[] };
    expect(back.votes).toEqual({ a: 1, b: [1, 2] });
    expect(back.candidates[1]).toBeNull();
    expect(back.candidates[0]).toMatchObject({ user: 'u', voteCount: 3, article: null, isElected: null });
  });

  it('reads absent and null alike: every schema field comes back, null when it was absent', () => {
    const back = roundTrip(Transaction, { _id: 't3' });
    expect(Object.keys(back)).toEqual(['_id', '__v', ...Object.keys(Transaction.fields)]);
    expect(Object.values(back).filter((v) => v !== null)).toEqual(['t3']);
  });

  it('does not let an upstream "__proto__" key change the prototype of the decoded record', () => {
    const record = JSON.parse('{"_id":"t4","__proto__":{"polluted":true}}') as Record<string, unknown>;
    const back = roundTrip(Transaction, record);
    expect(Object.getPrototypeOf(back)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(back, '__proto__')?.value).toEqual({ polluted: true });
  });

  it('throws an EncodingError with the path for an unparseable date', () => {
    expect(() => toAvroValue(User, { _id: 'u', dates: { lastWorkAt: 'yesterday' } })).toThrow(
      expect.objectContaining({
        name: 'EncodingError',
        path: 'dates.lastWorkAt',
        reason: 'invalid-date',
      }) as Error,
    );
    expect(() => toAvroValue(User, { _id: 'u', stats: 'x' })).toThrow(EncodingError);
  });
});
