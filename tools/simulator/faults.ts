/**
 * Record-level faults: a deterministic share of records is served corrupted (chosen by record identity, so every
 * read of a record agrees), plus the stream of per-request fault decisions.
 */
import { hash32, unit } from './internal/prng.js';
import type { SimulatorResource } from './world.js';

export type MalformedKind = 'wrong-type' | 'missing-id' | 'invalid-date' | BadItemKind;

/** An item that is not a record at all (the `badItems` fault, issue 48): `null`, or a string or number in its place. */
export type BadItemKind = 'null-item' | 'not-object';
const KINDS: readonly MalformedKind[] = ['wrong-type', 'missing-id', 'invalid-date'];

const RESOURCE_SALT: Record<SimulatorResource, number> = {
  articles: 1,
  transactions: 2,
  parties: 3,
  users: 4,
  elections: 5,
  donations: 6,
  countries: 7,
};

/** The field each resource gets with a wrong type (a number or array served as a string). */
const WRONG_TYPE_FIELD: Record<SimulatorResource, string> = {
  articles: 'views',
  transactions: 'money',
  parties: 'members',
  users: 'militaryRank',
  elections: 'votesCount',
  donations: 'amount',
  countries: 'name',
};

/** Whether (and how) the record with this identity is served corrupted. Countries never are (reference data). */
export function malformedKind(
  resource: SimulatorResource,
  ident: number,
  rate: number,
  faultSeed: number,
): MalformedKind | undefined {
  if (rate <= 0 || resource === 'countries') return undefined;
  const h = hash32(faultSeed, RESOURCE_SALT[resource], ident, 0x6d61);
  if (unit(h) >= rate) return undefined;
  return KINDS[hash32(h, 3) % KINDS.length];
}

/**
 * Whether (and how) the record with this identity is served as no record at all (the `badItems` fault): chosen by
 * identity like `malformed`, with its own salt, so it does not move the records `malformed` picks.
 */
export function badItemKind(
  resource: SimulatorResource,
  ident: number,
  rate: number,
  faultSeed: number,
): BadItemKind | undefined {
  if (rate <= 0 || resource === 'countries') return undefined;
  const h = hash32(faultSeed, RESOURCE_SALT[resource], ident, 0x6269);
  if (unit(h) >= rate) return undefined;
  return hash32(h, 5) % 2 === 0 ? 'null-item' : 'not-object';
}

/** What a bad item is served as: `null`, or (not an object) the record's id as a bare string. */
export function badItem(record: Record<string, unknown>, kind: BadItemKind): unknown {
  const id = record['_id'];
  return kind === 'null-item' ? null : typeof id === 'string' ? id : '';
}

/**
 * Whether the page whose first row has identity `ident` is served short (the `shortPages` fault): chosen by identity,
 * so every read of the same page agrees.
 */
export function servedShort(
  resource: SimulatorResource,
  ident: number,
  rate: number,
  faultSeed: number,
): boolean {
  return rate > 0 && unit(hash32(faultSeed, RESOURCE_SALT[resource], ident, 0x7370)) < rate;
}

/** A corrupted copy of a record (the original is not changed). */
export function corruptRecord(
  resource: SimulatorResource,
  record: Record<string, unknown>,
  kind: MalformedKind,
): Record<string, unknown> {
  const copy = { ...record };
  switch (kind) {
    case 'missing-id':
      delete copy['_id'];
      break;
    case 'invalid-date':
      copy['createdAt'] = 'not-a-date';
      break;
    case 'wrong-type': {
      const field = WRONG_TYPE_FIELD[resource];
      // Thin listing items lack the field: corrupt createdAt's type instead (a number where a string belongs).
      if (field in copy) copy[field] = resource === 'countries' ? 42 : `${JSON.stringify(copy[field])}!`;
      else copy['createdAt'] = 12345;
      break;
    }
  }
  return copy;
}
