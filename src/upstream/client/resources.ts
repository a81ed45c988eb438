/**
 * The resources of the spec (§4) over the client core: article, transaction, party, user, election, donation,
 * plus country.getAllCountries and inventory.fetchCurrentEquipment. snake_case methods are camelCase; keyword
 * arguments are one options object; spec defaults are in {@link DEFAULT_PAGE_LIMITS} and {@link DEFAULT_COLLECT_OPTIONS}.
 */
import { AbortedError, ConfigError, GamedataError, NotFoundError } from '../../foundation/errors/index.js';
import { setMaxListeners } from 'node:events';
import pLimit from 'p-limit';
import { models } from '../../foundation/models/index.js';
import type {
  ModelDef,
  Article,
  ArticleLite,
  Country,
  CursorPage,
  Donation,
  DonationTotals,
  Election,
  Equipment,
  Party,
  Transaction,
  User,
  UserLite,
} from '../../foundation/models/index.js';
import type { CollectOptions } from './collect.js';
import { collectSlices, iterateSlices } from './collect.js';
import type { ClientCore, InvalidItemMode } from './core.js';
import type { Listing, ListingFilters } from './listing.js';
import { createListing } from './listing.js';
import { paginateItems } from './paginate.js';
import { assertRecordLike } from './internal/assert.js';

/** Spec page sizes: 10 for article, transaction and user listings; 20 for party, election and donation. */
export const DEFAULT_PAGE_LIMITS = {
  article: 10,
  transaction: 10,
  user: 10,
  party: 20,
  election: 20,
  donation: 20,
} as const;
/** Spec `collect_all` defaults; `user.collectByCountry` slices 30 days. Open-ended listings start their slice grid at 2025-01-01. */
export const DEFAULT_RESOURCE_COLLECT = {
  limit: 100,
  timeSliceDays: 0.2,
  concurrency: 500,
  userTimeSliceDays: 30,
} as const;

export interface PageOptions {
  /** Page size (1..100). Default per resource, see {@link DEFAULT_PAGE_LIMITS}. */
  limit?: number | undefined;
  /** A `nextCursor` of an earlier page. */
  cursor?: string | null | undefined;
  signal?: AbortSignal | undefined;
  /** @default 'throw' */
  onInvalidItem?: InvalidItemMode | undefined;
}

export interface AutoItemsOptions {
  /** Return an AsyncIterable of items across pages instead of one page. */
  autoItems: true;
  /** Most pages fetched. @default Infinity */
  maxPages?: number | undefined;
  /** Stop once the cursor's date is older than this. */
  cursorEnd?: string | Date | number | null | undefined;
}

export interface OnePageOptions {
  autoItems?: false | undefined;
}

export interface DirectionOption {
  /** `forward` (default) or `backward` (party, election and donation listings). */
  direction?: 'forward' | 'backward' | undefined;
}

/**
 * A listing's page reader: one page, or with `autoItems` an AsyncIterable of items across pages. `A` are the
 * positional arguments before the options (article's `type`, user's `countryId`).
 */
export interface PageReader<T, F, A extends unknown[] = []> {
  (...args: [...A, F & PageOptions & AutoItemsOptions]): AsyncIterable<T>;
  (...args: [...A, (F & PageOptions & OnePageOptions)?]): Promise<CursorPage<T>>;
}

/** Options of a `collectAll` / `iterateAll` (see {@link CollectOptions}). */
export type SliceOptions = Omit<CollectOptions, 'gridFloor'>;

export interface ArticleFilters {
  userId?: string | undefined;
  categories?: string[] | undefined;
  languages?: string[] | undefined;
  positiveScoreOnly?: boolean | undefined;
}
export type ArticleType = 'daily' | 'weekly' | 'top' | 'my' | 'subscriptions' | 'last' | (string & {});

export interface TransactionFilters {
  userId?: string | undefined;
  muId?: string | undefined;
  countryId?: string | undefined;
  partyId?: string | undefined;
  itemCode?: string | undefined;
  transactionType?: string | string[] | undefined;
}
export interface CountryFilter {
  countryId?: string | undefined;
}
export interface DonationTarget {
  muId?: string | undefined;
  countryId?: string | undefined;
  partyId?: string | undefined;
}

export interface ArticleResource {
  /** The full article, with its body (cached). May count a view upstream: bulk ingestion uses the feed instead. */
  get(articleId: string, options?: { signal?: AbortSignal }): Promise<Article>;
  /** Metadata only, without counting a view (cached). */
  getLite(articleId: string, options?: { signal?: AbortSignal }): Promise<ArticleLite>;
  getPaginated(
    type: ArticleType,
    options: ArticleFilters & PageOptions & AutoItemsOptions,
  ): AsyncIterable<ArticleLite>;
  getPaginated(
    type: ArticleType,
    options?: ArticleFilters & PageOptions & OnePageOptions,
  ): Promise<CursorPage<ArticleLite>>;
  /** Every article of the feed (`type` default `last`), time-sliced, newest first by publishedAt. */
  collectAll(options?: ArticleFilters & { type?: ArticleType } & SliceOptions): Promise<ArticleLite[]>;
  iterateAll(options?: ArticleFilters & { type?: ArticleType } & SliceOptions): AsyncIterable<ArticleLite>;
  invalidateCache(): Promise<void>;
}

export interface TransactionResource {
  getPaginated(options: TransactionFilters & PageOptions & AutoItemsOptions): AsyncIterable<Transaction>;
  getPaginated(options?: TransactionFilters & PageOptions & OnePageOptions): Promise<CursorPage<Transaction>>;
  /** Every transaction back to `oldestDate` (required), time-sliced. The unfiltered feed reaches back 72 h only. */
  collectAll(
    options: TransactionFilters & SliceOptions & { oldestDate: Date | string | number },
  ): Promise<Transaction[]>;
  iterateAll(
    options: TransactionFilters & SliceOptions & { oldestDate: Date | string | number },
  ): AsyncIterable<Transaction>;
  invalidateCache(): Promise<void>;
}

export interface PartyResource {
  get(partyId: string, options?: { signal?: AbortSignal }): Promise<Party>;
  /** Every party of a country (all pages). */
  getByCountry(countryId: string, options?: { signal?: AbortSignal }): Promise<Party[]>;
  getPaginated(
    options: CountryFilter & DirectionOption & PageOptions & AutoItemsOptions,
  ): AsyncIterable<Party>;
  getPaginated(
    options?: CountryFilter & DirectionOption & PageOptions & OnePageOptions,
  ): Promise<CursorPage<Party>>;
  collectAll(options?: CountryFilter & SliceOptions): Promise<Party[]>;
  iterateAll(options?: CountryFilter & SliceOptions): AsyncIterable<Party>;
  invalidateCache(): Promise<void>;
}

export interface UserResource {
  getById(userId: string, options?: { signal?: AbortSignal }): Promise<User>;
  /** @deprecated Use {@link UserResource.getById} (spec §9: `user.getUserLite` is deprecated). */
  getLite(userId: string, options?: { signal?: AbortSignal }): Promise<UserLite>;
  getByCountry(countryId: string, options: PageOptions & AutoItemsOptions): AsyncIterable<UserLite>;
  getByCountry(countryId: string, options?: PageOptions & OnePageOptions): Promise<CursorPage<UserLite>>;
  /** Every user of a country (all pages, 100 per page). Items may be thin (`_id`, `createdAt`). */
  getUsersByCountry(countryId: string, options?: { signal?: AbortSignal }): Promise<UserLite[]>;
  /** Users by id through the auto-batcher, aligned with `userIds`; `null` for ids that do not exist (404). */
  getMany(
    userIds: readonly string[],
    options?: { concurrency?: number; signal?: AbortSignal },
  ): Promise<(User | null)[]>;
  /** Every user of one country, time-sliced (30-day slices by default). */
  collectByCountry(countryId: string, options?: SliceOptions): Promise<UserLite[]>;
  iterateByCountry(countryId: string, options?: SliceOptions): AsyncIterable<UserLite>;
  /** Every user of every country: countries from `country.getAllCountries`, then all countries concurrently. */
  collectAll(options?: SliceOptions): Promise<UserLite[]>;
  iterateAll(options?: SliceOptions): AsyncIterable<UserLite>;
  invalidateCache(): Promise<void>;
}

export interface ElectionResource {
  getPaginated(
    options: CountryFilter & DirectionOption & PageOptions & AutoItemsOptions,
  ): AsyncIterable<Election>;
  getPaginated(
    options?: CountryFilter & DirectionOption & PageOptions & OnePageOptions,
  ): Promise<CursorPage<Election>>;
  getByCountry(countryId: string, options?: { signal?: AbortSignal }): Promise<Election[]>;
  collectAll(options?: CountryFilter & SliceOptions): Promise<Election[]>;
  iterateAll(options?: CountryFilter & SliceOptions): AsyncIterable<Election>;
  invalidateCache(): Promise<void>;
}

export interface DonationResource {
  getPaginated(
    options: DonationTarget & DirectionOption & PageOptions & AutoItemsOptions,
  ): AsyncIterable<Donation>;
  getPaginated(
    options?: DonationTarget & DirectionOption & PageOptions & OnePageOptions,
  ): Promise<CursorPage<Donation>>;
  /** Total amount and donor count of a target (cached). */
  getTotals(options?: DonationTarget & { signal?: AbortSignal }): Promise<DonationTotals>;
  collectAll(options?: DonationTarget & SliceOptions): Promise<Donation[]>;
  iterateAll(options?: DonationTarget & SliceOptions): AsyncIterable<Donation>;
  invalidateCache(): Promise<void>;
}

export interface CountryResource {
  /** Every country (reference data, cached for an hour), normalised to a list with `_id` set. */
  getAllCountries(options?: { signal?: AbortSignal }): Promise<Country[]>;
  invalidateCache(): Promise<void>;
}

export interface InventoryResource {
  /** A user's equipped items, flattened from the slot-keyed object into a list with `slot` set (cached briefly). */
  fetchCurrentEquipment(userId: string, options?: { signal?: AbortSignal }): Promise<Equipment[]>;
  invalidateCache(): Promise<void>;
}

export interface Resources {
  article: ArticleResource;
  transaction: TransactionResource;
  party: PartyResource;
  user: UserResource;
  election: ElectionResource;
  donation: DonationResource;
  country: CountryResource;
  inventory: InventoryResource;
}

export interface ResourceDeps {
  core: ClientCore;
  read: <T>(
    procedure: string,
    input: Record<string, unknown>,
    model: ModelDef | undefined,
    options?: { signal?: AbortSignal | undefined },
  ) => Promise<T>;
  invalidateCache: () => Promise<void>;
}

type AnyPageOptions = PageOptions &
  Partial<Omit<AutoItemsOptions, 'autoItems'>> & {
    autoItems?: boolean | undefined;
    direction?: string | undefined;
  };

const SLICE_KEYS = [
  'oldestDate',
  'until',
  'timeSliceDays',
  'concurrency',
  'limit',
  'signal',
  'onInvalidItem',
  'splitDense',
  'splitPages',
  'geometricAbove',
  'plan',
  'firstRoundSlices',
  'highWaterItems',
  'now',
] as const;
const PAGE_KEYS = [
  'limit',
  'cursor',
  'signal',
  'onInvalidItem',
  'autoItems',
  'maxPages',
  'cursorEnd',
  'direction',
] as const;

/** Splits an options object into wire filters and the rest. */
function filtersOf(options: object, nonFilters: readonly string[]): ListingFilters {
  const out: Record<string, ListingFilters[string]> = {};
  for (const [k, v] of Object.entries(options))
    if (!nonFilters.includes(k) && v !== undefined) out[k] = v as ListingFilters[string];
  return out;
}

function sliceOptions(options: SliceOptions, defaults: Partial<SliceOptions>): CollectOptions {
  const out: Record<string, unknown> = { ...defaults };
  for (const k of SLICE_KEYS)
    if ((options as Record<string, unknown>)[k] !== undefined)
      out[k] = (options as Record<string, unknown>)[k];
  return out;
}

/** Normalises `country.getAllCountries` (a list, `{items}`, or an object keyed by id) to a list with `_id`. */
export function normaliseCountries(raw: unknown): Country[] {
  const list = Array.isArray(raw)
    ? raw
    : typeof raw === 'object' && raw !== null && Array.isArray((raw as Record<string, unknown>)['items'])
      ? ((raw as Record<string, unknown>)['items'] as unknown[])
      : typeof raw === 'object' && raw !== null
        ? Object.entries(raw as Record<string, unknown>).map(([id, v]): Record<string, unknown> =>
            typeof v === 'object' && v !== null
              ? { _id: id, ...(v as Record<string, unknown>) }
              : { _id: id, name: v },
          )
        : undefined;
  if (!list) throw new ConfigError(`country.getAllCountries: unexpected answer ${typeof raw}`);
  list.forEach((c, i) => assertRecordLike(models.Country, c, 'country.getAllCountries', `[${i}]`));
  return list as Country[];
}

/** Flattens `inventory.fetchCurrentEquipment` (slot-keyed object, list, `{items}`/`{data}`, slot -> item code). */
export function flattenEquipment(raw: unknown): Equipment[] {
  let out: Record<string, unknown>[];
  if (Array.isArray(raw)) out = raw as Record<string, unknown>[];
  else if (typeof raw !== 'object' || raw === null) out = [];
  else {
    const obj = raw as Record<string, unknown>;
    const inner = obj['items'] ?? obj['data'];
    if (Array.isArray(inner)) out = inner as Record<string, unknown>[];
    else if ('itemCode' in obj || 'itemId' in obj || 'code' in obj) out = [obj];
    else
      out = Object.entries(obj).flatMap(([slot, v]) =>
        v === null || v === undefined
          ? []
          : typeof v === 'string'
            ? [{ slot, itemCode: v }]
            : typeof v === 'object'
              ? [{ ...v, slot: (v as Record<string, unknown>)['slot'] ?? slot }]
              : [],
      );
  }
  out.forEach((e, i) => assertRecordLike(models.Equipment, e, 'inventory.fetchCurrentEquipment', `[${i}]`));
  return out;
}

/** A listing's resource name, as `createListing` takes it. */
type ListingResource = Parameters<typeof createListing>[0];

/** One page of a listing, or with `autoItems` every item across pages. */
function paginate<T>(
  core: ClientCore,
  resource: ListingResource,
  filters: ListingFilters,
  options: AnyPageOptions,
  defaultLimit: number,
): AsyncIterable<T> | Promise<CursorPage<T>> {
  const listing = createListing(resource, filters);
  const limit = options.limit ?? defaultLimit;
  if (options.autoItems) {
    return paginateItems<T>(core, listing, {
      limit,
      cursor: options.cursor,
      direction: options.direction,
      maxPages: options.maxPages,
      cursorEnd: options.cursorEnd,
      signal: options.signal,
      onInvalidItem: options.onInvalidItem,
    });
  }
  return core.fetchPage<T>(
    listing,
    { limit, cursor: options.cursor ?? undefined, direction: options.direction },
    { signal: options.signal, onInvalidItem: options.onInvalidItem },
  );
}

/**
 * A listing's page reader with its resource's overloads (one page, or with `autoItems` every item across pages):
 * `A` are the positional arguments before the options (`type`, `countryId`), `filters` turns them and the options
 * into wire filters. The one cast of the overloads lives here.
 */
function pageReaderOf<T, F, A extends unknown[]>(
  core: ClientCore,
  resource: ListingResource,
  defaultLimit: number,
  positional: A['length'],
  filters: (args: A, options: F & AnyPageOptions) => ListingFilters,
): PageReader<T, F, A> {
  const read = (...args: unknown[]): AsyncIterable<T> | Promise<CursorPage<T>> => {
    const options = (args[positional] ?? {}) as F & AnyPageOptions;
    return paginate<T>(
      core,
      resource,
      filters(args.slice(0, positional) as A, options),
      options,
      defaultLimit,
    );
  };
  return read as unknown as PageReader<T, F, A>;
}

/**
 * The `collectAll` / `iterateAll` pair of a listing: one listing of `resource`, filtered by the call's
 * non-slice options. `check` runs first (synchronously, as the caller's own validation).
 */
function slicedOf<T, O extends SliceOptions>(
  core: ClientCore,
  resource: ListingResource,
  check: (options: O) => void = () => undefined,
): { collectAll: (options?: O) => Promise<T[]>; iterateAll: (options?: O) => AsyncIterable<T> } {
  const listings = (o: O): Listing[] => [createListing(resource, filtersOf(o, SLICE_KEYS))];
  return {
    collectAll: (o = {} as O) => {
      check(o);
      return collectSlices<T>(core, listings(o), sliceOptions(o, {}));
    },
    iterateAll: (o = {} as O) => {
      check(o);
      return iterateSlices<T>(core, listings(o), sliceOptions(o, {}));
    },
  };
}

/** Every item of an async iterable, in order. */
async function all<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

/** Every item of a country's listing (all pages, 100 per page). */
function everyItemOfCountry<T>(
  core: ClientCore,
  resource: ListingResource,
  countryId: string,
  signal: AbortSignal | undefined,
): Promise<T[]> {
  return all(
    paginate<T>(
      core,
      resource,
      { countryId },
      { autoItems: true, limit: 100, signal },
      100,
    ) as AsyncIterable<T>,
  );
}

function articleResource({ core, read, invalidateCache }: ResourceDeps): ArticleResource {
  return {
    get: (articleId, o = {}) => read<Article>('article.getArticleById', { articleId }, models.Article, o),
    getLite: (articleId, o = {}) =>
      read<ArticleLite>('article.getArticleLiteById', { articleId }, models.ArticleLite, o),
    getPaginated: pageReaderOf<ArticleLite, ArticleFilters, [ArticleType]>(
      core,
      'articles',
      DEFAULT_PAGE_LIMITS.article,
      1,
      ([type], o) => ({ ...filtersOf(o, PAGE_KEYS), type }),
    ),
    ...slicedOf<ArticleLite, ArticleFilters & { type?: ArticleType } & SliceOptions>(core, 'articles'),
    invalidateCache,
  };
}

function requireOldest(o: { oldestDate?: unknown } = {}): void {
  if (o.oldestDate === undefined || o.oldestDate === null)
    throw new ConfigError(
      'transaction.collectAll: oldestDate is required (the unfiltered feed reaches back 72 h only)',
      ['oldestDate'],
    );
}

function transactionResource({ core, invalidateCache }: ResourceDeps): TransactionResource {
  return {
    getPaginated: pageReaderOf<Transaction, TransactionFilters, []>(
      core,
      'transactions',
      DEFAULT_PAGE_LIMITS.transaction,
      0,
      (_, o) => filtersOf(o, PAGE_KEYS),
    ),
    ...slicedOf<Transaction, TransactionFilters & SliceOptions>(core, 'transactions', requireOldest),
    invalidateCache,
  };
}

function partyResource({ core, read, invalidateCache }: ResourceDeps): PartyResource {
  return {
    get: (partyId, o = {}) => read<Party>('party.getById', { partyId }, models.Party, o),
    getByCountry: (countryId, o = {}) => everyItemOfCountry<Party>(core, 'parties', countryId, o.signal),
    getPaginated: pageReaderOf<Party, CountryFilter, []>(
      core,
      'parties',
      DEFAULT_PAGE_LIMITS.party,
      0,
      (_, o) => filtersOf(o, PAGE_KEYS),
    ),
    ...slicedOf<Party, CountryFilter & SliceOptions>(core, 'parties'),
    invalidateCache,
  };
}

function countryResource({ read, invalidateCache }: ResourceDeps): CountryResource {
  return {
    getAllCountries: async (o = {}) =>
      normaliseCountries(await read<unknown>('country.getAllCountries', {}, undefined, o)),
    invalidateCache,
  };
}

/**
 * Users by id, `concurrency` at once, aligned with `userIds`; `null` for ids that do not exist. One failure (other
 * than not-found) fails the call and cancels the rest.
 */
async function getUsersById(
  getById: (userId: string, signal: AbortSignal) => Promise<User>,
  userIds: readonly string[],
  o: { concurrency?: number; signal?: AbortSignal },
): Promise<(User | null)[]> {
  const concurrency = o.concurrency ?? DEFAULT_RESOURCE_COLLECT.concurrency;
  if (!Number.isInteger(concurrency) || concurrency < 1)
    throw new ConfigError(`concurrency must be an integer >= 1, got ${concurrency}`, ['concurrency']);
  const limit = pLimit(concurrency);
  const internal = new AbortController();
  const signal = o.signal ? AbortSignal.any([o.signal, internal.signal]) : internal.signal;
  setMaxListeners(0, signal);
  try {
    return await Promise.all(
      userIds.map((id) =>
        limit(async () => {
          try {
            return await getById(id, signal);
          } catch (error) {
            if (error instanceof NotFoundError) return null;
            if (!internal.signal.aborted) internal.abort(error);
            throw error;
          }
        }),
      ),
    );
  } catch (error) {
    // Report the first real failure, not the cancellations it caused.
    const reason: unknown = internal.signal.reason;
    throw error instanceof AbortedError && reason instanceof GamedataError && !o.signal?.aborted
      ? reason
      : error;
  }
}

function userResource(deps: ResourceDeps, country: CountryResource): UserResource {
  const { core, read, invalidateCache } = deps;
  const countryListings = async (signal?: AbortSignal): Promise<Listing[]> => {
    const countries = await country.getAllCountries(signal ? { signal } : {});
    return countries.map((c) => createListing('users', { countryId: c._id }));
  };
  const userDefaults = { timeSliceDays: DEFAULT_RESOURCE_COLLECT.userTimeSliceDays };
  const user: UserResource = {
    getById: (userId, o = {}) => read<User>('user.getUserById', { userId }, models.User, o),
    getLite: (userId, o = {}) => read<UserLite>('user.getUserLite', { userId }, models.UserLite, o),
    getByCountry: pageReaderOf<UserLite, object, [string]>(
      core,
      'users',
      DEFAULT_PAGE_LIMITS.user,
      1,
      ([countryId]) => ({
        countryId,
      }),
    ),
    getUsersByCountry: (countryId, o = {}) =>
      everyItemOfCountry<UserLite>(core, 'users', countryId, o.signal),
    getMany: (userIds, o = {}) => getUsersById((id, signal) => user.getById(id, { signal }), userIds, o),
    collectByCountry: (countryId, o = {}) =>
      collectSlices<UserLite>(core, [createListing('users', { countryId })], sliceOptions(o, userDefaults)),
    iterateByCountry: (countryId, o = {}) =>
      iterateSlices<UserLite>(core, [createListing('users', { countryId })], sliceOptions(o, userDefaults)),
    async collectAll(o = {}) {
      const items = await collectSlices<UserLite>(
        core,
        await countryListings(o.signal),
        sliceOptions(o, userDefaults),
      );
      // Newest first across countries.
      return items.sort((a, b) => compareNewestFirst(a.createdAt, a._id, b.createdAt, b._id));
    },
    iterateAll(o = {}) {
      return (async function* () {
        yield* iterateSlices<UserLite>(core, await countryListings(o.signal), sliceOptions(o, userDefaults));
      })();
    },
    invalidateCache,
  };
  return user;
}

function electionResource({ core, invalidateCache }: ResourceDeps): ElectionResource {
  return {
    getPaginated: pageReaderOf<Election, CountryFilter, []>(
      core,
      'elections',
      DEFAULT_PAGE_LIMITS.election,
      0,
      (_, o) => filtersOf(o, PAGE_KEYS),
    ),
    getByCountry: (countryId, o = {}) => everyItemOfCountry<Election>(core, 'elections', countryId, o.signal),
    ...slicedOf<Election, CountryFilter & SliceOptions>(core, 'elections'),
    invalidateCache,
  };
}

function donationResource({ core, read, invalidateCache }: ResourceDeps): DonationResource {
  return {
    getPaginated: pageReaderOf<Donation, DonationTarget, []>(
      core,
      'donations',
      DEFAULT_PAGE_LIMITS.donation,
      0,
      (_, o) => filtersOf(o, PAGE_KEYS),
    ),
    getTotals: (o = {}) => {
      const input: Record<string, unknown> = {};
      for (const k of ['muId', 'countryId', 'partyId'] as const) if (o[k] !== undefined) input[k] = o[k];
      return read<DonationTotals>('donation.getTotalDonations', input, models.DonationTotals, o);
    },
    ...slicedOf<Donation, DonationTarget & SliceOptions>(core, 'donations'),
    invalidateCache,
  };
}

function inventoryResource({ read, invalidateCache }: ResourceDeps): InventoryResource {
  return {
    fetchCurrentEquipment: async (userId, o = {}) =>
      flattenEquipment(await read<unknown>('inventory.fetchCurrentEquipment', { userId }, undefined, o)),
    invalidateCache,
  };
}

export function createResources(deps: ResourceDeps): Resources {
  const country = countryResource(deps);
  return {
    article: articleResource(deps),
    transaction: transactionResource(deps),
    party: partyResource(deps),
    user: userResource(deps, country),
    election: electionResource(deps),
    donation: donationResource(deps),
    country,
    inventory: inventoryResource(deps),
  };
}

function compareNewestFirst(at: unknown, aid: string, bt: unknown, bid: string): number {
  const ta = typeof at === 'string' ? Date.parse(at) : NaN;
  const tb = typeof bt === 'string' ? Date.parse(bt) : NaN;
  if (ta !== tb && !(Number.isNaN(ta) && Number.isNaN(tb)))
    return (Number.isNaN(tb) ? -Infinity : tb) - (Number.isNaN(ta) ? -Infinity : ta) || 0;
  return aid < bid ? 1 : aid > bid ? -1 : 0;
}
