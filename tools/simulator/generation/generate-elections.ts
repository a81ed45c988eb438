/** Elections: one per country first, then spread over the history; indexed by country. */
import { createRng, hash32 } from '../internal/prng.js';
import { createOrderedTable, type OrderedTable } from '../ordered-table.js';
import { ELECTION_TYPES } from '../vocab.js';
import { DAY, HOUR, STREAM, secondsOf } from './draws.js';
import type { ScaleSpec } from './scales.js';

/** Election attributes by identity. */
export interface ElectionRows {
  readonly table: OrderedTable;
  /** Country index. */
  readonly country: readonly number[];
  /** Index into ELECTION_TYPES. */
  readonly type: readonly number[];
}

export function generateElections(seed: number, spec: ScaleSpec, startMs: number): ElectionRows {
  const historyStart = startMs - spec.historyDays * DAY;
  const rng = createRng(hash32(seed, STREAM.elections));
  const country: number[] = [];
  const type: number[] = [];
  const times = new Float64Array(spec.elections);
  for (let i = 0; i < spec.elections; i++) {
    country.push(i < spec.countries ? i : rng.int(spec.countries));
    type.push(rng.int(ELECTION_TYPES.length));
    times[i] = Math.floor(rng.float(historyStart, startMs - HOUR));
  }
  const table = createOrderedTable('elections', seed, times, secondsOf(times));
  for (let row = 0; row < table.length; row++)
    table.addToIndex('country', country[table.ident(row)] as number, row);
  return { table, country, type };
}
