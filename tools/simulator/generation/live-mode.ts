/**
 * Live mode: new records and entity changes as seeded Poisson processes of simulated time. Advancing the clock
 * in one step or many gives the same world (events are applied in time order).
 */
import { createRng, hash32, type Rng } from '../internal/prng.js';
import type { OrderedTable } from '../ordered-table.js';
import { ARTICLE_CATEGORIES, LANGUAGES } from '../vocab.js';
import { STREAM, weighted } from './draws.js';
import type { WorldData } from './generate-world.js';

/** The live-mode knobs the world needs (rates are per simulated second). */
export interface LiveRates {
  /** New records per second (90 % transactions, 5 % donations, 3 % articles, 2 % users). */
  ratePerSecond: number;
  /** Entity changes per second (users, parties, articles, elections): `updatedAt` and `__v` bumps. */
  changeRatePerSecond: number;
}

export interface LiveMode {
  /** Current simulated time (ms). */
  readonly nowMs: number;
  /** Moves the clock forward, materialising the arrivals and changes due by then. */
  advanceTo(nowMs: number, rates: LiveRates): void;
}

const expGap = (r: Rng, ratePerSecond: number): number =>
  Math.max(1, Math.round((-Math.log(1 - r.next()) / ratePerSecond) * 1000));

/** Times must sort after every existing row of the table. */
const afterLast = (table: OrderedTable, at: number): number =>
  table.length === 0 ? at : Math.max(at, table.time(table.length - 1) + 1);

export function createLiveMode(data: WorldData): LiveMode {
  const { population, articles, donations, transactions, versions } = data;
  const { users } = population;
  const liveRng = createRng(hash32(data.seed, STREAM.live));
  const changeRng = createRng(hash32(data.seed, STREAM.changes));
  let nowMs = data.startMs;
  let nextArrival = Number.NaN;
  let nextChange = Number.NaN;

  /** One new record: 90 % transactions, 5 % donations, 3 % articles, 2 % users. */
  function arrive(at: number): void {
    const k = liveRng.next();
    if (k < 0.9) {
      const ident = transactions.table.length;
      transactions.pushAttrs(ident, undefined);
      const t = afterLast(transactions.table, at);
      transactions.index(transactions.table.append(t, Math.floor(t / 1000)));
    } else if (k < 0.95) {
      const donor = population.pickUser(liveRng);
      const [kind, target] = data.drawDonationTarget(liveRng, donor);
      donations.donor.push(donor);
      donations.kind.push(kind);
      donations.target.push(target);
      const t = afterLast(donations.table, at);
      donations.index(donations.table.append(t, Math.floor(t / 1000)));
    } else if (k < 0.98) {
      articles.author.push(population.pickUser(liveRng));
      articles.category.push(liveRng.int(ARTICLE_CATEGORIES.length));
      articles.language.push(liveRng.int(LANGUAGES.length));
      articles.score.push(liveRng.between(-5, 50));
      const t = afterLast(articles.table, at);
      articles.created.push(t);
      articles.index(articles.table.append(t, Math.floor(t / 1000)));
    } else {
      const c = weighted(liveRng, population.countryWeights, population.countryWeightTotal);
      population.userCountry.push(c);
      population.userMu.push(-1);
      population.userParty.push(-1);
      const t = afterLast(users, at);
      const row = users.append(t, Math.floor(t / 1000));
      population.usersOfCountry[c]?.push(users.ident(row));
      users.addToIndex('country', c, row);
    }
  }

  /** One entity change: a new version of a user, party, article or election. */
  function change(at: number): void {
    const which = changeRng.int(4);
    const [map, table] =
      which === 0
        ? [versions.users, users]
        : which === 1
          ? [versions.parties, population.parties]
          : which === 2
            ? [versions.articles, articles.table]
            : [versions.elections, data.elections.table];
    if (table.length === 0) return;
    const ident = table.ident(changeRng.int(table.length));
    const previous = map.get(ident);
    map.set(ident, { v: (previous?.v ?? 0) + 1, at });
  }

  function advanceTo(target: number, rates: LiveRates): void {
    if (target <= nowMs) return;
    if (rates.ratePerSecond > 0 && Number.isNaN(nextArrival))
      nextArrival = nowMs + expGap(liveRng, rates.ratePerSecond);
    if (rates.changeRatePerSecond > 0 && Number.isNaN(nextChange))
      nextChange = nowMs + expGap(changeRng, rates.changeRatePerSecond);
    // Arrivals and changes in time order, so advancing in one step or many gives the same world.
    for (;;) {
      const arrival = rates.ratePerSecond > 0 ? nextArrival : Infinity;
      const changeAt = rates.changeRatePerSecond > 0 ? nextChange : Infinity;
      if (Math.min(arrival, changeAt) > target) break;
      if (arrival <= changeAt) {
        arrive(arrival);
        nextArrival += expGap(liveRng, rates.ratePerSecond);
      } else {
        change(changeAt);
        nextChange += expGap(changeRng, rates.changeRatePerSecond);
      }
    }
    nowMs = target;
  }

  return {
    get nowMs() {
      return nowMs;
    },
    advanceTo,
  };
}
