/**
 * Time units, seeded stream ids and the small drawing helpers every part of world generation shares. Each
 * resource draws from its own seeded stream (`STREAM`), so generating one never shifts another's values.
 */
import type { Rng } from '../internal/prng.js';

export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;
/** The transaction feed's unfiltered window (the last 72 h). */
export const WINDOW_MS = 72 * HOUR;

/** Stream ids, so each resource draws from its own seeded stream. */
export const STREAM = {
  countries: 11,
  mus: 12,
  users: 13,
  parties: 14,
  articles: 15,
  elections: 16,
  donations: 17,
  transactions: 18,
  live: 19,
  changes: 20,
  equipment: 21,
  userBody: 22,
  partyBody: 23,
  articleBody: 24,
  electionBody: 25,
  txBody: 26,
} as const;

export const round2 = (x: number): number => Math.round(x * 100) / 100;

/** Picks an index from weights (sum precomputed). */
export function weighted(rng: Rng, weights: readonly number[], total: number): number {
  let r = rng.next() * total;
  for (let i = 0; i < weights.length; i++) {
    r -= weights[i] as number;
    if (r < 0) return i;
  }
  return weights.length - 1;
}

/** Sorted random times in [from, to), whole ms; `tieRate` of them repeat the previous millisecond. */
export function sortedTimes(rng: Rng, n: number, from: number, to: number, tieRate: number): Float64Array {
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) out[i] = Math.floor(rng.float(from, to));
  out.sort();
  for (let i = 1; i < n; i++) if (rng.chance(tieRate)) out[i] = out[i - 1] as number;
  return out;
}

/** Whole seconds of ms times (the seconds an ObjectId carries). */
export function secondsOf(times: Float64Array): Uint32Array {
  const out = new Uint32Array(times.length);
  for (let i = 0; i < times.length; i++) out[i] = Math.floor((times[i] as number) / 1000);
  return out;
}
