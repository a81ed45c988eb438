import { STREAM } from '../generation/draws.js';
import { hash32 } from '../internal/prng.js';

/**
 * A 24-hex id for something the world does not keep rows of (items, companies, orgs, candidate articles),
 * derived from `(kind, a, b)` so every build of the same record gives the same id.
 */
export function itemIdOf(seed: number, kind: number, a: number, b: number): string {
  return (
    hash32(seed, STREAM.equipment, kind, a, b).toString(16).padStart(8, '0') +
    hash32(seed, STREAM.equipment, kind, b, a).toString(16).padStart(8, '0') +
    hash32(seed, STREAM.equipment, a, kind, b).toString(16).padStart(8, '0')
  );
}
