/**
 * Fills any model of the catalogue (src/foundation/models/catalogue.ts) with plausible values, field by field, so a
 * simulator record carries every field the spec defines (and the catalogue stays the single source of truth:
 * a field added there shows up in the simulator's records without touching this code). Field-specific values
 * (ids, times, names) are set afterwards by the world as overrides.
 */
import type { FieldType, ModelDef } from '../../src/foundation/models/field.js';
import { isoString } from './internal/iso-string.js';
import type { Rng } from './internal/prng.js';
import { EQUIPMENT_SLOTS, RANKING_TIERS, TOUR_NAMES, WORDS } from './vocab.js';

export interface FillContext {
  rng: Rng;
  /** Date-time values are drawn in [fromMs, toMs]. */
  fromMs: number;
  toMs: number;
  /** Probability that an optional leaf field is left out (real records often lack some). */
  absentRate: number;
  /** Country ids, for `country` fields of sub-models (rankings). */
  countryIds: readonly string[];
}

const round2 = (x: number): number => Math.round(x * 100) / 100;

function leafString(name: string, ctx: FillContext): string {
  const { rng } = ctx;
  switch (name) {
    case 'tier':
      return rng.pick(RANKING_TIERS);
    case 'country':
      return rng.pick(ctx.countryIds);
    case 'locale':
      return rng.pick(['en-US', 'fr-FR', 'de-DE', 'pl-PL', 'es-ES']);
    case 'font':
    case 'appFont':
      return rng.pick(['inter', 'roboto', 'lato', 'mono']);
    case 'colorScheme':
      return rng.pick(['default', 'dark', 'ocean', 'forest', 'sunset']);
    case 'appPattern':
      return rng.pick(['none', 'dots', 'grid', 'waves']);
    case 'autoEquipMode':
      return rng.pick(['off', 'best', 'cheapest']);
    default:
      return `${rng.pick(WORDS)}-${rng.int(10_000)}`;
  }
}

function fillField(name: string, type: FieldType, ctx: FillContext): unknown {
  const { rng } = ctx;
  switch (type.kind) {
    case 'string':
      return leafString(name, ctx);
    case 'datetime':
      return isoString(Math.floor(rng.float(ctx.fromMs, ctx.toMs)));
    case 'integer':
      return name === 'level' ? rng.between(1, 40) : rng.int(name.endsWith('Count') ? 500 : 100_000);
    case 'number':
      return round2(rng.float(0, name.endsWith('Percent') ? 100 : 10_000));
    case 'boolean':
      return rng.chance(0.5);
    case 'json': {
      const out: Record<string, unknown> = {};
      const n = rng.int(4);
      for (let i = 0; i < n; i++) out[rng.pick(WORDS)] = rng.chance(0.5) ? rng.int(100) : rng.pick(WORDS);
      return out;
    }
    case 'map': {
      // Keys as the real service uses them: a slot per equipped skin, a tour name per finished tour.
      const out: Record<string, unknown> = {};
      const keys = name === 'equippedSkinKeys' ? EQUIPMENT_SLOTS : TOUR_NAMES;
      const n = rng.int(4);
      for (let i = 0; i < n; i++) {
        const key = rng.pick(keys);
        out[key] =
          name === 'equippedSkinKeys' ? `${key}-skin-${rng.pick(WORDS)}` : fillField(name, type.of, ctx);
      }
      return out;
    }
    case 'array': {
      const n = rng.int(4);
      return Array.from({ length: n }, () => fillField(name, type.of, ctx));
    }
    case 'model':
      return fillModel(type.model, ctx);
  }
}

/**
 * A value for every field of `model` (leaves sometimes absent at `absentRate`; sub-models always present).
 * `_id`/`__v` are not generated: top-level ids come from the world, and sub-documents carry none.
 */
export function fillModel(model: ModelDef, ctx: FillContext): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, type] of Object.entries(model.fields)) {
    const leaf = type.kind !== 'model';
    if (leaf && ctx.absentRate > 0 && ctx.rng.chance(ctx.absentRate)) continue;
    out[name] = fillField(name, type, ctx);
  }
  return out;
}
