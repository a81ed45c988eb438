/**
 * What catalogue change would absorb a drifted path (issue 35, `gamedata schemas drift`): a `new_field` seen with one
 * JSON type becomes an optional field of that type at its level (`sellerMuId: t.string` at `transactions`); a
 * `type_changed` path has no compatible absorption (retyping a field breaks BACKWARD_TRANSITIVE consumers).
 */
import type { DriftRecord, JsonType } from './drift-tracker.js';
import { dominantType } from './drift-tracker.js';

/** The catalogue field kinds a drifted value maps to. */
export type AbsorbedKind = 'string' | 'integer' | 'number' | 'boolean' | 'json' | 'array';

export interface DriftAbsorption {
  /** The field to add, its parent's path (`''` = the resource's record) and its catalogue kind. */
  field: string;
  parentPath: string;
  kind: AbsorbedKind;
  /** `sellerMuId: t.string` optional at `transactions` (or `item` of transactions). */
  text: string;
  /** More than one non-null JSON type was seen (the proposal follows the most frequent): check upstream first. */
  mixedTypes: boolean;
}

const KIND_OF: Record<Exclude<JsonType, 'null'>, AbsorbedKind> = {
  string: 'string',
  integer: 'integer',
  number: 'number',
  boolean: 'boolean',
  object: 'json',
  array: 'array',
};

const CATALOGUE_TEXT: Record<AbsorbedKind, string> = {
  string: 't.string',
  integer: 't.integer',
  number: 't.number',
  boolean: 't.boolean',
  json: 't.json',
  array: 't.array(t.json)',
};

/**
 * The change that would absorb `record` into `resource`'s catalogue model, or `undefined` when none would (a type
 * change, or a field only ever seen as null).
 */
export function proposeAbsorption(resource: string, record: DriftRecord): DriftAbsorption | undefined {
  if (record.kind !== 'new_field') return undefined;
  const type = dominantType(record.types);
  if (type === undefined || type === 'null') return undefined;
  const dot = record.path.lastIndexOf('.');
  const field = record.path.slice(dot + 1);
  const parentPath = dot < 0 ? '' : record.path.slice(0, dot);
  const kind = KIND_OF[type];
  const nonNull = Object.keys(record.types).filter((t) => t !== 'null');
  return {
    field,
    parentPath,
    kind,
    text: `${field}: ${CATALOGUE_TEXT[kind]} optional at ${parentPath === '' ? resource : `${parentPath} of ${resource}`}`,
    mixedTypes: nonNull.length > 1,
  };
}
