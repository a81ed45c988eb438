/**
 * Generates the Avro schemas of the six topics from the model catalogue (`src/foundation/models/catalogue.ts`), so the
 * schemas and the TypeScript types cannot drift apart. `schemas/*.avsc` are this module's output, committed and
 * checked by a unit test (`npm run gamedata -- schemas generate` rewrites them).
 *
 * Rules (docs/schemas.md has the full mapping):
 * - every field of the catalogue is present, nullable (`["null", T]`) with default `null`, except an entity's `_id`
 *   (plain required `string`); `__v` is a nullable `long`;
 * - `t.integer` -> `long` (counters, XP and money-like totals can pass 2^31; the catalogue only admits safe
 *   integers, so `long` round-trips exactly in JavaScript), `t.number` -> `double`, `t.datetime` ->
 *   `long` with `logicalType: timestamp-millis`, `t.json` -> `string` holding JSON, arrays -> `array` of nullable
 *   items (upstream arrays may hold nulls; losing nothing is the rule), `t.map(x)` -> `map` of nullable values;
 *   a map that was once a JSON string (`keepJsonString`) keeps that string field under its name and adds the map
 *   as `<name>Map` (nullable, default null), so the change is BACKWARD_TRANSITIVE;
 * - every record (top-level and nested) ends with `_extra`: a nullable string holding the JSON object of the
 *   fields upstream sent that the schema does not know at that level, so nothing is lost at any depth;
 * - named sub-records are defined once (at first use) and referenced by full name afterwards, as Avro requires.
 */
import type { FieldType, ModelDef, ResourceName } from '../../foundation/models/index.js';
import { RESOURCE_INFO, RESOURCES } from '../../foundation/models/index.js';

/** The Avro namespace of every generated record. Bump the `v1` only for a deliberately incompatible break. */
export const AVRO_NAMESPACE = 'gamedata.v1';

/** The name of the per-record field holding unknown upstream fields as a JSON object string. */
export const EXTRA_FIELD = '_extra';

/** A JSON Avro schema (the subset the generator produces). */
export type AvroSchema =
  string | AvroSchema[] | AvroRecordSchema | AvroArraySchema | AvroMapSchema | AvroLogicalSchema;

export interface AvroField {
  name: string;
  type: AvroSchema;
  default?: null;
  doc?: string;
}

export interface AvroRecordSchema {
  type: 'record';
  name: string;
  namespace?: string;
  doc?: string;
  fields: AvroField[];
}

export interface AvroArraySchema {
  type: 'array';
  items: AvroSchema;
}

export interface AvroMapSchema {
  type: 'map';
  values: AvroSchema;
}

/**
 * The Avro field carrying the typed map of a `t.map(x, { keepJsonString: true })` field (its own name keeps the
 * JSON string of earlier schema versions).
 */
export function typedMapFieldName(name: string): string {
  return `${name}Map`;
}

export interface AvroLogicalSchema {
  type: 'long';
  logicalType: 'timestamp-millis';
}

const EXTRA_DOC =
  'JSON object of the upstream fields this schema does not know at this level (null when none).';

function fieldSchema(type: FieldType, defined: Set<string>): AvroSchema {
  switch (type.kind) {
    case 'string':
      return 'string';
    case 'integer':
      return 'long';
    case 'number':
      return 'double';
    case 'boolean':
      return 'boolean';
    case 'datetime':
      return { type: 'long', logicalType: 'timestamp-millis' };
    case 'json':
      return 'string';
    case 'array':
      return { type: 'array', items: ['null', fieldSchema(type.of, defined)] };
    case 'map':
      return type.keepJsonString
        ? 'string'
        : { type: 'map', values: ['null', fieldSchema(type.of, defined)] };
    case 'model':
      return recordSchema(type.model, defined, false);
  }
}

function fieldDoc(type: FieldType): string | undefined {
  if (type.kind === 'json') return 'Free-form JSON object, as a JSON string.';
  if (type.kind === 'map' && type.keepJsonString)
    return 'The same object as the typed map field beside it, as a JSON string (kept for readers of earlier schema versions).';
  if (type.kind === 'datetime') return 'Upstream date-time, as UTC milliseconds since the epoch.';
  return undefined;
}

function recordSchema(model: ModelDef, defined: Set<string>, topLevel: boolean): AvroSchema {
  // Avro names must be unique in one schema: the first use defines the record, later uses reference it.
  if (defined.has(model.name)) return `${AVRO_NAMESPACE}.${model.name}`;
  defined.add(model.name);
  const fields: AvroField[] = [];
  if (model.ids) {
    fields.push(
      model.entity
        ? { name: '_id', type: 'string' }
        : { name: '_id', type: ['null', 'string'], default: null },
      { name: '__v', type: ['null', 'long'], default: null },
    );
  }
  for (const [name, type] of Object.entries(model.fields)) {
    const doc = fieldDoc(type);
    fields.push({
      name,
      type: ['null', fieldSchema(type, defined)],
      default: null,
      ...(doc === undefined ? {} : { doc }),
    });
    if (type.kind === 'map' && type.keepJsonString) {
      fields.push({
        name: typedMapFieldName(name),
        type: ['null', { type: 'map', values: ['null', fieldSchema(type.of, defined)] }],
        default: null,
        doc: `The ${name} object as a typed map (null in records written before this field existed: read ${name} then).`,
      });
    }
  }
  fields.push({ name: EXTRA_FIELD, type: ['null', 'string'], default: null, doc: EXTRA_DOC });
  return {
    type: 'record',
    name: model.name,
    ...(topLevel ? { namespace: AVRO_NAMESPACE } : {}),
    ...(model.doc === undefined ? {} : { doc: model.doc }),
    fields,
  };
}

/** The Avro schema of one model (and every sub-model it uses), as a top-level record in {@link AVRO_NAMESPACE}. */
export function generateAvroSchema(model: ModelDef): AvroRecordSchema {
  return recordSchema(model, new Set(), true) as AvroRecordSchema;
}

/** The schema of every resource's topic, generated from the model each resource publishes. */
export function generateResourceSchemas(): Record<ResourceName, AvroRecordSchema> {
  return Object.fromEntries(RESOURCES.map((r) => [r, generateAvroSchema(RESOURCE_INFO[r].model)])) as Record<
    ResourceName,
    AvroRecordSchema
  >;
}

/** The exact text of a `.avsc` file: 2-space JSON and a final newline (what the committed files contain). */
export function formatSchemaFile(schema: AvroRecordSchema): string {
  return `${JSON.stringify(schema, null, 2)}\n`;
}
