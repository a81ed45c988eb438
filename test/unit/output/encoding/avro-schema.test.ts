import { readFile } from 'node:fs/promises';
import avro from 'avsc';
import { describe, expect, it } from 'vitest';
import type { FieldType, ModelDef } from '../../../../src/foundation/models/field.js';
import { RESOURCE_INFO, RESOURCES } from '../../../../src/foundation/models/resources.js';
import {
  AVRO_NAMESPACE,
  formatSchemaFile,
  generateAvroSchema,
  generateResourceSchemas,
  typedMapFieldName,
} from '../../../../src/output/encoding/avro-schema.js';
import type { AvroRecordSchema, AvroSchema } from '../../../../src/output/encoding/avro-schema.js';
import { DEFAULT_SCHEMAS_DIR, schemaFilePath } from '../../../../src/output/encoding/schema-files.js';
import { AVRO_TYPE_OPTIONS } from '../../../../src/output/encoding/avro-types.js';

/** Resolves named references against the records defined earlier in the same schema. */
function makeResolver() {
  const names = new Map<string, AvroRecordSchema>();
  return (s: AvroSchema): AvroSchema => {
    if (typeof s === 'string') return names.get(s) ?? s;
    if (!Array.isArray(s) && s.type === 'record') names.set(`${AVRO_NAMESPACE}.${s.name}`, s);
    return s;
  };
}

/** Asserts `schema` describes `type` exactly (kind by kind), recursing into sub-models. */
function expectType(
  type: FieldType,
  schema: AvroSchema,
  path: string,
  resolve: (s: AvroSchema) => AvroSchema,
): void {
  const s = resolve(schema);
  switch (type.kind) {
    case 'string':
    case 'json':
      expect(s, path).toBe('string');
      return;
    case 'integer':
      expect(s, path).toBe('long');
      return;
    case 'number':
      expect(s, path).toBe('double');
      return;
    case 'boolean':
      expect(s, path).toBe('boolean');
      return;
    case 'datetime':
      expect(s, path).toEqual({ type: 'long', logicalType: 'timestamp-millis' });
      return;
    case 'array': {
      expect(typeof s === 'object' && !Array.isArray(s) && s.type === 'array', path).toBe(true);
      const items = (s as { items: AvroSchema }).items;
      expect(Array.isArray(items) && items[0] === 'null', `${path}[] is nullable`).toBe(true);
      expectType(type.of, (items as AvroSchema[])[1] as AvroSchema, `${path}[]`, resolve);
      return;
    }
    case 'map': {
      if (type.keepJsonString) {
        // the field keeps the JSON string of earlier versions; the typed map is checked as `<name>Map`
        expect(s, path).toBe('string');
        return;
      }
      expectMap(type, s, path, resolve);
      return;
    }
    case 'model':
      expectModel(type.model, s, path, resolve);
      return;
  }
}

function expectMap(
  type: Extract<FieldType, { kind: 'map' }>,
  s: AvroSchema,
  path: string,
  resolve: (s: AvroSchema) => AvroSchema,
): void {
  expect(typeof s === 'object' && !Array.isArray(s) && s.type === 'map', path).toBe(true);
  const values = (s as { values: AvroSchema }).values;
  expect(Array.isArray(values) && values[0] === 'null', `${path}{} is nullable`).toBe(true);
  expectType(type.of, (values as AvroSchema[])[1] as AvroSchema, `${path}{}`, resolve);
}

/** Every catalogue field is in the record and every record field is in the catalogue (plus ids and `_extra`). */
function expectModel(
  model: ModelDef,
  schema: AvroSchema,
  path: string,
  resolve: (s: AvroSchema) => AvroSchema,
): void {
  const s = resolve(schema) as AvroRecordSchema;
  expect(s.type, path).toBe('record');
  expect(s.name, path).toBe(model.name);
  const typedMaps = new Map(
    Object.entries(model.fields).flatMap(([name, type]) =>
      type.kind === 'map' && type.keepJsonString ? [[typedMapFieldName(name), type] as const] : [],
    ),
  );
  const expected = [
    ...(model.ids ? ['_id', '__v'] : []),
    ...Object.keys(model.fields).flatMap((name) =>
      typedMaps.has(typedMapFieldName(name)) ? [name, typedMapFieldName(name)] : [name],
    ),
    '_extra',
  ];
  expect(
    s.fields.map((f) => f.name),
    `${path} field names`,
  ).toEqual(expected);
  for (const field of s.fields) {
    const p = path === '' ? field.name : `${path}.${field.name}`;
    if (field.name === '_id' && model.entity) {
      expect(field.type, p).toBe('string');
      expect('default' in field, `${p} has no default`).toBe(false);
      continue;
    }
    expect(Array.isArray(field.type) && field.type[0] === 'null', `${p} is nullable`).toBe(true);
    expect(field.default, `${p} defaults to null`).toBeNull();
    const inner = (field.type as AvroSchema[])[1] as AvroSchema;
    if (field.name === '_id' || field.name === '_extra') expect(inner, p).toBe('string');
    else if (field.name === '__v') expect(inner, p).toBe('long');
    else if (typedMaps.has(field.name)) expectMap(typedMaps.get(field.name)!, inner, p, resolve);
    else expectType(model.fields[field.name] as FieldType, inner, p, resolve);
  }
}

describe('Avro schema generation', () => {
  it.each(RESOURCES)('the committed schemas/%s.avsc is exactly the generator output', async (resource) => {
    const committed = await readFile(schemaFilePath(DEFAULT_SCHEMAS_DIR, resource), 'utf8');
    expect(committed).toBe(formatSchemaFile(generateAvroSchema(RESOURCE_INFO[resource].model)));
  });

  it.each(RESOURCES)(
    '%s: every catalogue field is in the schema and vice versa, with the right type',
    (resource) => {
      const schema = generateResourceSchemas()[resource];
      expect(schema.namespace).toBe(AVRO_NAMESPACE);
      expectModel(RESOURCE_INFO[resource].model, schema, '', makeResolver());
    },
  );

  it.each(RESOURCES)('%s: avsc accepts the schema (named sub-records defined once)', (resource) => {
    const type = avro.Type.forSchema(generateResourceSchemas()[resource] as avro.Schema, {
      ...AVRO_TYPE_OPTIONS,
    });
    expect(type.name).toBe(`${AVRO_NAMESPACE}.${RESOURCE_INFO[resource].model.name}`);
  });

  it('defines a sub-record used many times once, then references it by full name', () => {
    const text = JSON.stringify(generateResourceSchemas().users);
    expect(text.match(/"name":"RankingDetail"/g)).toHaveLength(1);
    expect(text.match(/"gamedata\.v1\.RankingDetail"/g)).toHaveLength(11);
    expect(text.match(/"name":"SkillDetail"/g)).toHaveLength(1);
  });
});
