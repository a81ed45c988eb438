/**
 * Who lives in the world and where they belong: countries, military units, users (with their country, unit and
 * party) and parties (with their members). Everything else (articles, donations, transactions) refers to these.
 */
import { createColumn, type Column } from '../internal/growable.js';
import { createRng, hash32, type Rng } from '../internal/prng.js';
import { createOrderedTable, type OrderedTable } from '../ordered-table.js';
import { DAY, HOUR, STREAM, secondsOf, weighted } from './draws.js';
import type { ScaleSpec } from './scales.js';

/** The people and places of a world; columns are indexed by identity (creation counter), `-1` = none. */
export interface Population {
  readonly countries: OrderedTable;
  /** Country ids by index. */
  readonly countryIds: readonly string[];
  readonly countryIndexById: ReadonlyMap<string, number>;
  /** Skewed country populations (a few big countries), and their sum. */
  readonly countryWeights: readonly number[];
  readonly countryWeightTotal: number;
  readonly mus: OrderedTable;
  /** Military unit ids by index. */
  readonly muIds: readonly string[];
  readonly muIndexById: ReadonlyMap<string, number>;
  readonly users: OrderedTable;
  readonly userCountry: Column<Int32Array>;
  readonly userMu: Column<Int32Array>;
  readonly userParty: Column<Int32Array>;
  /** User identities by country index (live sign-ups are appended). */
  readonly usersOfCountry: number[][];
  readonly parties: OrderedTable;
  readonly partyCountry: readonly number[];
  readonly partyMembers: readonly number[][];
  /** Party ids by identity. */
  readonly partyIds: readonly string[];
  /** User id of a user identity (cached). */
  readonly userId: (ident: number) => string;
  /** A user identity, skewed: a small core does most of the trading (like ~15 k active of ~124 k real users). */
  readonly pickUser: (r: Rng) => number;
}

/** Generates countries, military units, users and parties, in that order (each from its own seeded stream). */
export function generatePopulation(seed: number, spec: ScaleSpec, startMs: number): Population {
  const historyStart = startMs - spec.historyDays * DAY;
  const rng = createRng(0);

  // ---- countries and military units -------------------------------------------------------------------------
  rng.reseed(hash32(seed, STREAM.countries));
  const countryTimes = new Float64Array(spec.countries);
  for (let i = 0; i < spec.countries; i++)
    countryTimes[i] = historyStart - 30 * DAY + i * HOUR + rng.int(1000);
  const countries = createOrderedTable('countries', seed, countryTimes, secondsOf(countryTimes));
  const countryIds = Array.from({ length: spec.countries }, (_, i) =>
    countries.oid(countries.rowOf(i) as number),
  );

  rng.reseed(hash32(seed, STREAM.mus));
  const muCountry: number[] = [];
  const muTimes = new Float64Array(spec.mus);
  for (let i = 0; i < spec.mus; i++) {
    muCountry.push(rng.int(spec.countries));
    muTimes[i] = Math.floor(rng.float(historyStart - 10 * DAY, startMs - DAY));
  }
  const mus = createOrderedTable('mus', seed, muTimes, secondsOf(muTimes));
  const muIds = Array.from({ length: spec.mus }, (_, i) => mus.oid(mus.rowOf(i) as number));
  const countryIndexById = new Map(countryIds.map((id, i) => [id, i]));
  const muIndexById = new Map(muIds.map((id, i) => [id, i]));

  // ---- users ----------------------------------------------------------------------------------------------------
  // Country populations are skewed (a few big countries), as in the real game.
  const countryWeights = Array.from({ length: spec.countries }, (_, i) => 1 / (1 + i * 0.35));
  const countryWeightTotal = countryWeights.reduce((a, b) => a + b, 0);
  rng.reseed(hash32(seed, STREAM.users));
  const userCountry = createColumn(Int32Array, spec.users);
  const userMu = createColumn(Int32Array, spec.users);
  const userParty = createColumn(Int32Array, spec.users);
  const userTimes = new Float64Array(spec.users);
  function pickMuOfCountry(c: number): number {
    for (let tries = 0; tries < 8; tries++) {
      const m = rng.int(spec.mus);
      if (muCountry[m] === c) return m;
    }
    return rng.int(spec.mus);
  }
  for (let i = 0; i < spec.users; i++) {
    const c = weighted(rng, countryWeights, countryWeightTotal);
    userCountry.push(c);
    const sameCountryMus = rng.int(3) > 0;
    userMu.push(rng.chance(0.75) ? (sameCountryMus ? pickMuOfCountry(c) : rng.int(spec.mus)) : -1);
    userParty.push(-1);
    userTimes[i] = Math.floor(rng.float(historyStart, startMs - HOUR));
  }
  // A few same-millisecond sign-ups (ties in users-by-country too).
  for (let i = 1; i < spec.users; i += 37) userTimes[i] = userTimes[i - 1] as number;
  const users = createOrderedTable('users', seed, userTimes, secondsOf(userTimes));
  const userIdCache: string[] = [];
  const userId = (ident: number): string => {
    let id = userIdCache[ident];
    if (id === undefined) {
      id = users.oid(users.rowOf(ident) as number);
      userIdCache[ident] = id;
    }
    return id;
  };
  const usersOfCountry: number[][] = Array.from({ length: spec.countries }, () => []);
  for (let row = 0; row < users.length; row++) {
    const ident = users.ident(row);
    const c = userCountry.get(ident);
    usersOfCountry[c]?.push(ident);
    users.addToIndex('country', c, row);
  }
  const pickUser = (r: Rng): number => Math.floor(spec.users * r.next() ** 2.2);

  // ---- parties (and their members, drawn from the same stream) ------------------------------------------------
  rng.reseed(hash32(seed, STREAM.parties));
  const partyCountry: number[] = [];
  const partyTimes = new Float64Array(spec.parties);
  for (let i = 0; i < spec.parties; i++) {
    partyCountry.push(i < spec.countries ? i : weighted(rng, countryWeights, countryWeightTotal));
    partyTimes[i] = Math.floor(rng.float(historyStart, startMs - DAY));
  }
  const parties = createOrderedTable('parties', seed, partyTimes, secondsOf(partyTimes));
  const partyMembers: number[][] = Array.from({ length: spec.parties }, () => []);
  for (let u = 0; u < spec.users; u++) {
    if (rng.chance(0.4)) {
      const c = userCountry.get(u);
      const candidates: number[] = [];
      for (let p = 0; p < spec.parties; p++) if (partyCountry[p] === c) candidates.push(p);
      if (candidates.length > 0) {
        const p = rng.pick(candidates);
        userParty.set(u, p);
        partyMembers[p]?.push(u);
      }
    }
  }
  for (let row = 0; row < parties.length; row++)
    parties.addToIndex('country', partyCountry[parties.ident(row)] as number, row);
  const partyIds = Array.from({ length: spec.parties }, (_, i) => parties.oid(parties.rowOf(i) as number));

  return {
    countries,
    countryIds,
    countryIndexById,
    countryWeights,
    countryWeightTotal,
    mus,
    muIds,
    muIndexById,
    users,
    userCountry,
    userMu,
    userParty,
    usersOfCountry,
    parties,
    partyCountry,
    partyMembers,
    partyIds,
    userId,
    pickUser,
  };
}
