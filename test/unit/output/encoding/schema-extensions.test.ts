import avro from 'avsc';
import { describe, expect, it } from 'vitest';
import {
  AVRO_TYPE_OPTIONS,
  fromAvroValue,
  generateAvroSchema,
  toAvroValue,
  withOptionalField,
} from '../../../../src/output/encoding/index.js';
import { schemaExtensions } from '../../../../src/output/encoding/schema-extensions.js';
import { Donation, Transaction } from '../../../../src/foundation/models/catalogue.js';
import { createWorld } from '../../../../tools/simulator/index.js';
import { evolvableKind } from '../../../../src/pipeline/publish/index.js';

describe('evolved fields (the evolve contract)', () => {
  const v1 = generateAvroSchema(Donation);
  const v2 = withOptionalField(v1, '', 'referrerId', 'string');

  it('finds the scalar fields a registered schema has beyond the catalogue, per record; none for the catalogue schema', () => {
    expect(schemaExtensions(v1, Donation).size).toBe(0);
    expect([...(schemaExtensions(v2, Donation).get('Donation') ?? [])]).toEqual([['referrerId', 'string']]);
    const t = withOptionalField(generateAvroSchema(Transaction), 'item', 'wear', 'number');
    expect([...(schemaExtensions(t, Transaction).get('Equipment') ?? [])]).toEqual([['wear', 'number']]);
  });

  it('writes the key as the field (not _extra) when it fits, keeps it in _extra (type change) when not; reads back as sent', () => {
    const [record] = createWorld({ scale: 'small', seed: 1 }).truth('donations');
    const ext = schemaExtensions(v2, Donation);
    const type = avro.Type.forSchema(v2 as avro.Schema, { ...AVRO_TYPE_OPTIONS, registry: {} });
    const wrong: string[] = [];
    const sink = { unknownField: () => undefined, wrongType: (p: string) => wrong.push(p) };
    const fits = toAvroValue(Donation, { ...record, referrerId: 'r1' }, { extensions: ext, sink });
    expect(fits['referrerId']).toBe('r1');
    expect(fits['_extra']).toBeNull();
    const back = fromAvroValue(Donation, type.fromBuffer(type.toBuffer(fits)) as Record<string, unknown>);
    expect(back['referrerId']).toBe('r1');
    const absent = toAvroValue(Donation, record, { extensions: ext });
    expect(absent['referrerId']).toBeNull();
    expect(
      'referrerId' in
        fromAvroValue(Donation, type.fromBuffer(type.toBuffer(absent)) as Record<string, unknown>),
    ).toBe(false);
    const other = toAvroValue(Donation, { ...record, referrerId: 7 }, { extensions: ext, sink });
    expect(other['referrerId']).toBeNull();
    expect(JSON.parse(other['_extra'] as string)).toEqual({ referrerId: 7 });
    expect(wrong).toEqual(['referrerId']);
  });

  it('evolves one consistent scalar type only', () => {
    expect(evolvableKind({ string: 3, null: 1 })).toEqual({ kind: 'string' });
    expect(evolvableKind({ integer: 3, number: 1 })).toEqual({ kind: 'number' });
    expect(evolvableKind({ integer: 3 })).toEqual({ kind: 'integer' });
    expect(evolvableKind({ string: 3, integer: 1 })).toHaveProperty('refused');
    expect(evolvableKind({ object: 3 })).toHaveProperty('refused');
    expect(evolvableKind({ null: 3 })).toEqual({ refused: 'only null values seen' });
  });
});
