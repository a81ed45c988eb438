/** Countries: a name from the vocabulary and a short code. */
import type { WorldData } from '../generation/generate-world.js';
import { isoString } from '../internal/iso-string.js';
import { countryName } from '../vocab.js';
import type { ApiRecord, RecordBuilder } from './record-variant.js';

export function createCountryBuilder(data: WorldData): RecordBuilder {
  const { countries } = data.population;
  return (row): ApiRecord => {
    const ident = countries.ident(row);
    const name = countryName(ident);
    const createdAt = isoString(countries.time(row));
    return {
      _id: countries.oid(row),
      name,
      code:
        name
          .replace(/[^A-Za-z]/g, '')
          .slice(0, 2)
          .toLowerCase() + String(ident),
      createdAt,
      updatedAt: createdAt,
      __v: 0,
    };
  };
}
