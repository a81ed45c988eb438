/**
 * The simulator's world: every record the service can return, derived deterministically from
 * `(seed, scale, now)` (same inputs, same bytes). Rows are kept as compact key columns in
 * {@link OrderedTable}s; a record's body is regenerated on demand from its identity (a seeded hash), so even the
 * large scale only holds a few bytes per row. Mutable entities carry a version (live mode bumps it).
 *
 * This module assembles the parts: `generation/` draws the rows (`generateWorld`) and runs live mode
 * (`createLiveMode`), `records/` turns a row into the record the API returns (one builder per resource), and the
 * queries below (filters' attributes, id lookups) read the generated columns. Generation needs no server: tests and
 * `gamedata simulate truth` build a world directly.
 */
import { withShapeChanges, type ShapeChange } from './records/shape-changes.js';
import { ConfigError } from '../../src/foundation/errors/index.js';
import { generateWorld } from './generation/generate-world.js';
import type { TransactionColumns } from './generation/generate-transactions.js';
import { createLiveMode, type LiveRates } from './generation/live-mode.js';
import { SCALES, type Scale, type ScaleSpec } from './generation/scales.js';
import type { OrderedTable } from './ordered-table.js';
import { createArticleBuilder } from './records/build-article.js';
import { createCountryBuilder } from './records/build-country.js';
import { createDonationBuilder } from './records/build-donation.js';
import { createElectionBuilder } from './records/build-election.js';
import { createEquipmentBuilder } from './records/build-equipment.js';
import { createPartyBuilder } from './records/build-party.js';
import { createTransactionBuilder } from './records/build-transaction.js';
import { createUserBuilder } from './records/build-user.js';
import type { ApiRecord, RecordBuilder, RecordVariant } from './records/record-variant.js';
import { createFixedRecords, type FixedRecords } from './fixed-records.js';
import { ARTICLE_CATEGORIES, LANGUAGES, TRANSACTION_TYPES, type TransactionType } from './vocab.js';

export { SCALES } from './generation/scales.js';
export type { Scale, ScaleSpec } from './generation/scales.js';
export type { LiveRates } from './generation/live-mode.js';
export type { TransactionColumns } from './generation/generate-transactions.js';
export type { RecordVariant } from './records/record-variant.js';

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
  /**
   * Share of each transaction type's rows served WITHOUT `countryId` (and so outside a per-country filter), e.g.
   * `{ wage: 0.2 }`: a world where walks partitioned by country miss some rows, for the partition proof's tests
   * (issue 23). Chosen per row identity, so the same rows on every read and in live arrivals. @default {}
   */
  transactionsWithoutCountry?: Readonly<Partial<Record<TransactionType, number>>>;
  /**
   * Shape changes from a point in (sort) time on, per resource: a new field, or a field served with another type
   * (issue 35: drift arriving mid-run). @default {}
   */
  shapeChanges?: Readonly<Partial<Record<SimulatorResource, readonly ShapeChange[]>>>;
}

export const DEFAULT_WORLD_OPTIONS = {
  seed: 1,
  scale: 'small',
  now: '2026-11-01T00:00:00.000Z',
  extraFields: true,
  transactionsWithoutCountry: {},
  shapeChanges: {},
} as const satisfies Required<WorldOptions>;

type Rec = ApiRecord;

/** One resource's rows and how to turn a row into the record the API returns. */
export interface ResourceStore {
  readonly resource: SimulatorResource;
  readonly table: OrderedTable;
  build: RecordBuilder;
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
  /** Records the upstream has fixed: served clean whatever the record faults pick (`fixed-records.ts`). */
  readonly fixes: FixedRecords;
  /** Every record of a resource, newest first by `(sortTime, _id)`, as the API returns it (current versions). */
  truth(resource: SimulatorResource): Rec[];
  /** {@link truth}'s records one at a time, built as they are read (scale large: 10 M transactions never all held). */
  eachTruth(resource: SimulatorResource): Iterable<Rec>;
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

function resolveWorldOptions(options: WorldOptions): {
  seed: number;
  scale: Scale;
  startMs: number;
  extraFields: boolean;
  withoutCountry: Readonly<Partial<Record<TransactionType, number>>>;
  shapeChanges: Readonly<Partial<Record<SimulatorResource, readonly ShapeChange[]>>>;
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
  const withoutCountry =
    options.transactionsWithoutCountry ?? DEFAULT_WORLD_OPTIONS.transactionsWithoutCountry;
  for (const [type, share] of Object.entries(withoutCountry)) {
    if (!(TRANSACTION_TYPES as readonly string[]).includes(type))
      throw new ConfigError(
        `option transactionsWithoutCountry: ${JSON.stringify(type)} must be a transaction type (${TRANSACTION_TYPES.join(', ')})`,
      );
    if (typeof share !== 'number' || !(share >= 0 && share <= 1))
      throw new ConfigError(
        `option transactionsWithoutCountry.${type} must be a share between 0 and 1, got ${JSON.stringify(share)}`,
      );
  }
  const shapeChanges: Readonly<Partial<Record<SimulatorResource, readonly ShapeChange[]>>> =
    options.shapeChanges ?? DEFAULT_WORLD_OPTIONS.shapeChanges;
  for (const [resource, changes] of Object.entries(shapeChanges)) {
    if (!(SIMULATOR_RESOURCES as readonly string[]).includes(resource))
      throw new ConfigError(
        `option shapeChanges: ${JSON.stringify(resource)} must be a resource (${SIMULATOR_RESOURCES.join(', ')})`,
      );
    for (const c of changes ?? []) {
      if (!Number.isFinite(Date.parse(c.from)))
        throw new ConfigError(
          `option shapeChanges.${resource}[].from must be an ISO date-time, got ${JSON.stringify(c.from)}`,
        );
    }
  }
  return {
    seed,
    scale,
    startMs,
    extraFields: options.extraFields ?? DEFAULT_WORLD_OPTIONS.extraFields,
    withoutCountry,
    shapeChanges,
  };
}

/** Creates the world. Small builds in well under a second; medium in a few seconds. */
export function createWorld(options: WorldOptions = {}): World {
  const { seed, scale, startMs, extraFields, withoutCountry, shapeChanges } = resolveWorldOptions(options);
  const spec = SCALES[scale];
  const data = generateWorld(seed, spec, startMs, extraFields, withoutCountry);
  const { population, articles, donations, versions } = data;
  const live = createLiveMode(data);
  const gear = createEquipmentBuilder(seed, startMs, population.countryIds);

  const stores: Record<SimulatorResource, ResourceStore> = {
    users: { resource: 'users', table: population.users, build: createUserBuilder(data, gear) },
    parties: { resource: 'parties', table: population.parties, build: createPartyBuilder(data) },
    articles: { resource: 'articles', table: articles.table, build: createArticleBuilder(data) },
    elections: { resource: 'elections', table: data.elections.table, build: createElectionBuilder(data) },
    donations: { resource: 'donations', table: donations.table, build: createDonationBuilder(data) },
    transactions: {
      resource: 'transactions',
      table: data.transactions.table,
      build: createTransactionBuilder(data, gear),
    },
    countries: { resource: 'countries', table: population.countries, build: createCountryBuilder(data) },
  };
  for (const store of Object.values(stores)) {
    const changes = shapeChanges[store.resource] ?? [];
    const table = store.table;
    store.build = withShapeChanges(store.build, (row) => table.time(row), changes);
  }

  /** Every record of `resource` newest first, each built as it is read. */
  function* eachTruth(resource: SimulatorResource): Iterable<Rec> {
    const store = stores[resource];
    const variant: RecordVariant = resource === 'articles' ? 'feed' : 'full';
    for (let row = store.table.length - 1; row >= 0; row--) yield store.build(row, variant);
  }

  return {
    seed,
    scale,
    spec,
    startMs,
    get nowMs() {
      return live.nowMs;
    },
    extraFields,
    countryIds: population.countryIds,
    muIds: population.muIds,
    tx: data.transactions.tx,
    store: (resource) => stores[resource],
    fixes: createFixedRecords(),
    truth: (resource) => [...eachTruth(resource)],
    eachTruth,
    userId: population.userId,
    equipmentOf: (userRow) => gear.worn(population.users.ident(userRow), population.users.time(userRow)),
    articleMeta(row) {
      const ident = articles.table.ident(row);
      const author = articles.author.get(ident);
      return {
        author,
        country: population.userCountry.get(author),
        category: ARTICLE_CATEGORIES[articles.category.get(ident)] as string,
        language: LANGUAGES[articles.language.get(ident)] as string,
        score: articles.score.get(ident) + (versions.articles.get(ident)?.v ?? 0),
      };
    },
    donationMeta(row) {
      const ident = donations.table.ident(row);
      return {
        donor: donations.donor.get(ident),
        kind: donations.kind.get(ident),
        target: donations.target.get(ident),
      };
    },
    countryIndex: (id) => population.countryIndexById.get(id.toLowerCase()),
    muIndex: (id) => population.muIndexById.get(id.toLowerCase()),
    countView(articleRow) {
      const ident = articles.table.ident(articleRow);
      data.articleViews.set(ident, (data.articleViews.get(ident) ?? 0) + 1);
    },
    advanceTo: (target, rates) => live.advanceTo(target, rates),
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
