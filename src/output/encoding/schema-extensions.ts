/**
 * The fields a registered schema has beyond the catalogue (issue 35's `evolve` contract, or a version registered by
 * newer code): optional scalar fields (`["null", string|long|double|boolean]`) of a record the catalogue models but
 * does not list. The encoder writes an upstream key of that name as the real field (not into `_extra`) when its
 * value has the field's type, so the mapping always matches the exact schema the record is written with: avsc
 * silently drops keys a schema does not declare, so the mapping must never assume a field the writer schema lacks.
 */
import type { FieldType, ModelDef } from '../../foundation/models/index.js';
import { EXTRA_FIELD, typedMapFieldName } from './avro-schema.js';
import type { AvroField, AvroRecordSchema, AvroSchema } from './avro-schema.js';

/** The scalar kinds an evolved field can take (objects and arrays stay in `_extra`: see docs/schemas.md). */
export type ExtensionKind = 'string' | 'integer' | 'number' | 'boolean';

/** Per catalogue model name (the Avro record's short name), the extra fields and their kinds. */
export type SchemaExtensions = ReadonlyMap<string, ReadonlyMap<string, ExtensionKind>>;

export const NO_EXTENSIONS: SchemaExtensions = new Map();

const KIND_OF_AVRO: Readonly<Record<string, ExtensionKind>> = {
  string: 'string',
  long: 'integer',
  double: 'number',
  boolean: 'boolean',
};

/** The Avro primitive of each extension kind. */
export const AVRO_OF_EXTENSION: Readonly<Record<ExtensionKind, string>> = {
  string: 'string',
  integer: 'long',
  number: 'double',
  boolean: 'boolean',
};

/** Whether `value` (non-null) can be written as a field of `kind`. */
export function fitsExtension(kind: ExtensionKind, value: unknown): boolean {
  switch (kind) {
    case 'string':
      return typeof value === 'string';
    case 'boolean':
      return typeof value === 'boolean';
    case 'integer':
      return Number.isSafeInteger(value);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
  }
}

function scalarKind(type: AvroSchema): ExtensionKind | undefined {
  if (!Array.isArray(type) || type.length !== 2 || type[0] !== 'null') return undefined;
  const branch = type[1];
  return typeof branch === 'string' ? KIND_OF_AVRO[branch] : undefined;
}

function shortName(name: string): string {
  return name.slice(name.lastIndexOf('.') + 1);
}

/** Every record defined inside `type` (sub-records are defined once, at first use). */
function recordsIn(type: AvroSchema, out: AvroRecordSchema[]): void {
  if (typeof type === 'string') return;
  if (Array.isArray(type)) {
    for (const b of type) recordsIn(b, out);
    return;
  }
  if (type.type === 'record') {
    out.push(type);
    for (const f of type.fields) recordsIn(f.type, out);
  } else if (type.type === 'array') recordsIn((type as { items: AvroSchema }).items, out);
  else if (type.type === 'map') recordsIn((type as { values: AvroSchema }).values, out);
}

function modelsIn(type: FieldType, out: Map<string, ModelDef>): void {
  if (type.kind === 'model') collectModels(type.model, out);
  else if (type.kind === 'array' || type.kind === 'map') modelsIn(type.of, out);
}

function collectModels(model: ModelDef, out: Map<string, ModelDef>): void {
  if (out.has(model.name)) return;
  out.set(model.name, model);
  for (const type of Object.values(model.fields)) modelsIn(type, out);
}

function isCatalogued(model: ModelDef, field: AvroField): boolean {
  const name = field.name;
  if (name === EXTRA_FIELD || Object.hasOwn(model.fields, name)) return true;
  if (model.ids && (name === '_id' || name === '__v')) return true;
  if (name.endsWith('Map')) {
    const owner = model.fields[name.slice(0, -3)];
    return owner?.kind === 'map' && owner.keepJsonString && typedMapFieldName(name.slice(0, -3)) === name;
  }
  return false;
}

/**
 * The optional scalar fields of `schema` (a registered version of `model`'s subject) that the catalogue does not
 * list, per record. Records of the schema the catalogue does not model are ignored.
 */
export function schemaExtensions(schema: AvroRecordSchema, model: ModelDef): SchemaExtensions {
  const models = new Map<string, ModelDef>();
  collectModels(model, models);
  const records: AvroRecordSchema[] = [];
  recordsIn(schema, records);
  const out = new Map<string, Map<string, ExtensionKind>>();
  for (const record of records) {
    const m = models.get(shortName(record.name));
    if (m === undefined) continue;
    for (const field of record.fields) {
      if (isCatalogued(m, field)) continue;
      const kind = scalarKind(field.type);
      if (kind === undefined) continue;
      let fields = out.get(m.name);
      if (fields === undefined) out.set(m.name, (fields = new Map<string, ExtensionKind>()));
      fields.set(field.name, kind);
    }
  }
  return out;
}
