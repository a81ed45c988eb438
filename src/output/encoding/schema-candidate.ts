/**
 * A registered Avro schema with one optional field added at a path (`sellerMuId`, `item.foo`, `candidates[].foo`):
 * the candidate `gamedata schemas drift` tests with the registry's compatibility endpoint before anyone edits the
 * catalogue. The field is `["null", <type>]` with default null, what the generator writes for every optional field.
 */
import { FieldExistsError, ValidationError } from '../../foundation/errors/index.js';
import type { AvroField, AvroRecordSchema, AvroSchema } from './avro-schema.js';

/** The Avro type of the catalogue kinds a new field can take (JSON objects and arrays as JSON strings). */
export type CandidateFieldKind = 'string' | 'integer' | 'number' | 'boolean' | 'json' | 'array';

const AVRO_OF: Record<CandidateFieldKind, AvroSchema> = {
  string: 'string',
  integer: 'long',
  number: 'double',
  boolean: 'boolean',
  json: 'string',
  array: { type: 'array', items: 'string' },
};

function recordIn(type: AvroSchema, wantArray: boolean): AvroRecordSchema | undefined {
  const branches = Array.isArray(type) ? type : [type];
  for (const b of branches) {
    if (typeof b !== 'object' || Array.isArray(b)) continue;
    if (!wantArray && b.type === 'record') return b;
    if (wantArray && b.type === 'array') return recordIn((b as { items: AvroSchema }).items, false);
  }
  return undefined;
}

/**
 * A deep copy of `schema` with `name` added as an optional field of the record at `parentPath`.
 * @throws ValidationError when the path does not lead to a record of the schema, or the field exists already.
 */
export function withOptionalField(
  schema: AvroRecordSchema,
  parentPath: string,
  name: string,
  kind: CandidateFieldKind,
): AvroRecordSchema {
  const copy = structuredClone(schema);
  let record: AvroRecordSchema | undefined = copy;
  for (const raw of parentPath === '' ? [] : parentPath.split('.')) {
    const isArray = raw.endsWith('[]');
    const part = isArray ? raw.slice(0, -2) : raw;
    const field: AvroField | undefined = record.fields.find((f) => f.name === part);
    record = field === undefined ? undefined : recordIn(field.type, isArray);
    if (record === undefined)
      throw new ValidationError(`no record at ${parentPath} of ${schema.name}`, parentPath);
  }
  if (record.fields.some((f) => f.name === name))
    throw new FieldExistsError(
      `${schema.name} already has ${name} at ${parentPath || '(record)'}`,
      parentPath,
    );
  // Before `_extra`, which the generator keeps last.
  const at = record.fields.findIndex((f) => f.name === '_extra');
  const added: AvroField = { name, type: ['null', AVRO_OF[kind]], default: null };
  record.fields.splice(at < 0 ? record.fields.length : at, 0, added);
  return copy;
}
