/**
 * The narrow surface the listing readers (pagination, slices, collectAll) need from a client. `createClient`
 * returns an object that has it, so `readSlice(client, ...)` works with the client itself.
 */
import type { CursorPage } from '../../foundation/models/index.js';
import type { CursorFormat } from './cursor.js';
import type { Listing } from './listing.js';

/** What to do with a listing item that does not match its model. */
export type InvalidItemMode = 'throw' | 'pass';

export interface PageRequest {
  /** Page size, 1..100. */
  limit: number;
  cursor?: string | undefined;
  /** `forward` | `backward` (party, election, donation listings only). */
  direction?: string | undefined;
}

export interface FetchPageOptions {
  signal?: AbortSignal | undefined;
  /** `throw` (default): a malformed item fails the page with a ValidationError naming its path. `pass`: malformed
   * items are returned as they came (the pipeline dead-letters them). The envelope is always checked strictly. */
  onInvalidItem?: InvalidItemMode | undefined;
}

export interface ClientCore {
  /** One page of a listing through the batcher, rate limiter and retry. */
  fetchPage<T = Record<string, unknown>>(
    listing: Listing,
    request: PageRequest,
    options?: FetchPageOptions,
  ): Promise<CursorPage<T>>;
  /** The cursor format the upstream speaks (`v2` unless the client was created for a v1 upstream). */
  readonly cursorFormat: CursorFormat;
  /**
   * Whether the upstream budget binds now (the rate limiter's or the shared budget's state: a pause runs, or less
   * than a fifth of the window's requests is left). `collectAll` in `plan: 'auto'` then plans for fewest requests
   * instead of fewest rounds. Absent: never binds.
   */
  budgetBinds?: (() => boolean) | undefined;
}
