/**
 * Equipment: a user's worn pieces (`inventory.fetchCurrentEquipment`, the user's `equipment` ids) and the piece a
 * transaction trades or a case gives. Item ids are hashes of the owner's identity, stable across builds.
 */
import { EquipmentSkills } from '../../../src/foundation/models/catalogue.js';
import { fillModel } from '../fill-model.js';
import { STREAM, round2 } from '../generation/draws.js';
import { isoString } from '../internal/iso-string.js';
import { createRng, hash32, hashString, type Rng } from '../internal/prng.js';
import { EQUIPMENT_CODES, EQUIPMENT_SLOTS, RARITIES, SLOTS, type Slot } from '../vocab.js';
import { itemIdOf } from './item-id.js';
import type { ApiRecord } from './record-variant.js';

export interface EquipmentBuilder {
  /** An Equipment in catalogue field order; `r` is reseeded from the item (any generator will do). */
  piece(code: string, slot: Slot | undefined, itemId: string, acquiredMs: number, r: Rng): ApiRecord;
  /** The pieces a user wears, keyed by slot (a weapon always, each other slot 80 % of users). */
  worn(ident: number, createdMs: number): Record<string, ApiRecord>;
}

const tierOf = (code: string, r: Rng): number => {
  const last = code.charCodeAt(code.length - 1) - 48;
  return last >= 1 && last <= 9 ? last : 1 + r.int(5);
};
const slotOfCode = new Map<string, string>();
for (const s of EQUIPMENT_SLOTS) for (const code of EQUIPMENT_CODES[s]) slotOfCode.set(code, s);

export function createEquipmentBuilder(
  seed: number,
  startMs: number,
  countryIds: readonly string[],
): EquipmentBuilder {
  /**
   * Built as one fresh object (no spread, no delete: those turn objects into slow dictionaries, and serving
   * serialises millions of these).
   */
  function piece(
    code: string,
    slot: Slot | undefined,
    itemId: string,
    acquiredMs: number,
    r: Rng,
  ): ApiRecord {
    r.reseed(hash32(seed, STREAM.equipment, hashString(itemId), acquiredMs));
    const tier = tierOf(code, r);
    const rec: ApiRecord = {};
    if (slot !== undefined) rec['slot'] = slot;
    rec['itemId'] = itemId;
    rec['itemCode'] = code;
    rec['name'] = `${code[0]?.toUpperCase() ?? ''}${code.slice(1)}`;
    rec['rarity'] = RARITIES[Math.min(RARITIES.length - 1, tier - 1)] ?? 'common';
    rec['type'] = slot ?? slotOfCode.get(code) ?? 'weapon';
    rec['code'] = code;
    rec['lastAcquisitionAt'] = isoString(acquiredMs);
    if (!r.chance(0.03)) rec['stats'] = { tier, durability: r.int(100), power: round2(r.float(0, 50)) };
    rec['skills'] = fillModel(EquipmentSkills, {
      rng: r,
      fromMs: acquiredMs,
      toMs: acquiredMs,
      absentRate: 0.03,
      countryIds,
    });
    rec['state'] = round2(r.float(1, 100));
    rec['maxState'] = 100;
    rec['quantity'] = 1;
    return rec;
  }

  function worn(ident: number, createdMs: number): Record<string, ApiRecord> {
    const out: Record<string, ApiRecord> = {};
    const r = createRng(hash32(seed, STREAM.equipment, ident));
    for (const slot of SLOTS) {
      if (slot !== 'weapon' && !r.chance(0.8)) continue;
      const codes = EQUIPMENT_CODES[slot];
      const code = codes[hash32(seed, ident, slot.length) % codes.length] as string;
      const acquired =
        createdMs + (hash32(seed, ident, slot.charCodeAt(0)) % Math.max(1, startMs - createdMs));
      out[slot] = piece(code, slot, itemIdOf(seed, 1, ident, slot.charCodeAt(1)), acquired, createRng(0));
    }
    return out;
  }

  return { piece, worn };
}
