/** Donations: one target each (a military unit, a country or a party), indexed by target. */
import { createColumn, type Column } from '../internal/growable.js';
import { createRng, hash32, type Rng } from '../internal/prng.js';
import { createOrderedTable, type OrderedTable } from '../ordered-table.js';
import { DAY, STREAM, secondsOf, sortedTimes } from './draws.js';
import type { Population } from './generate-population.js';
import type { ScaleSpec } from './scales.js';

/** Index families of the donations table, by target kind (0 mu, 1 country, 2 party). */
export const DONATION_FAMILIES = ['mu', 'country', 'party'] as const;

/** Donation attributes by identity; `index(row)` adds a row to its target's index. */
export interface DonationRows {
  readonly table: OrderedTable;
  readonly donor: Column<Int32Array>;
  /** 0 = military unit, 1 = country, 2 = party. */
  readonly kind: Column<Uint8Array>;
  readonly target: Column<Int32Array>;
  readonly index: (row: number) => void;
}

/** Draws a donation target `[kind, target]` for a donor: mostly the donor's own unit, country or party. */
export type DrawDonationTarget = (r: Rng, donor: number) => [number, number];

export function createDonationTargetDraw(spec: ScaleSpec, population: Population): DrawDonationTarget {
  const { userMu, userCountry, userParty } = population;
  return (r, donor) => {
    const kind = r.int(3);
    if (kind === 0) {
      const m = userMu.get(donor);
      return [0, m >= 0 ? m : r.int(spec.mus)];
    }
    if (kind === 1) return [1, r.chance(0.7) ? userCountry.get(donor) : r.int(spec.countries)];
    const p = userParty.get(donor);
    return [2, p >= 0 ? p : r.int(spec.parties)];
  };
}

export function generateDonations(
  seed: number,
  spec: ScaleSpec,
  startMs: number,
  population: Population,
  drawTarget: DrawDonationTarget,
): DonationRows {
  const historyStart = startMs - spec.historyDays * DAY;
  const rng = createRng(hash32(seed, STREAM.donations));
  const donor = createColumn(Int32Array, spec.donations);
  const kind = createColumn(Uint8Array, spec.donations);
  const target = createColumn(Int32Array, spec.donations);
  const times = sortedTimes(rng, spec.donations, historyStart, startMs - 1, 0.02);
  for (let i = 0; i < spec.donations; i++) {
    const d = population.pickUser(rng);
    const [k, t] = drawTarget(rng, d);
    donor.push(d);
    kind.push(k);
    target.push(t);
  }
  const table = createOrderedTable('donations', seed, times, secondsOf(times));
  const index = (row: number): void => {
    const ident = table.ident(row);
    table.addToIndex(DONATION_FAMILIES[kind.get(ident)] as string, target.get(ident), row);
  };
  for (let row = 0; row < table.length; row++) index(row);
  return { table, donor, kind, target, index };
}
