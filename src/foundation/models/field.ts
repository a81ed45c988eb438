/**
 * The field vocabulary of the model catalogue. One declarative description of every model of the spec (§2) is
 * the single source of truth: TypeScript types are inferred from it, responses are checked against it, and the
 * Avro schemas in `schemas/*.avsc` are generated from it (so types and schemas cannot drift apart).
 */

export type FieldType =
  | { readonly kind: 'string' }
  | { readonly kind: 'integer' }
  | { readonly kind: 'number' }
  | { readonly kind: 'boolean' }
  /** A date-time string on the wire (ISO-8601); `timestamp-millis` in Avro. */
  | { readonly kind: 'datetime' }
  /** A free-form JSON object on the wire; a JSON string in Avro. */
  | { readonly kind: 'json' }
  /**
   * A JSON object whose values all have one type (`dict[str, T]` in the original Python client); an Avro `map`.
   * `keepJsonString`: the field was a `t.json` JSON string in earlier schema versions; the Avro record keeps that
   * string under the field's name (still written) and carries the typed map beside it in `<name>Map`, so the
   * change stays BACKWARD_TRANSITIVE (docs/consuming.md, "Typed maps").
   */
  | { readonly kind: 'map'; readonly of: FieldType; readonly keepJsonString: boolean }
  | { readonly kind: 'array'; readonly of: FieldType }
  | { readonly kind: 'model'; readonly model: ModelDef };

export type Fields = Readonly<Record<string, FieldType>>;

export interface ModelDef<F extends Fields = Fields> {
  /** The spec's model name, e.g. `Transaction`; also the Avro record name. */
  readonly name: string;
  readonly fields: F;
  /**
   * Whether the model carries `_id` (string) and `__v` (integer). True for every model but `ElectionCandidate`.
   * `_id` is required only on {@link ModelDef.entity} models (top-level records); on sub-models it is optional.
   */
  readonly ids: boolean;
  /** A top-level record with a required `_id` (published to a topic or read by id). */
  readonly entity: boolean;
  readonly doc?: string;
}

export const t = {
  string: { kind: 'string' },
  integer: { kind: 'integer' },
  number: { kind: 'number' },
  boolean: { kind: 'boolean' },
  datetime: { kind: 'datetime' },
  json: { kind: 'json' },
  array: <T extends FieldType>(of: T) => ({ kind: 'array', of }) as const,
  map: <T extends FieldType>(of: T, options: { keepJsonString?: boolean } = {}) =>
    ({ kind: 'map', of, keepJsonString: options.keepJsonString ?? false }) as const,
  model: <M extends ModelDef>(model: M) => ({ kind: 'model', model }) as const,
} as const;

type Flags<I extends boolean, E extends boolean> = { readonly ids: I; readonly entity: E };

function define<const F extends Fields, I extends boolean, E extends boolean>(
  name: string,
  fields: F,
  ids: I,
  entity: E,
  doc: string | undefined,
): ModelDef<F> & Flags<I, E> {
  return { name, fields, ids, entity, ...(doc === undefined ? {} : { doc }) };
}

/** A top-level record: required `_id`, optional `__v`. */
export function defineEntity<const F extends Fields>(name: string, fields: F, doc?: string) {
  return define(name, fields, true, true, doc);
}

/** A sub-model that carries optional `_id`/`__v` (every spec model but `ElectionCandidate`). */
export function defineSubModel<const F extends Fields>(name: string, fields: F, doc?: string) {
  return define(name, fields, true, false, doc);
}

/** A plain value model without `_id`/`__v` (`ElectionCandidate`, and objects the spec gives no ids). */
export function defineValueModel<const F extends Fields>(name: string, fields: F, doc?: string) {
  return define(name, fields, false, false, doc);
}

/** Extends a model with more fields under a new name (e.g. `Article` = `ArticleLite` + `comments`). */
export function extendModel<
  const F extends Fields,
  const G extends Fields,
  I extends boolean,
  E extends boolean,
>(base: ModelDef<F> & Flags<I, E>, name: string, fields: G, doc?: string): ModelDef<F & G> & Flags<I, E> {
  return define(name, { ...base.fields, ...fields }, base.ids, base.entity, doc);
}

// ---- type inference ------------------------------------------------------------------------------------------

export type InferField<T extends FieldType> = T extends { kind: 'string' | 'datetime' }
  ? string
  : T extends { kind: 'integer' | 'number' }
    ? number
    : T extends { kind: 'boolean' }
      ? boolean
      : T extends { kind: 'json' }
        ? Record<string, unknown>
        : T extends { kind: 'array'; of: infer O extends FieldType }
          ? InferField<O>[]
          : T extends { kind: 'map'; of: infer O extends FieldType }
            ? Record<string, InferField<O>>
            : T extends { kind: 'model'; model: infer M extends ModelDef }
              ? InferModel<M>
              : never;

type IdFields<M extends ModelDef> = M extends { ids: true }
  ? M extends { entity: true }
    ? { _id: string; __v?: number | null }
    : { _id?: string | null; __v?: number | null }
  : unknown;

/**
 * The TypeScript type of a model: every spec field optional (absent or null, as real data is), `_id` required on
 * entities, and unknown fields kept (the index signature) rather than dropped.
 */
export type InferModel<M extends ModelDef> = IdFields<M> & {
  -readonly [K in keyof M['fields']]?: InferField<M['fields'][K]> | null;
} & { [unknownField: string]: unknown };

const FIELD_LISTS = new WeakMap<ModelDef, readonly (readonly [string, FieldType])[]>();

/** `Object.entries(model.fields)`, made once per model (the per-record paths walk it for every record). */
export function fieldList(model: ModelDef): readonly (readonly [string, FieldType])[] {
  let list = FIELD_LISTS.get(model);
  if (list === undefined) FIELD_LISTS.set(model, (list = Object.entries(model.fields)));
  return list;
}
