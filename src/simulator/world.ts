/**
 * The simulator's world: every record the service can return, derived deterministically from
 * `(seed, scale, now)` (same inputs, same bytes). Rows are kept as compact key columns in
 * {@link OrderedTable}s; a record's body is regenerated on demand from its identity (a seeded hash), so even the
 * large scale only holds a few bytes per row. Mutable entities carry a version (live mode bumps it).
 *
 * Generation needs no server: tests and `gamedata simulate truth` build a world directly.
 */
import { Article, ArticleLite, EquipmentSkills, User, UserLite } from '../models/catalogue.js';
import { ConfigError } from '../errors.js';
import { createColumn, type Column } from './internal/growable.js';
import { isoString } from './internal/iso-string.js';
import { createRng, hash32, hashString, type Rng } from './internal/prng.js';
import { fillModel } from './fill-model.js';
import { createOrderedTable, type OrderedTable } from './ordered-table.js';
import {
  ARTICLE_CATEGORIES,
  ARTICLE_TYPES,
  CASE_CODES,
  ELECTION_TYPES,
  EQUIPMENT_CODES,
  EQUIPMENT_SLOTS,
  GOOD_CODES,
  ITEM_CODES,
  LANGUAGES,
  RARITIES,
  SLOTS,
  TRANSACTION_TYPES,
  TRANSACTION_TYPE_WEIGHTS,
  WORDS,
  countryName,
  type Slot,
} from './vocab.js';

export const SIMULATOR_RESOURCES = [
  'articles',
  'transactions',
  'parties',
  'users',
  'elections',
  'donations',
  'countries',
] as const;
/** A resource of the world: the six published ones plus `countries`. */
export type SimulatorResource = (typeof SIMULATOR_RESOURCES)[number];

export type Scale = 'small' | 'medium' | 'large';

/** Sizes of a scale. */
export interface ScaleSpec {
  countries: number;
  users: number;
  mus: number;
  parties: number;
  articles: number;
  elections: number;
  donations: number;
  transactions: number;
  /** How far back the history goes (days before `now`). */
  historyDays: number;
  /** Share of transactions inside the last 72 h (the real service does ~2.2 M there). */
  windowShare: number;
  /** Rows of the same-millisecond burst inside the last 72 h (more than a page of 100). */
  burst: number;
}

export const SCALES: Readonly<Record<Scale, ScaleSpec>> = {
  small: {
    countries: 20,
    users: 400,
    mus: 30,
    parties: 40,
    articles: 300,
    elections: 120,
    donations: 1_500,
    transactions: 12_000,
    historyDays: 120,
    windowShare: 0.3,
    burst: 150,
  },
  medium: {
    countries: 180,
    users: 20_000,
    mus: 950,
    parties: 480,
    articles: 20_000,
    elections: 3_000,
    donations: 100_000,
    transactions: 1_000_000,
    historyDays: 365,
    windowShare: 0.22,
    burst: 300,
  },
  large: {
    countries: 180,
    users: 124_000,
    mus: 950,
    parties: 480,
    articles: 60_000,
    elections: 6_000,
    donations: 300_000,
    transactions: 10_000_000,
    historyDays: 730,
    windowShare: 0.2,
    burst: 500,
  },
};

export interface WorldOptions {
  /** @default 1 */
  seed?: number;
  /** @default 'small' */
  scale?: Scale;
  /** The world's "now" (ISO). Every record is older. @default '2026-11-01T00:00:00.000Z' */
  now?: string;
  /**
   * Add the fields the real service sends beyond the spec (`sellerMuId`, `buyerMuId`, `sellerCountryId`,
   * `buyerCountryId` on every transaction). @default true
   */
  extraFields?: boolean;
}

export const DEFAULT_WORLD_OPTIONS = {
  seed: 1,
  scale: 'small',
  now: '2026-11-01T00:00:00.000Z',
  extraFields: true,
} as const satisfies Required<WorldOptions>;

export type RecordVariant = 'full' | 'lite' | 'feed' | 'thin';
type Rec = Record<string, unknown>;

/** The live-mode knobs the world needs (rates are per simulated second). */
export interface LiveRates {
  /** New records per second (90 % transactions, 5 % donations, 3 % articles, 2 % users). */
  ratePerSecond: number;
  /** Entity changes per second (users, parties, articles, elections): `updatedAt` and `__v` bumps. */
  changeRatePerSecond: number;
}

/** One resource's rows and how to turn a row into the record the API returns. */
export interface ResourceStore {
  readonly resource: SimulatorResource;
  readonly table: OrderedTable;
  build(row: number, variant?: RecordVariant): Rec;
}

export interface World {
  readonly seed: number;
  readonly scale: Scale;
  readonly spec: ScaleSpec;
  /** The world's initial now (ms). */
  readonly startMs: number;
  /** Current simulated time (ms): `startMs` until live mode advances it. */
  readonly nowMs: number;
  readonly extraFields: boolean;
  /** Country ids by index. */
  readonly countryIds: readonly string[];
  /** Military unit ids by index. */
  readonly muIds: readonly string[];
  store(resource: SimulatorResource): ResourceStore;
  /** Every record of a resource, newest first by `(sortTime, _id)`, as the API returns it (current versions). */
  truth(resource: SimulatorResource): Rec[];
  /** User id of a user identity (creation counter). */
  userId(ident: number): string;
  /** The equipment a user wears, keyed by slot (`inventory.fetchCurrentEquipment`). */
  equipmentOf(userRow: number): Record<string, Rec>;
  /** Transaction filters resolved to row tests; `undefined` rows lists mean "no such entity". */
  readonly tx: TransactionColumns;
  /** Filter attributes of an article row (feed filters). */
  articleMeta(row: number): {
    author: number;
    country: number;
    category: string;
    language: string;
    score: number;
  };
  /** Target and donor of a donation row: kind 0 = military unit, 1 = country, 2 = party. */
  donationMeta(row: number): { donor: number; kind: number; target: number };
  /** Index of a country id / military unit id; undefined when unknown. */
  countryIndex(id: string): number | undefined;
  muIndex(id: string): number | undefined;
  /** Counts a view of an article (`article.getArticleById` does, as upstream may). */
  countView(articleRow: number): void;
  /** Moves the clock forward, materialising the arrivals and changes due by then (live mode). */
  advanceTo(nowMs: number, rates: LiveRates): void;
  /** Rough memory figures for benchmarks. */
  footprint(): { rows: number; indexedRows: number };
}

/** Transaction attributes by identity (creation counter); `-1` = none. */
export interface TransactionColumns {
  type: Column<Uint8Array>;
  buyer: Column<Int32Array>;
  seller: Column<Int32Array>;
  item: Column<Int32Array>;
  country: Column<Int32Array>;
  mu: Column<Int32Array>;
  party: Column<Int32Array>;
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const WINDOW_MS = 72 * HOUR;

// Stream ids, so each resource draws from its own seeded stream.
const S = {
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

const iso = isoString;
const round2 = (x: number): number => Math.round(x * 100) / 100;

function resolveWorldOptions(options: WorldOptions): {
  seed: number;
  scale: Scale;
  startMs: number;
  extraFields: boolean;
} {
  const seed = options.seed ?? DEFAULT_WORLD_OPTIONS.seed;
  if (!Number.isSafeInteger(seed) || seed < 0)
    throw new ConfigError(`option seed must be a non-negative integer, got ${String(seed)}`);
  const scale = options.scale ?? DEFAULT_WORLD_OPTIONS.scale;
  if (!(scale in SCALES))
    throw new ConfigError(`option scale must be small, medium or large, got ${String(scale)}`);
  const now = options.now ?? DEFAULT_WORLD_OPTIONS.now;
  const startMs = Date.parse(now);
  if (!Number.isFinite(startMs))
    throw new ConfigError(`option now must be an ISO date-time, got ${JSON.stringify(now)}`);
  return { seed, scale, startMs, extraFields: options.extraFields ?? DEFAULT_WORLD_OPTIONS.extraFields };
}

/** Picks an index from weights (sum precomputed). */
function weighted(rng: Rng, weights: readonly number[], total: number): number {
  let r = rng.next() * total;
  for (let i = 0; i < weights.length; i++) {
    r -= weights[i] as number;
    if (r < 0) return i;
  }
  return weights.length - 1;
}

/** Sorted random times in [from, to), whole ms; `tieRate` of them repeat the previous millisecond. */
function sortedTimes(rng: Rng, n: number, from: number, to: number, tieRate: number): Float64Array {
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) out[i] = Math.floor(rng.float(from, to));
  out.sort();
  for (let i = 1; i < n; i++) if (rng.chance(tieRate)) out[i] = out[i - 1] as number;
  return out;
}

/** Creates the world. Small builds in well under a second; medium in a few seconds. */
export function createWorld(options: WorldOptions = {}): World {
  const { seed, scale, startMs, extraFields } = resolveWorldOptions(options);
  const spec = SCALES[scale];
  let nowMs = startMs;
  const historyStart = startMs - spec.historyDays * DAY;
  const rng = createRng(0);

  // ---- countries and military units -------------------------------------------------------------------------
  rng.reseed(hash32(seed, S.countries));
  const countryTimes = new Float64Array(spec.countries);
  for (let i = 0; i < spec.countries; i++)
    countryTimes[i] = historyStart - 30 * DAY + i * HOUR + rng.int(1000);
  const countries = createOrderedTable('countries', seed, countryTimes, secondsOf(countryTimes));
  const countryIds = Array.from({ length: spec.countries }, (_, i) =>
    countries.oid(countries.rowOf(i) as number),
  );

  rng.reseed(hash32(seed, S.mus));
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
  rng.reseed(hash32(seed, S.users));
  const userCountry = createColumn(Int32Array, spec.users);
  const userMu = createColumn(Int32Array, spec.users);
  const userParty = createColumn(Int32Array, spec.users);
  const userTimes = new Float64Array(spec.users);
  for (let i = 0; i < spec.users; i++) {
    const c = weighted(rng, countryWeights, countryWeightTotal);
    userCountry.push(c);
    const sameCountryMus = rng.int(3) > 0;
    userMu.push(rng.chance(0.75) ? (sameCountryMus ? pickMuOfCountry(c) : rng.int(spec.mus)) : -1);
    userParty.push(-1);
    userTimes[i] = Math.floor(rng.float(historyStart, startMs - HOUR));
  }
  function pickMuOfCountry(c: number): number {
    for (let tries = 0; tries < 8; tries++) {
      const m = rng.int(spec.mus);
      if (muCountry[m] === c) return m;
    }
    return rng.int(spec.mus);
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
  // Activity is skewed: a small core does most of the trading (like ~15 k active of ~124 k real users).
  const pickUser = (r: Rng): number => Math.floor(spec.users * r.next() ** 2.2);

  // ---- parties --------------------------------------------------------------------------------------------------
  rng.reseed(hash32(seed, S.parties));
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

  // ---- articles (sorted on publishedAt; the _id carries createdAt) --------------------------------------------
  rng.reseed(hash32(seed, S.articles));
  const articleAuthor = createColumn(Int32Array, spec.articles);
  const articleCategory = createColumn(Uint8Array, spec.articles);
  const articleLanguage = createColumn(Uint8Array, spec.articles);
  const articleScore = createColumn(Int32Array, spec.articles);
  const articleCreated = createColumn(Float64Array, spec.articles);
  const articleTimes = new Float64Array(spec.articles);
  const articleSecs = new Uint32Array(spec.articles);
  for (let i = 0; i < spec.articles; i++) {
    articleAuthor.push(pickUser(rng));
    articleCategory.push(rng.int(ARTICLE_CATEGORIES.length));
    articleLanguage.push(rng.int(LANGUAGES.length));
    articleScore.push(rng.between(-20, 120));
    // Recent days are denser, so the daily and weekly feeds are not empty.
    const published = Math.floor(
      rng.chance(0.25) ? rng.float(startMs - 7 * DAY, startMs - 1) : rng.float(historyStart, startMs - 1),
    );
    const created = published - rng.int(6 * HOUR);
    articleTimes[i] = published;
    articleSecs[i] = Math.floor(created / 1000);
    articleCreated.push(created);
  }
  const articles = createOrderedTable('articles', seed, articleTimes, articleSecs);
  const indexArticle = (row: number): void => {
    const ident = articles.ident(row);
    articles.addToIndex('author', articleAuthor.get(ident), row);
    articles.addToIndex('country', userCountry.get(articleAuthor.get(ident)), row);
  };
  for (let row = 0; row < articles.length; row++) indexArticle(row);

  // ---- elections ----------------------------------------------------------------------------------------------------
  rng.reseed(hash32(seed, S.elections));
  const electionCountry: number[] = [];
  const electionType: number[] = [];
  const electionTimes = new Float64Array(spec.elections);
  for (let i = 0; i < spec.elections; i++) {
    electionCountry.push(i < spec.countries ? i : rng.int(spec.countries));
    electionType.push(rng.int(ELECTION_TYPES.length));
    electionTimes[i] = Math.floor(rng.float(historyStart, startMs - HOUR));
  }
  const elections = createOrderedTable('elections', seed, electionTimes, secondsOf(electionTimes));
  for (let row = 0; row < elections.length; row++)
    elections.addToIndex('country', electionCountry[elections.ident(row)] as number, row);

  // ---- donations (one target each: a military unit, a country or a party) ------------------------------------
  rng.reseed(hash32(seed, S.donations));
  const donationDonor = createColumn(Int32Array, spec.donations);
  const donationKind = createColumn(Uint8Array, spec.donations); // 0 mu, 1 country, 2 party
  const donationTarget = createColumn(Int32Array, spec.donations);
  const donationTimes = sortedTimes(rng, spec.donations, historyStart, startMs - 1, 0.02);
  const newDonationTarget = (r: Rng, donor: number): [number, number] => {
    const kind = r.int(3);
    if (kind === 0) {
      const m = userMu.get(donor);
      return [0, m >= 0 ? m : r.int(spec.mus)];
    }
    if (kind === 1) return [1, r.chance(0.7) ? userCountry.get(donor) : r.int(spec.countries)];
    const p = userParty.get(donor);
    return [2, p >= 0 ? p : r.int(spec.parties)];
  };
  for (let i = 0; i < spec.donations; i++) {
    const donor = pickUser(rng);
    const [kind, target] = newDonationTarget(rng, donor);
    donationDonor.push(donor);
    donationKind.push(kind);
    donationTarget.push(target);
  }
  const donations = createOrderedTable('donations', seed, donationTimes, secondsOf(donationTimes));
  const DONATION_FAMILIES = ['mu', 'country', 'party'] as const;
  const indexDonation = (row: number): void => {
    const ident = donations.ident(row);
    donations.addToIndex(
      DONATION_FAMILIES[donationKind.get(ident)] as string,
      donationTarget.get(ident),
      row,
    );
  };
  for (let row = 0; row < donations.length; row++) indexDonation(row);

  // ---- transactions -------------------------------------------------------------------------------------------------
  rng.reseed(hash32(seed, S.transactions));
  const nTx = spec.transactions;
  const inWindow = Math.floor(nTx * spec.windowShare);
  const burstAt = startMs - 30 * HOUR - 123; // inside the last 72 h, at every scale
  const olderBurstAt = startMs - 20 * DAY - 457; // and one beyond the window (reachable through filters)
  const olderBurst = Math.min(120, Math.floor(spec.burst / 2) + 20);
  const spread = nTx - inWindow - olderBurst;
  const txTimes = new Float64Array(nTx);
  txTimes.set(sortedTimes(rng, spread, historyStart, startMs - WINDOW_MS, 0.05), 0);
  txTimes.set(sortedTimes(rng, inWindow - spec.burst, startMs - WINDOW_MS, startMs - 1, 0.05), spread);
  txTimes.fill(burstAt, inWindow - spec.burst + spread, inWindow + spread);
  txTimes.fill(olderBurstAt, inWindow + spread);
  txTimes.sort();
  const tx: TransactionColumns = {
    type: createColumn(Uint8Array, nTx),
    buyer: createColumn(Int32Array, nTx),
    seller: createColumn(Int32Array, nTx),
    item: createColumn(Int32Array, nTx),
    country: createColumn(Int32Array, nTx),
    mu: createColumn(Int32Array, nTx),
    party: createColumn(Int32Array, nTx),
  };
  const typeWeightTotal = TRANSACTION_TYPE_WEIGHTS.reduce((a, b) => a + b, 0);
  const goodBase = 0;
  const caseBase = GOOD_CODES.length;
  const equipBase = caseBase + CASE_CODES.length;
  const equipCount = ITEM_CODES.length - equipBase;
  const burstType = TRANSACTION_TYPES.indexOf('openCase');
  const txRng = createRng(0);
  const otherUser = (r: Rng, not: number): number => {
    const o = pickUser(r);
    return o === not ? (o + 1) % spec.users : o;
  };
  /** Draws the attributes of transaction `ident` (pure function of seed and identity). */
  const pushTxAttrs = (ident: number, bulkType: number | undefined): void => {
    const r = txRng;
    r.reseed(hash32(seed, S.transactions, ident));
    const type = bulkType ?? weighted(r, TRANSACTION_TYPE_WEIGHTS, typeWeightTotal);
    const buyer = pickUser(r);
    let seller = -1;
    let item = -1;
    let country = userCountry.get(buyer);
    let mu = -1;
    let party = -1;
    switch (TRANSACTION_TYPES[type]) {
      case 'trading':
        seller = otherUser(r, buyer);
        item = goodBase + r.int(GOOD_CODES.length);
        break;
      case 'itemMarket':
        seller = otherUser(r, buyer);
        item = equipBase + r.int(equipCount);
        break;
      case 'wage':
      case 'articleTip':
        seller = otherUser(r, buyer);
        break;
      case 'donation': {
        const [kind, target] = newDonationTarget(r, buyer);
        if (kind === 0) mu = target;
        else if (kind === 1) country = target;
        else party = target;
        break;
      }
      case 'openCase':
        item = caseBase + r.int(CASE_CODES.length);
        break;
      case 'craftItem':
      case 'dismantleItem':
        item = equipBase + r.int(equipCount);
        break;
      case 'battleLoot':
        item = r.chance(0.5) ? equipBase + r.int(equipCount) : goodBase + r.int(GOOD_CODES.length);
        mu = userMu.get(buyer) >= 0 ? userMu.get(buyer) : r.int(spec.mus);
        break;
      default:
        break;
    }
    tx.type.push(type);
    tx.buyer.push(buyer);
    tx.seller.push(seller);
    tx.item.push(item);
    tx.country.push(country);
    tx.mu.push(mu);
    tx.party.push(party);
  };
  for (let ident = 0; ident < nTx; ident++) {
    // The bulk action of the burst: one user opens a pile of cases in one millisecond.
    pushTxAttrs(ident, txTimes[ident] === burstAt || txTimes[ident] === olderBurstAt ? burstType : undefined);
  }
  const transactions = createOrderedTable('transactions', seed, txTimes, secondsOf(txTimes));
  const indexTransaction = (row: number): void => {
    const ident = transactions.ident(row);
    const buyer = tx.buyer.get(ident);
    const seller = tx.seller.get(ident);
    transactions.addToIndex('user', buyer, row);
    if (seller >= 0 && seller !== buyer) transactions.addToIndex('user', seller, row);
    transactions.addToIndex('type', tx.type.get(ident), row);
    transactions.addToIndex('country', tx.country.get(ident), row);
    const item = tx.item.get(ident);
    if (item >= 0) transactions.addToIndex('item', item, row);
    const mu = tx.mu.get(ident);
    if (mu >= 0) transactions.addToIndex('mu', mu, row);
    const party = tx.party.get(ident);
    if (party >= 0) transactions.addToIndex('party', party, row);
  };
  for (let row = 0; row < transactions.length; row++) indexTransaction(row);
  for (const table of [users, parties, articles, elections, donations, transactions]) table.seal();

  // ---- versions of mutable entities (live changes, article views) ---------------------------------------------
  const versions = {
    users: new Map<number, { v: number; at: number }>(),
    parties: new Map<number, { v: number; at: number }>(),
    articles: new Map<number, { v: number; at: number }>(),
    elections: new Map<number, { v: number; at: number }>(),
  };
  const articleViews = new Map<number, number>();

  // ---- record builders --------------------------------------------------------------------------------------------
  const bodyRng = createRng(0);
  const fillCtx = (fromMs: number, toMs: number, absentRate: number) => ({
    rng: bodyRng,
    fromMs,
    toMs: Math.max(fromMs, toMs),
    absentRate,
    countryIds,
  });

  const itemIdOf = (kind: number, a: number, b: number): string =>
    hash32(seed, S.equipment, kind, a, b).toString(16).padStart(8, '0') +
    hash32(seed, S.equipment, kind, b, a).toString(16).padStart(8, '0') +
    hash32(seed, S.equipment, a, kind, b).toString(16).padStart(8, '0');

  const tierOf = (code: string, r: Rng): number => {
    const last = code.charCodeAt(code.length - 1) - 48;
    return last >= 1 && last <= 9 ? last : 1 + r.int(5);
  };
  const slotOfCode = new Map<string, string>();
  for (const s of EQUIPMENT_SLOTS) for (const code of EQUIPMENT_CODES[s]) slotOfCode.set(code, s);

  /**
   * An Equipment in catalogue field order. Built as one fresh object (no spread, no delete: those turn objects
   * into slow dictionaries, and serving serialises millions of these).
   */
  function equipment(code: string, slot: Slot | undefined, itemId: string, acquiredMs: number, r: Rng): Rec {
    r.reseed(hash32(seed, S.equipment, hashString(itemId), acquiredMs));
    const tier = tierOf(code, r);
    const rec: Rec = {};
    if (slot !== undefined) rec['slot'] = slot;
    rec['itemId'] = itemId;
    rec['itemCode'] = code;
    rec['name'] = `${code[0]?.toUpperCase() ?? ''}${code.slice(1)}`;
    rec['rarity'] = RARITIES[Math.min(RARITIES.length - 1, tier - 1)] ?? 'common';
    rec['type'] = slot ?? slotOfCode.get(code) ?? 'weapon';
    rec['code'] = code;
    rec['lastAcquisitionAt'] = iso(acquiredMs);
    if (!r.chance(0.03)) rec['stats'] = { tier, durability: r.int(100), power: round2(r.float(0, 50)) };
    rec['skills'] = fillModel(EquipmentSkills, {
      rng: r,
      fromMs: acquiredMs,
      toMs: acquiredMs,
      absentRate: 0.03,
      countryIds,
    });
    rec['state'] = round2(r.float(1, 100));
    rec['maxState'] = 100;
    rec['quantity'] = 1;
    return rec;
  }

  const equipmentOfIdent = (ident: number, createdMs: number): Record<string, Rec> => {
    const out: Record<string, Rec> = {};
    const r = createRng(hash32(seed, S.equipment, ident));
    for (const slot of SLOTS) {
      if (slot !== 'weapon' && !r.chance(0.8)) continue;
      const codes = EQUIPMENT_CODES[slot];
      const code = codes[hash32(seed, ident, slot.length) % codes.length] as string;
      const acquired =
        createdMs + (hash32(seed, ident, slot.charCodeAt(0)) % Math.max(1, startMs - createdMs));
      out[slot] = equipment(code, slot, itemIdOf(1, ident, slot.charCodeAt(1)), acquired, createRng(0));
    }
    return out;
  };

  const pick = (rec: Rec, keys: readonly string[]): Rec => {
    const out: Rec = {};
    for (const key of keys) if (key in rec) out[key] = rec[key];
    return out;
  };
  const userLiteKeys = ['_id', ...Object.keys(UserLite.fields), '__v'];
  const userFieldKeys = Object.keys(User.fields);
  const articleLiteKeys = ['_id', ...Object.keys(ArticleLite.fields), '__v'];
  const articleFullKeys = ['_id', ...Object.keys(Article.fields), '__v'];

  function buildUser(row: number, variant: RecordVariant = 'full'): Rec {
    const ident = users.ident(row);
    const createdMs = users.time(row);
    const version = versions.users.get(ident);
    if (variant === 'thin') return { _id: users.oid(row), createdAt: iso(createdMs) };
    bodyRng.reseed(hash32(seed, S.userBody, ident));
    const body = fillModel(User, fillCtx(createdMs, startMs, 0.04));
    const r = bodyRng;
    const username = `${r.pick(WORDS)}${r.pick(WORDS)}${ident}`;
    const c = userCountry.get(ident);
    const mu = userMu.get(ident);
    const party = userParty.get(ident);
    const updatedMs = version?.at ?? Math.min(startMs - 1, createdMs + r.int(30 * DAY));
    const gear = equipmentOfIdent(ident, createdMs);
    // Fields the world decides; `undefined` leaves the field out. The rest comes from the catalogue filler.
    const set: Rec = {
      username,
      usernameLower: username.toLowerCase(),
      country: countryIds[c],
      avatarUrl: `https://cdn.example.invalid/avatars/${users.oid(row)}.png`,
      mu: mu >= 0 ? muIds[mu] : undefined,
      party: party >= 0 ? partyIds[party] : undefined,
      company: r.chance(0.6) ? itemIdOf(2, ident, 7) : undefined,
      createdAt: iso(createdMs),
      updatedAt: iso(updatedMs),
      isActive: startMs - updatedMs < 14 * DAY || r.chance(0.2),
      militaryRank: r.between(0, 60),
      equipment: Object.fromEntries(Object.entries(gear).map(([slot, item]) => [slot, item['itemId']])),
      orgs: r.chance(0.1) ? [itemIdOf(3, ident, 1)] : [],
    };
    // One fresh object in catalogue order (no spread, no delete: both make slow dictionary-mode objects).
    const rec: Rec = { _id: users.oid(row) };
    for (const key of userFieldKeys) {
      const value = key in set ? set[key] : body[key];
      if (value !== undefined) rec[key] = value;
    }
    const dates = rec['dates'] as Rec | undefined;
    if (dates !== undefined && version !== undefined) dates['lastConnectionAt'] = iso(version.at);
    const leveling = rec['leveling'] as Rec | undefined;
    if (leveling !== undefined && version !== undefined && typeof leveling['totalXp'] === 'number')
      leveling['totalXp'] = leveling['totalXp'] + version.v * 37;
    rec['__v'] = (hash32(seed, ident, 99) % 5) + (version?.v ?? 0);
    return variant === 'lite' ? pick(rec, userLiteKeys) : rec;
  }

  function buildParty(row: number): Rec {
    const ident = parties.ident(row);
    const version = versions.parties.get(ident);
    bodyRng.reseed(hash32(seed, S.partyBody, ident));
    const r = bodyRng;
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
      createdAt: iso(createdMs),
      updatedAt: iso(version?.at ?? Math.min(startMs - 1, createdMs + r.int(10 * DAY))),
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
  }

  function buildArticle(row: number, variant: RecordVariant = 'feed'): Rec {
    const ident = articles.ident(row);
    const version = versions.articles.get(ident);
    const views = articleViews.get(ident) ?? 0;
    bodyRng.reseed(hash32(seed, S.articleBody, ident));
    const r = bodyRng;
    const author = articleAuthor.get(ident);
    const publishedMs = articles.time(row);
    const createdMs = articleCreated.get(ident);
    const words = Array.from({ length: 3 + r.int(5) }, () => r.pick(WORDS));
    const title = words.join(' ');
    const score = articleScore.get(ident) + (version?.v ?? 0);
    const baseViews = r.int(5000) + (version?.v ?? 0) * 3 + views;
    const stats = {
      comments: r.int(60),
      dislikes: r.int(30),
      gemTips: r.int(10),
      likes: Math.max(0, score) + r.int(20),
      score,
      subs: r.int(40),
      tips: r.int(25),
      views: baseViews,
    };
    const rec: Rec = {
      _id: articles.oid(row),
      title,
      authorId: userId(author),
      countryId: countryIds[userCountry.get(author)],
      type: r.pick(ARTICLE_TYPES),
      category: ARTICLE_CATEGORIES[articleCategory.get(ident)],
      language: LANGUAGES[articleLanguage.get(ident)],
      ...(r.chance(0.7) ? { image: `https://cdn.example.invalid/articles/${articles.oid(row)}.jpg` } : {}),
      createdAt: iso(createdMs),
      author: `${WORDS[hash32(seed, author) % WORDS.length] as string}${author}`,
      slug: `${words.join('-')}-${ident}`,
      publishedAt: iso(publishedMs),
      updatedAt: iso(version?.at ?? publishedMs),
      content: Array.from({ length: 20 + r.int(80) }, () => r.pick(WORDS)).join(' '),
      score,
      views: baseViews,
      isDeleted: false,
      isPublished: true,
      isPublic: r.chance(0.9),
      stats,
      comments: stats.comments,
      __v: version?.v ?? 0,
    };
    if (variant === 'full') return pick(rec, articleFullKeys);
    if (variant === 'lite')
      return pick(
        rec,
        articleLiteKeys.filter((k) => k !== 'content'),
      );
    return pick(rec, articleLiteKeys); // the feed: lite fields plus content
  }

  function buildElection(row: number): Rec {
    const ident = elections.ident(row);
    const version = versions.elections.get(ident);
    bodyRng.reseed(hash32(seed, S.electionBody, ident));
    const r = bodyRng;
    const c = electionCountry[ident] as number;
    const createdMs = elections.time(row);
    const startVote = createdMs + DAY;
    const endVote = startVote + 2 * DAY;
    const pool = usersOfCountry[c] ?? [];
    const n = Math.min(pool.length, 2 + r.int(5));
    const candidates: Rec[] = [];
    const votes: Record<string, number> = {};
    const extra = version?.v ?? 0;
    for (let k = 0; k < n; k++) {
      const u = pool[(r.int(pool.length) + k) % pool.length] as number;
      const id = userId(u);
      if (id in votes) continue;
      const voteCount = r.int(400) + (k === 0 ? extra : 0);
      votes[id] = voteCount;
      const p = userParty.get(u);
      candidates.push({
        user: id,
        ...(r.chance(0.6) ? { article: itemIdOf(4, ident, k) } : {}),
        ...(p >= 0 ? { party: partyIds[p] } : {}),
        voteCount,
        isElected: false,
      });
    }
    const type = ELECTION_TYPES[electionType[ident] as number] as string;
    const seats = type === 'congress' ? Math.min(3, candidates.length) : Math.min(1, candidates.length);
    const ended = endVote <= startMs;
    const ranked = [...candidates].sort((a, b) => (b['voteCount'] as number) - (a['voteCount'] as number));
    const elected = ended ? ranked.slice(0, seats) : [];
    for (const cand of elected) cand['isElected'] = true;
    const status = ended ? 'ended' : startVote <= startMs ? 'voting' : 'pending';
    return {
      _id: elections.oid(row),
      country: countryIds[c],
      type,
      status,
      votesStartAt: iso(startVote),
      votesEndAt: iso(endVote),
      createdAt: iso(createdMs),
      electedCandidates: elected.map((cand) => cand['user']),
      isActive: !ended,
      candidates,
      votesCount: Object.values(votes).reduce((a, b) => a + b, 0),
      electedCount: elected.length,
      votes,
      __v: extra,
    };
  }

  function buildDonation(row: number): Rec {
    const ident = donations.ident(row);
    const kind = donationKind.get(ident);
    const target = donationTarget.get(ident);
    const createdAt = iso(donations.time(row));
    return {
      _id: donations.oid(row),
      userId: userId(donationDonor.get(ident)),
      ...(kind === 0 ? { muId: muIds[target] } : {}),
      ...(kind === 1 ? { countryId: countryIds[target] } : {}),
      ...(kind === 2 ? { partyId: partyIds[target] } : {}),
      createdAt,
      updatedAt: createdAt,
      amount: round2(10 + (hash32(seed, S.donations, ident) % 500_000) / 100),
      __v: 0,
    };
  }

  const itemRng = createRng(0);
  function buildTransaction(row: number): Rec {
    const ident = transactions.ident(row);
    const r = createRng(hash32(seed, S.txBody, ident));
    const type = TRANSACTION_TYPES[tx.type.get(ident)] as string;
    const buyer = tx.buyer.get(ident);
    const seller = tx.seller.get(ident);
    const itemIdx = tx.item.get(ident);
    const code = itemIdx >= 0 ? (ITEM_CODES[itemIdx] as string) : undefined;
    const createdMs = transactions.time(row);
    const isEquipment = itemIdx >= equipBase;
    const quantity = isEquipment
      ? 1
      : code !== undefined && itemIdx >= caseBase
        ? 1 + r.int(5)
        : 1 + r.int(500);
    const unitPrice = isEquipment ? r.float(5, 900) : r.float(0.05, 12);
    let money: number;
    switch (type) {
      case 'wage':
        money = round2(r.float(5, 80));
        break;
      case 'applicationFee':
        money = round2(r.float(1, 20));
        break;
      case 'donation':
      case 'articleTip':
        money = round2(r.float(1, 1000));
        break;
      case 'openCase':
      case 'craftItem':
      case 'dismantleItem':
      case 'battleLoot':
        money = 0;
        break;
      default:
        money = round2(quantity * unitPrice);
    }
    const single = seller < 0 && type !== 'donation';
    const rec: Rec = { _id: transactions.oid(row), transactionType: type, money, quantity };
    if (seller >= 0) rec['sellerId'] = userId(seller);
    rec['buyerId'] = userId(buyer);
    if (code !== undefined) rec['itemCode'] = code;
    if (single || type === 'donation') rec['userId'] = userId(buyer);
    const mu = tx.mu.get(ident);
    if (mu >= 0) rec['muId'] = muIds[mu];
    rec['countryId'] = countryIds[tx.country.get(ident)];
    const party = tx.party.get(ident);
    if (party >= 0) rec['partyId'] = partyIds[party];
    // Equipment: the traded piece, or what a case gave (the outer itemCode stays the case: filters match it only).
    if (type === 'openCase') {
      const slot = EQUIPMENT_SLOTS[r.int(EQUIPMENT_SLOTS.length)] as (typeof EQUIPMENT_SLOTS)[number];
      const inner = r.pick(EQUIPMENT_CODES[slot]);
      rec['item'] = equipment(inner, undefined, itemIdOf(5, ident, 0), createdMs, itemRng);
    } else if (isEquipment && code !== undefined) {
      rec['item'] = equipment(code, undefined, itemIdOf(5, ident, 1), createdMs, itemRng);
    }
    if (type === 'trading' || type === 'itemMarket') rec['offerCreatedAt'] = iso(createdMs - r.int(3 * DAY));
    rec['createdAt'] = iso(createdMs);
    rec['updatedAt'] = iso(createdMs);
    rec['__v'] = 0;
    if (extraFields) {
      const buyerMu = userMu.get(buyer);
      rec['buyerCountryId'] = countryIds[userCountry.get(buyer)];
      rec['buyerMuId'] = buyerMu >= 0 ? muIds[buyerMu] : null;
      rec['sellerCountryId'] = seller >= 0 ? countryIds[userCountry.get(seller)] : null;
      const sellerMu = seller >= 0 ? userMu.get(seller) : -1;
      rec['sellerMuId'] = sellerMu >= 0 ? muIds[sellerMu] : null;
    }
    return rec;
  }

  function buildCountry(row: number): Rec {
    const ident = countries.ident(row);
    const name = countryName(ident);
    const createdAt = iso(countries.time(row));
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
  }

  const stores: Record<SimulatorResource, ResourceStore> = {
    users: { resource: 'users', table: users, build: buildUser },
    parties: { resource: 'parties', table: parties, build: (row) => buildParty(row) },
    articles: { resource: 'articles', table: articles, build: buildArticle },
    elections: { resource: 'elections', table: elections, build: (row) => buildElection(row) },
    donations: { resource: 'donations', table: donations, build: (row) => buildDonation(row) },
    transactions: { resource: 'transactions', table: transactions, build: (row) => buildTransaction(row) },
    countries: { resource: 'countries', table: countries, build: (row) => buildCountry(row) },
  };

  // ---- live mode: arrivals and changes as seeded Poisson processes of simulated time ---------------------------
  const liveRng = createRng(hash32(seed, S.live));
  const changeRng = createRng(hash32(seed, S.changes));
  let nextArrival = Number.NaN;
  let nextChange = Number.NaN;
  const expGap = (r: Rng, ratePerSecond: number): number =>
    Math.max(1, Math.round((-Math.log(1 - r.next()) / ratePerSecond) * 1000));
  /** Times must sort after every existing row of the table. */
  const afterLast = (table: OrderedTable, at: number): number =>
    table.length === 0 ? at : Math.max(at, table.time(table.length - 1) + 1);

  function arrive(at: number): void {
    const k = liveRng.next();
    if (k < 0.9) {
      const ident = transactions.length;
      pushTxAttrs(ident, undefined);
      const t = afterLast(transactions, at);
      indexTransaction(transactions.append(t, Math.floor(t / 1000)));
    } else if (k < 0.95) {
      const donor = pickUser(liveRng);
      const [kind, target] = newDonationTarget(liveRng, donor);
      donationDonor.push(donor);
      donationKind.push(kind);
      donationTarget.push(target);
      const t = afterLast(donations, at);
      indexDonation(donations.append(t, Math.floor(t / 1000)));
    } else if (k < 0.98) {
      articleAuthor.push(pickUser(liveRng));
      articleCategory.push(liveRng.int(ARTICLE_CATEGORIES.length));
      articleLanguage.push(liveRng.int(LANGUAGES.length));
      articleScore.push(liveRng.between(-5, 50));
      const t = afterLast(articles, at);
      articleCreated.push(t);
      indexArticle(articles.append(t, Math.floor(t / 1000)));
    } else {
      const c = weighted(liveRng, countryWeights, countryWeightTotal);
      userCountry.push(c);
      userMu.push(-1);
      userParty.push(-1);
      const t = afterLast(users, at);
      const row = users.append(t, Math.floor(t / 1000));
      usersOfCountry[c]?.push(users.ident(row));
      users.addToIndex('country', c, row);
    }
  }

  function change(at: number): void {
    const which = changeRng.int(4);
    const [map, table] =
      which === 0
        ? [versions.users, users]
        : which === 1
          ? [versions.parties, parties]
          : which === 2
            ? [versions.articles, articles]
            : [versions.elections, elections];
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
    seed,
    scale,
    spec,
    startMs,
    get nowMs() {
      return nowMs;
    },
    extraFields,
    countryIds,
    muIds,
    tx,
    store: (resource) => stores[resource],
    truth(resource) {
      const store = stores[resource];
      const out: Rec[] = [];
      const variant: RecordVariant = resource === 'articles' ? 'feed' : 'full';
      for (let row = store.table.length - 1; row >= 0; row--) out.push(store.build(row, variant));
      return out;
    },
    userId,
    equipmentOf: (userRow) => equipmentOfIdent(users.ident(userRow), users.time(userRow)),
    articleMeta(row) {
      const ident = articles.ident(row);
      const author = articleAuthor.get(ident);
      return {
        author,
        country: userCountry.get(author),
        category: ARTICLE_CATEGORIES[articleCategory.get(ident)] as string,
        language: LANGUAGES[articleLanguage.get(ident)] as string,
        score: articleScore.get(ident) + (versions.articles.get(ident)?.v ?? 0),
      };
    },
    donationMeta(row) {
      const ident = donations.ident(row);
      return {
        donor: donationDonor.get(ident),
        kind: donationKind.get(ident),
        target: donationTarget.get(ident),
      };
    },
    countryIndex: (id) => countryIndexById.get(id.toLowerCase()),
    muIndex: (id) => muIndexById.get(id.toLowerCase()),
    countView(articleRow) {
      const ident = articles.ident(articleRow);
      articleViews.set(ident, (articleViews.get(ident) ?? 0) + 1);
    },
    advanceTo,
    footprint() {
      let rows = 0;
      let indexedRows = 0;
      for (const store of Object.values(stores)) {
        rows += store.table.length;
        indexedRows += store.table.indexedRows();
      }
      return { rows, indexedRows };
    },
  };
}

function secondsOf(times: Float64Array): Uint32Array {
  const out = new Uint32Array(times.length);
  for (let i = 0; i < times.length; i++) out[i] = Math.floor((times[i] as number) / 1000);
  return out;
}
