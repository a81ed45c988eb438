import { describe, expect, it } from 'vitest';
import { diffSchemas } from '../../../../src/output/encoding/schema-diff.js';
import { generateAvroSchema, generateResourceSchemas } from '../../../../src/output/encoding/avro-schema.js';
import type { AvroRecordSchema } from '../../../../src/output/encoding/avro-schema.js';
import { defineEntity, t } from '../../../../src/foundation/models/field.js';
import { Transaction } from '../../../../src/foundation/models/catalogue.js';

const base = generateAvroSchema(Transaction);
const clone = (s: AvroRecordSchema): AvroRecordSchema => JSON.parse(JSON.stringify(s)) as AvroRecordSchema;

describe('diffSchemas', () => {
  it('finds nothing between a schema and itself, for every resource', () => {
    for (const schema of Object.values(generateResourceSchemas()))
      expect(diffSchemas(schema, clone(schema))).toEqual([]);
  });

  it('accepts a new nullable field with a default (generated from a catalogue change)', () => {
    const v1 = generateAvroSchema(defineEntity('Thing', { a: t.string }));
    const v2 = generateAvroSchema(
      defineEntity('Thing', { a: t.string, b: t.datetime, c: t.model(Transaction) }),
    );
    expect(diffSchemas(v1, v2)).toEqual([]);
  });

  it('names a removed field', () => {
    const next = clone(base);
    next.fields = next.fields.filter((f) => f.name !== 'sellerId');
    expect(diffSchemas(base, next)).toEqual([
      { path: 'sellerId', kind: 'removed', message: 'field "sellerId" was removed' },
    ]);
  });

  it('names a retyped field, also deep inside a sub-record', () => {
    const v1 = generateAvroSchema(defineEntity('Thing', { n: t.integer, item: t.model(Transaction) }));
    const v2 = generateAvroSchema(defineEntity('Thing', { n: t.string, item: t.model(Transaction) }));
    expect(diffSchemas(v1, v2)).toEqual([
      { path: 'n', kind: 'retyped', message: 'field "n" changed type from null | long to null | string' },
    ]);
    const deep = clone(base);
    const item = deep.fields.find((f) => f.name === 'item');
    const record = (item?.type as unknown[])[1] as AvroRecordSchema;
    const skills = (record.fields.find((f) => f.name === 'skills')?.type as unknown[])[1] as AvroRecordSchema;
    const attack = skills.fields.find((f) => f.name === 'attack');
    if (attack === undefined) throw new Error('fixture');
    attack.type = ['null', 'string'];
    expect(diffSchemas(base, deep).map((c) => [c.path, c.kind])).toEqual([['item.skills.attack', 'retyped']]);
  });

  it('names a field made required (no longer nullable) and a new field without a default', () => {
    const next = clone(base);
    const money = next.fields.find((f) => f.name === 'money');
    if (money === undefined) throw new Error('fixture');
    money.type = 'double';
    delete money.default;
    next.fields.push({ name: 'fresh', type: 'string' });
    expect(diffSchemas(base, next).map((c) => [c.path, c.kind])).toEqual([
      ['money', 'retyped'],
      ['fresh', 'added-without-default'],
    ]);
  });

  it('treats a date-time turned into a plain long as a retype', () => {
    const next = clone(base);
    const createdAt = next.fields.find((f) => f.name === 'createdAt');
    if (createdAt === undefined) throw new Error('fixture');
    createdAt.type = ['null', 'long'];
    expect(diffSchemas(base, next)[0]?.message).toBe(
      'field "createdAt" changed type from null | timestamp-millis to null | long',
    );
  });
});
