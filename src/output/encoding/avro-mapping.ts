/**
 * The mapping between a record as upstream sends it (parsed JSON) and its Avro value, in both directions.
 * docs/schemas.md states it as a table; {@link canonicalRecord} is the same mapping stated as "what a consumer reads
 * back", so tests and `verify` can compare a decoded record with the original field by field.
 *
 * To Avro (per record, at every depth):
 * - known fields: absent or null -> null; string/boolean as is; integer/number as is (long/double);
 *   date-time string -> `Date` (timestamp-millis); JSON object -> `JSON.stringify(value)`; arrays element-wise;
 *   maps value-wise (a `keepJsonString` map is written twice: the JSON string under its name, the map under
 *   `<name>Map`); sub-models recursively;
 * - unknown fields (keys the catalogue does not list at this level) -> `_extra` = JSON object string, or null.
 * From Avro: the inverse: `Date` -> ISO-8601 UTC string with milliseconds, JSON strings parsed, `_extra`'s keys put
 * back beside the known fields. Values must have passed `checkRecord` first (`encodeRecord` does that).
 */
import { fieldList, parseDateTime } from '../../foundation/models/index.js';
import type { FieldType, ModelDef } from '../../foundation/models/index.js';
import { EncodingError } from '../../foundation/errors/index.js';
import { EXTRA_FIELD, typedMapFieldName } from './avro-schema.js';
import { fitsExtension } from './schema-extensions.js';
import type { SchemaExtensions } from './schema-extensions.js';

type Obj = Record<string, unknown>;

/**
 * Told of every unknown field met while mapping a record (schema drift, docs/schemas.md "Drift"). Called only where
 * an unknown key is found, so a record without one costs nothing more.
 */
export interface UnknownFieldSink {
  /** `parentPath` is where the key was found (`''` for the root, `items[3]` in an array), `value` its value. */
  unknownField(parentPath: string, key: string, value: unknown): void;
  /**
   * A field the writer schema has beyond the catalogue (an evolved field) came with a value of another type: it is
   * kept in `_extra` instead (issue 35). `path` is the field's path. @default ignored
   */
  wrongType?(path: string, value: unknown): void;
}

/** How {@link toAvroValue} treats unknown fields. */
export interface ToAvroOptions {
  /** Told of each unknown field (drift tracking). @default none */
  sink?: UnknownFieldSink | undefined;
  /** Drop unknown fields instead of keeping them in `_extra` (the `discard` contract). @default false */
  discardUnknown?: boolean | undefined;
  /**
   * Fields of the writer schema beyond the catalogue (`schemaExtensions` of the schema the value is written with):
   * an upstream key of that name whose value has the field's type is written as the field, not into `_extra`.
   * @default none
   */
  extensions?: SchemaExtensions | undefined;
}

const KEEP_ALL: ToAvroOptions = {};

function join(path: string, key: string | number): string {
  return typeof key === 'number' ? `${path}[${key}]` : path === '' ? key : `${path}.${key}`;
}

function isKnown(model: ModelDef, key: string): boolean {
  return Object.hasOwn(model.fields, key) || (model.ids && (key === '_id' || key === '__v'));
}

/** Sets a key without going through `__proto__`'s setter (unknown keys come from upstream JSON). */
function put(target: Obj, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

function stringifyJson(value: unknown, path: string): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    throw new EncodingError(`cannot write as JSON: ${(error as Error).message}`, path, { cause: error });
  }
  if (text === undefined) throw new EncodingError('cannot write as JSON: not representable as JSON', path);
  return text;
}

/**
 * The Avro value of `value`, found under `key` of the value at `parent` (the path is joined only for an error or a
 * nested value: this runs for every field of every record).
 */
function fieldToAvro(
  type: FieldType,
  value: unknown,
  parent: string,
  key: string | number,
  ctx: ToAvroOptions,
): unknown {
  if (value === null || value === undefined) return null;
  switch (type.kind) {
    case 'string':
    case 'integer':
    case 'number':
    case 'boolean':
      return value;
    case 'datetime': {
      const ms = typeof value === 'string' ? parseDateTime(value) : undefined;
      if (ms === undefined) {
        throw new EncodingError(
          `expected a date-time string, got ${JSON.stringify(value)}`,
          join(parent, key),
          {
            reason: 'invalid-date',
          },
        );
      }
      return new Date(ms);
    }
    case 'json':
      return stringifyJson(value, join(parent, key));
    case 'array': {
      const path = join(parent, key);
      if (!Array.isArray(value)) throw new EncodingError('expected array', path, { reason: 'wrong-type' });
      const out = new Array<unknown>(value.length);
      for (let i = 0; i < value.length; i++) out[i] = fieldToAvro(type.of, value[i], path, i, ctx);
      return out;
    }
    case 'map':
      return type.keepJsonString
        ? stringifyJson(value, join(parent, key))
        : mapToAvro(type.of, value, join(parent, key), ctx);
    case 'model':
      return recordToAvro(type.model, value, join(parent, key), ctx);
  }
}

function mapToAvro(of: FieldType, value: unknown, path: string, ctx: ToAvroOptions): Obj {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new EncodingError('expected object', path, { reason: 'wrong-type' });
  const out: Obj = {};
  for (const [key, element] of Object.entries(value as Obj))
    put(out, key, fieldToAvro(of, element, path, key, ctx));
  return out;
}

function recordToAvro(model: ModelDef, value: unknown, path: string, ctx: ToAvroOptions): Obj {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new EncodingError(`expected ${model.name} object`, path, { reason: 'wrong-type' });
  }
  const record = value as Obj;
  const out: Obj = {};
  if (model.ids) {
    out['_id'] = record['_id'] ?? null;
    out['__v'] = record['__v'] ?? null;
  }
  for (const [name, type] of fieldList(model)) {
    out[name] = fieldToAvro(type, record[name], path, name, ctx);
    if (type.kind === 'map' && type.keepJsonString) {
      const value = record[name];
      out[typedMapFieldName(name)] =
        value === null || value === undefined ? null : mapToAvro(type.of, value, join(path, name), ctx);
    }
  }
  const evolved = ctx.extensions?.get(model.name);
  if (evolved !== undefined) for (const name of evolved.keys()) out[name] = null;
  let extra: Obj | undefined;
  for (const key in record) {
    if (!Object.hasOwn(record, key) || isKnown(model, key) || record[key] === undefined) continue;
    const kind = evolved?.get(key);
    if (kind !== undefined) {
      const v = record[key];
      if (v === null) continue;
      if (fitsExtension(kind, v)) {
        out[key] = v;
        continue;
      }
      // Another type than the one evolved: kept in `_extra` (nothing lost), counted as a type change.
      ctx.sink?.wrongType?.(join(path, key), v);
      extra ??= {};
      put(extra, key, v);
      continue;
    }
    ctx.sink?.unknownField(path, key, record[key]);
    if (ctx.discardUnknown === true) continue;
    extra ??= {};
    put(extra, key, record[key]);
  }
  out[EXTRA_FIELD] = extra === undefined ? null : stringifyJson(extra, join(path, EXTRA_FIELD));
  return out;
}

/**
 * The Avro value of a record of `model` (the shape `schemas/<resource>.avsc` describes). `options.sink` is told of
 * each unknown field; with `options.discardUnknown` they are dropped instead of kept in `_extra`.
 * @throws EncodingError with the field path when a value cannot be mapped (run `checkRecord` first for every issue).
 */
export function toAvroValue(model: ModelDef, record: unknown, options: ToAvroOptions = KEEP_ALL): Obj {
  return recordToAvro(model, record, '', options);
}

function fieldFromAvro(type: FieldType | undefined, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (type === undefined) return plain(value); // a field of a newer writer schema: kept, untransformed
  switch (type.kind) {
    case 'datetime':
      return value instanceof Date ? value.toISOString() : new Date(value as number).toISOString();
    case 'json':
      return JSON.parse(value as string) as unknown;
    case 'array':
      return (value as unknown[]).map((element) => fieldFromAvro(type.of, element));
    case 'map':
      // a keepJsonString field's own value is the JSON string (recordFromAvro prefers the typed map beside it)
      if (typeof value === 'string') return JSON.parse(value) as unknown;
      return mapFromAvro(type.of, value as Obj);
    case 'model':
      return recordFromAvro(type.model, value as Obj);
    default:
      return value;
  }
}

function mapFromAvro(of: FieldType, value: Obj): Obj {
  const out: Obj = {};
  for (const [key, element] of Object.entries(value)) put(out, key, fieldFromAvro(of, element));
  return out;
}

/** `<name>Map` of a keepJsonString map field -> that field's name (`undefined` for any other key). */
function typedMapOwner(model: ModelDef, key: string): string | undefined {
  if (!key.endsWith('Map')) return undefined;
  const name = key.slice(0, -3);
  const type = model.fields[name];
  return type?.kind === 'map' && type.keepJsonString ? name : undefined;
}

function plain(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map(plain);
  if (typeof value === 'object' && value !== null) {
    const out: Obj = {};
    for (const [k, v] of Object.entries(value)) put(out, k, plain(v));
    return out;
  }
  return value;
}

function recordFromAvro(model: ModelDef, value: Obj): Obj {
  const out: Obj = {};
  // Driven by the decoded value's keys, not the catalogue's, so fields of a newer writer schema are not dropped.
  for (const [key, v] of Object.entries(value)) {
    if (key === EXTRA_FIELD) continue;
    const owner = typedMapOwner(model, key);
    if (owner !== undefined) {
      // the typed map wins over the JSON string; records written before it existed carry null here
      const type = model.fields[owner];
      if (v !== null && v !== undefined && type?.kind === 'map')
        put(out, owner, mapFromAvro(type.of, v as Obj));
      continue;
    }
    if (Object.hasOwn(out, key)) continue; // already set from its typed map
    const type = key === '_id' || key === '__v' ? undefined : model.fields[key];
    // A field of a newer writer schema the catalogue does not know (an evolved field) reads back only with a value,
    // as the upstream key it came from: records written before it, or without it, do not grow a null.
    if (type === undefined && (v === null || v === undefined) && key !== '_id' && key !== '__v') continue;
    put(out, key, fieldFromAvro(type, v));
  }
  const extra = value[EXTRA_FIELD];
  if (typeof extra === 'string') {
    for (const [k, v] of Object.entries(JSON.parse(extra) as Obj)) put(out, k, v);
  }
  return out;
}

/** Inverts {@link toAvroValue}: a decoded Avro value of `model` back to the upstream record shape. */
export function fromAvroValue(model: ModelDef, value: Obj): Obj {
  return recordFromAvro(model, value);
}

function canonicalField(type: FieldType, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  switch (type.kind) {
    case 'datetime': {
      const ms = parseDateTime(value as string);
      return ms === undefined ? value : new Date(ms).toISOString();
    }
    case 'json':
      return JSON.parse(JSON.stringify(value)) as unknown;
    case 'map': {
      const out: Obj = {};
      for (const [key, element] of Object.entries(value as Obj))
        put(out, key, canonicalField(type.of, element));
      return out;
    }
    case 'array':
      return (value as unknown[]).map((element) => canonicalField(type.of, element));
    case 'model':
      return canonicalModel(type.model, value as Obj);
    default:
      return value;
  }
}

function canonicalModel(model: ModelDef, record: Obj): Obj {
  const out: Obj = {};
  if (model.ids) {
    out['_id'] = record['_id'] ?? null;
    out['__v'] = record['__v'] ?? null;
  }
  for (const [name, type] of Object.entries(model.fields)) out[name] = canonicalField(type, record[name]);
  for (const key of Object.keys(record)) {
    if (isKnown(model, key) || record[key] === undefined) continue;
    put(out, key, JSON.parse(JSON.stringify(record[key])) as unknown);
  }
  return out;
}

/**
 * What a consumer reads back for `record` after encode -> decode, stated directly: every catalogue field present
 * (absent -> null), date-times as ISO-8601 UTC with milliseconds, JSON objects and unknown fields as their JSON
 * round-trip, at every depth. `fromAvroValue(m, toAvroValue(m, r))` deep-equals `canonicalRecord(m, r)`.
 */
export function canonicalRecord(model: ModelDef, record: Obj): Obj {
  return canonicalModel(model, record);
}
