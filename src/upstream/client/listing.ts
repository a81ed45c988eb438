/**
 * Listing descriptors: everything the time-sliced readers need to know about one paginated feed (procedure, wire
 * filters, model, sort field). A descriptor is plain data, so the pipeline can put it in a job payload.
 */
import { ConfigError } from '../../foundation/errors/index.js';
import { models } from '../../foundation/models/index.js';
import type { ModelDef, ResourceName } from '../../foundation/models/index.js';

/** Filters as sent on the wire (the TypeScript option names are the wire names). */
export type ListingFilters = Readonly<
  Record<string, string | number | boolean | readonly string[] | undefined>
>;

export interface Listing {
  /** The pipeline resource the listing feeds (also names the Kafka topic). */
  resource: ResourceName;
  /** The tRPC procedure, e.g. `transaction.getPaginatedTransactions`. */
  procedure: string;
  /** Wire filters, without `limit` and `cursor`. */
  filters: ListingFilters;
  /** The field the feed is sorted on, newest first (with `_id` as the tie-break). */
  sortField: 'createdAt' | 'publishedAt';
}

interface ListingSpec {
  procedure: string;
  sortField: 'createdAt' | 'publishedAt';
  model: ModelDef;
  /** Filters the procedure accepts. */
  accepts: readonly string[];
  required?: readonly string[];
  defaults?: ListingFilters;
}

/** The listing of each resource. `users` walks one country (`countryId` required); `articles` defaults to `type: 'last'`. */
export const LISTING_SPECS: Readonly<Record<ResourceName, ListingSpec>> = {
  transactions: {
    procedure: 'transaction.getPaginatedTransactions',
    sortField: 'createdAt',
    model: models.Transaction,
    accepts: ['userId', 'muId', 'countryId', 'partyId', 'itemCode', 'transactionType'],
  },
  articles: {
    procedure: 'article.getArticlesPaginated',
    sortField: 'publishedAt',
    model: models.ArticleLite,
    accepts: ['type', 'userId', 'categories', 'languages', 'positiveScoreOnly'],
    required: ['type'],
    defaults: { type: 'last' },
  },
  parties: {
    procedure: 'party.getManyPaginated',
    sortField: 'createdAt',
    model: models.Party,
    accepts: ['countryId', 'direction'],
  },
  users: {
    procedure: 'user.getUsersByCountry',
    sortField: 'createdAt',
    model: models.UserLite,
    accepts: ['countryId'],
    required: ['countryId'],
  },
  elections: {
    procedure: 'election.getElections',
    sortField: 'createdAt',
    model: models.Election,
    accepts: ['countryId', 'direction'],
  },
  donations: {
    procedure: 'donation.getManyPaginated',
    sortField: 'createdAt',
    model: models.Donation,
    accepts: ['muId', 'countryId', 'partyId', 'direction'],
  },
};

/**
 * The listing descriptor of a resource with wire filters.
 * @throws ConfigError naming an unknown or missing filter.
 * @example createListing('transactions', { itemCode: 'steel' })
 */
export function createListing(resource: ResourceName, filters: ListingFilters = {}): Listing {
  const spec = LISTING_SPECS[resource];
  if (!spec) throw new ConfigError(`unknown resource ${JSON.stringify(resource)}`);
  const merged: Record<string, ListingFilters[string]> = { ...spec.defaults };
  for (const [k, v] of Object.entries(filters)) {
    if (v === undefined) continue;
    if (!spec.accepts.includes(k))
      throw new ConfigError(
        `filter ${k} is not accepted by ${spec.procedure} (accepted: ${spec.accepts.join(', ')})`,
        [k],
      );
    merged[k] = v;
  }
  for (const k of spec.required ?? [])
    if (merged[k] === undefined) throw new ConfigError(`filter ${k} is required by ${spec.procedure}`, [k]);
  return { resource, procedure: spec.procedure, filters: merged, sortField: spec.sortField };
}

/** The model the listing's items are checked against. */
export function listingModel(listing: Listing): ModelDef {
  return LISTING_SPECS[listing.resource].model;
}
