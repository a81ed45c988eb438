/**
 * fast-check arbitraries of records that follow a catalogue model: any subset of fields present, absent or null,
 * values of the right kind, nested sub-models and arrays, plus unknown fields at the root and inside sub-models
 * (what `_extra` must keep).
 */
import fc from 'fast-check';
import type { Arbitrary } from 'fast-check';
import type { FieldType, ModelDef } from '../../../../src/foundation/models/field.js';

const MIN_MS = Date.UTC(2015, 0, 1);
const MAX_MS = Date.UTC(2030, 0, 1);

const date = fc.integer({ min: MIN_MS, max: MAX_MS }).map((ms) => new Date(ms).toISOString());
const jsonObject = fc.dictionary(
  fc.string({ maxLength: 8 }),
  fc.oneof(
    fc.integer(),
    fc.string({ maxLength: 8 }),
    fc.boolean(),
    fc.constant(null),
    fc.array(fc.integer(), { maxLength: 3 }),
  ),
  { maxKeys: 4 },
);
const unknownValue = fc.oneof(fc.string({ maxLength: 10 }), fc.integer(), fc.constant(null), jsonObject);
const id = fc.stringMatching(/^[0-9a-f]{24}$/);

function fieldArb(type: FieldType, depth: number): Arbitrary<unknown> {
  switch (type.kind) {
    case 'string':
      return fc.string({ maxLength: 20 });
    case 'integer':
      return fc.maxSafeInteger();
    case 'number':
      return fc.double({ noNaN: true, noDefaultInfinity: true });
    case 'boolean':
      return fc.boolean();
    case 'datetime':
      return date;
    case 'json':
      return jsonObject;
    case 'map':
      return fc.dictionary(
        fc.string({ maxLength: 8 }),
        fc.option(fieldArb(type.of, depth + 1), { nil: null, freq: 8 }),
        { maxKeys: 3 },
      );
    case 'array':
      return fc.array(fc.option(fieldArb(type.of, depth + 1), { nil: null, freq: 8 }), {
        maxLength: depth > 2 ? 1 : 3,
      });
    case 'model':
      return modelArb(type.model, depth + 1);
  }
}

/** A record of `model`; `unknownKeys` adds fields the catalogue does not know (at this level). */
export function modelArb(model: ModelDef, depth = 0, unknownKeys = true): Arbitrary<Record<string, unknown>> {
  const shape: Record<string, Arbitrary<unknown>> = {};
  for (const [name, type] of Object.entries(model.fields)) {
    shape[name] = fc.oneof(
      { arbitrary: fieldArb(type, depth), weight: 6 },
      { arbitrary: fc.constant(null), weight: 1 },
    );
  }
  if (model.ids) {
    shape['_id'] = id;
    shape['__v'] = fc.option(fc.nat({ max: 1000 }), { nil: null });
  }
  const required = model.entity ? ['_id'] : [];
  const known = fc.record(shape, { requiredKeys: required });
  const extra = unknownKeys
    ? fc.dictionary(fc.constantFrom('sellerCountryId', 'buyerMuId', 'newThing', 'x_y'), unknownValue, {
        maxKeys: 2,
      })
    : fc.constant({});
  return fc.tuple(known, extra).map(([k, e]) => ({ ...e, ...k }));
}
