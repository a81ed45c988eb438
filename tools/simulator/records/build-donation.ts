/** Donations: immutable; the amount is a hash of the identity. */
import { STREAM, round2 } from '../generation/draws.js';
import type { WorldData } from '../generation/generate-world.js';
import { isoString } from '../internal/iso-string.js';
import { hash32 } from '../internal/prng.js';
import type { ApiRecord, RecordBuilder } from './record-variant.js';

export function createDonationBuilder(data: WorldData): RecordBuilder {
  const { seed, population } = data;
  const { table: donations, donor, kind: donationKind, target: donationTarget } = data.donations;
  const { muIds, countryIds, partyIds, userId } = population;
  return (row): ApiRecord => {
    const ident = donations.ident(row);
    const kind = donationKind.get(ident);
    const target = donationTarget.get(ident);
    const createdAt = isoString(donations.time(row));
    return {
      _id: donations.oid(row),
      userId: userId(donor.get(ident)),
      ...(kind === 0 ? { muId: muIds[target] } : {}),
      ...(kind === 1 ? { countryId: countryIds[target] } : {}),
      ...(kind === 2 ? { partyId: partyIds[target] } : {}),
      createdAt,
      updatedAt: createdAt,
      amount: round2(10 + (hash32(seed, STREAM.donations, ident) % 500_000) / 100),
      __v: 0,
    };
  };
}
