/**
 * The batching client (package export `gamedata-pipeline/client`): the spec's resource layer, plus the time-slice
 * readers the pipeline builds on (`createListing`, `readSlice`, `probeSortTimes`). The slice plan and split rule
 * are the shared core in src/foundation/slicing/ (`planSliceEdges` and `TimeRange` are re-exported here).
 */
export { createClient, DEFAULT_CLIENT_OPTIONS, DEFAULT_CACHE_WINDOWS } from './create-client.js';
export type {
  Client,
  ClientOptions,
  ClientCacheOptions,
  ClientStats,
  CallOptions,
  CacheWindowsByOperation,
} from './create-client.js';
export {
  DEFAULT_PAGE_LIMITS,
  DEFAULT_RESOURCE_COLLECT,
  flattenEquipment,
  normaliseCountries,
} from './resources.js';
export type {
  Resources,
  ArticleResource,
  TransactionResource,
  PartyResource,
  UserResource,
  ElectionResource,
  DonationResource,
  CountryResource,
  InventoryResource,
  PageOptions,
  AutoItemsOptions,
  SliceOptions,
  ArticleFilters,
  ArticleType,
  TransactionFilters,
  DonationTarget,
} from './resources.js';
export {
  encodeCursorV2,
  encodeCursorV1,
  encodeCursor,
  parseCursor,
  parseCursorDate,
  formatJsDateUtc,
  ZERO_OID,
  MAX_OID,
} from './cursor.js';
export type { CursorFormat, ParsedCursor } from './cursor.js';
export { createListing, LISTING_SPECS } from './listing.js';
export type { Listing, ListingFilters } from './listing.js';
export { readSlice, probeSortTimes, sortTimeOf, DEFAULT_READ_SLICE_OPTIONS } from './read-slice.js';
export type { SlicePage, ReadSliceOptions } from './read-slice.js';
export type { TimeRange } from '../../foundation/slicing/index.js';
export { planSliceEdges } from '../../foundation/slicing/index.js';
export { collectSlices, iterateSlices, DEFAULT_COLLECT_OPTIONS } from './collect.js';
export type { CollectOptions, CollectStats } from './collect.js';
export { paginatePages, paginateItems } from './paginate.js';
export type { AutoPaginateOptions } from './paginate.js';
export { withRetry, CLIENT_RETRY_POLICY, resolveClientRetryPolicy } from './retry.js';
export { createRateLimiter, parseRetryAfter } from './rate-limiter.js';
export type { RateLimiter, RateLimiterOptions, TokenRateLimiter } from './rate-limiter.js';
export { createBatchLoader, UPSTREAM_MAX_BATCH } from './batch-loader.js';
export type { BatchLoader, BatchLoaderOptions, CallRouter, ClientBudget } from './batch-loader.js';
export type { ClientCore, InvalidItemMode, PageRequest, FetchPageOptions } from './core.js';
export type { FetchLike, ProcedureCall, SlotResult, Transport } from './transport.js';
export { MAX_EMPTY_FOLLOWS } from './page-check.js';
export type { PageEvent, PageEventKind } from './page-check.js';
export { CONNECT_FAILURE_CODES } from './connect-failure.js';
