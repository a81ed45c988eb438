/** Parties: name and ethics from the party's own stream; members from the population, one more per change. */
import { DAY, STREAM, round2 } from '../generation/draws.js';
import type { WorldData } from '../generation/generate-world.js';
import { isoString } from '../internal/iso-string.js';
import { createRng, hash32 } from '../internal/prng.js';
import { WORDS } from '../vocab.js';
import type { ApiRecord, RecordBuilder } from './record-variant.js';

export function createPartyBuilder(data: WorldData): RecordBuilder {
  const { seed, startMs, population, versions } = data;
  const { parties, partyMembers, partyCountry, usersOfCountry, countryIds, userId } = population;
  const r = createRng(0);
  return (row): ApiRecord => {
    const ident = parties.ident(row);
    const version = versions.parties.get(ident);
    r.reseed(hash32(seed, STREAM.partyBody, ident));
    const members = partyMembers[ident] ?? [];
    const extra = version?.v ?? 0;
    const memberIds = members.map(userId);
    // Each change adds a member from the country (if any is left), so versions differ in content too.
    for (let k = 0; k < extra; k++) {
      const pool = usersOfCountry[partyCountry[ident] as number] ?? [];
      const u = pool[(hash32(seed, ident, k) % Math.max(1, pool.length)) | 0];
      if (u !== undefined && !members.includes(u)) memberIds.push(userId(u));
    }
    const leader = members[0];
    const createdMs = parties.time(row);
    return {
      _id: parties.oid(row),
      name: `${r.pick(['United', 'Free', 'People', 'National', 'Green', 'Iron'])} ${r.pick(WORDS)} party ${ident}`,
      description: `${r.pick(WORDS)} ${r.pick(WORDS)} ${r.pick(WORDS)}`,
      country: countryIds[partyCountry[ident] as number],
      region: `region-${r.int(40)}`,
      ...(leader === undefined ? {} : { leader: userId(leader) }),
      avatarUrl: `https://cdn.example.invalid/parties/${parties.oid(row)}.png`,
      ...(members[1] === undefined ? {} : { treasurer: userId(members[1]) }),
      ...(members.length > 2 && r.chance(0.5) ? { primaryWinner: userId(members[2] as number) } : {}),
      createdAt: isoString(createdMs),
      updatedAt: isoString(version?.at ?? Math.min(startMs - 1, createdMs + r.int(10 * DAY))),
      councilMembers: members.slice(0, 5).map(userId),
      members: memberIds,
      ethics: {
        unethical: r.chance(0.1),
        militarism: round2(r.float(-2, 2)),
        isolationism: round2(r.float(-2, 2)),
        imperialism: round2(r.float(-2, 2)),
        industrialism: round2(r.float(-2, 2)),
      },
      __v: extra,
    };
  };
}
