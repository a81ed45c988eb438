/** Users: the catalogue filler draws the body; the world sets ids, names, memberships, gear and versions. */
import { User, UserLite } from '../../../src/foundation/models/catalogue.js';
import { fillModel } from '../fill-model.js';
import { DAY, STREAM } from '../generation/draws.js';
import type { WorldData } from '../generation/generate-world.js';
import { isoString } from '../internal/iso-string.js';
import { createRng, hash32 } from '../internal/prng.js';
import { WORDS } from '../vocab.js';
import type { EquipmentBuilder } from './build-equipment.js';
import { itemIdOf } from './item-id.js';
import { pickFields, type ApiRecord, type RecordBuilder } from './record-variant.js';

const userLiteKeys = ['_id', ...Object.keys(UserLite.fields), '__v'];
const userFieldKeys = Object.keys(User.fields);

export function createUserBuilder(data: WorldData, gear: EquipmentBuilder): RecordBuilder {
  const { seed, startMs, population, versions } = data;
  const { users, userCountry, userMu, userParty, countryIds, muIds, partyIds } = population;
  const bodyRng = createRng(0);
  return (row, variant = 'full') => {
    const ident = users.ident(row);
    const createdMs = users.time(row);
    const version = versions.users.get(ident);
    if (variant === 'thin') return { _id: users.oid(row), createdAt: isoString(createdMs) };
    bodyRng.reseed(hash32(seed, STREAM.userBody, ident));
    const body = fillModel(User, {
      rng: bodyRng,
      fromMs: createdMs,
      toMs: Math.max(createdMs, startMs),
      absentRate: 0.04,
      countryIds,
    });
    const r = bodyRng;
    const username = `${r.pick(WORDS)}${r.pick(WORDS)}${ident}`;
    const c = userCountry.get(ident);
    const mu = userMu.get(ident);
    const party = userParty.get(ident);
    const updatedMs = version?.at ?? Math.min(startMs - 1, createdMs + r.int(30 * DAY));
    const worn = gear.worn(ident, createdMs);
    // Fields the world decides; `undefined` leaves the field out. The rest comes from the catalogue filler.
    const set: ApiRecord = {
      username,
      usernameLower: username.toLowerCase(),
      country: countryIds[c],
      avatarUrl: `https://cdn.example.invalid/avatars/${users.oid(row)}.png`,
      mu: mu >= 0 ? muIds[mu] : undefined,
      party: party >= 0 ? partyIds[party] : undefined,
      company: r.chance(0.6) ? itemIdOf(seed, 2, ident, 7) : undefined,
      createdAt: isoString(createdMs),
      updatedAt: isoString(updatedMs),
      isActive: startMs - updatedMs < 14 * DAY || r.chance(0.2),
      militaryRank: r.between(0, 60),
      equipment: Object.fromEntries(Object.entries(worn).map(([slot, item]) => [slot, item['itemId']])),
      orgs: r.chance(0.1) ? [itemIdOf(seed, 3, ident, 1)] : [],
    };
    // One fresh object in catalogue order (no spread, no delete: both make slow dictionary-mode objects).
    const rec: ApiRecord = { _id: users.oid(row) };
    for (const key of userFieldKeys) {
      const value = key in set ? set[key] : body[key];
      if (value !== undefined) rec[key] = value;
    }
    const dates = rec['dates'] as ApiRecord | undefined;
    if (dates !== undefined && version !== undefined) dates['lastConnectionAt'] = isoString(version.at);
    const leveling = rec['leveling'] as ApiRecord | undefined;
    if (leveling !== undefined && version !== undefined && typeof leveling['totalXp'] === 'number')
      leveling['totalXp'] = leveling['totalXp'] + version.v * 37;
    rec['__v'] = (hash32(seed, ident, 99) % 5) + (version?.v ?? 0);
    return variant === 'lite' ? pickFields(rec, userLiteKeys) : rec;
  };
}
