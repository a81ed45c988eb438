/**
 * What every listing procedure shares: cursor parsing, one page of rows in a view (cursor, limit, time floor,
 * predicate), malformed-record faults on served records, the cache of immutable bodies, id lookups and the
 * simulated feed latency.
 */
import { TRPCError } from '@trpc/server';
import { LRUCache } from 'lru-cache';
import { decodeCursor, encodeCursorV1, encodeCursorV2, type CursorBound } from '../cursor.js';
import { badItem, badItemKind, corruptRecord, malformedKind, servedShort } from '../faults.js';
import { indexView, listRows, tableView, type RowView } from '../ordered-table.js';
import { createBadPages, type BadPageKind, type BadPages } from './bad-pages.js';
import type { RuntimeSettings } from '../options.js';
import type { ApiRecord, RecordVariant } from '../records/record-variant.js';
import type { SimulatorResource, World } from '../world.js';
import type { SimContext } from './procedure.js';

export const HOUR = 3_600_000;

export interface Page {
  items: ApiRecord[];
  nextCursor?: string;
  hasMore?: boolean;
}

export interface ListSpec {
  resource: SimulatorResource;
  view: RowView;
  limit: number;
  cursor: string | null | undefined;
  minTimeMs?: number | undefined;
  predicate?: ((row: number) => boolean) | undefined;
  variant?: RecordVariant;
  settings: RuntimeSettings;
}

/** A view with no rows (a filter naming an unknown entity). */
export const emptyView: RowView = { length: 0, at: () => -1 };

/** The shortest of several candidate views (the most selective posting list). */
export const shortest = (views: RowView[]): RowView => views.reduce((a, b) => (b.length < a.length ? b : a));

export interface Paging {
  /** A record as served: possibly corrupted by the malformed-record fault. */
  serve(resource: SimulatorResource, row: number, record: ApiRecord, settings: RuntimeSettings): ApiRecord;
  /** One page of a listing, with the cursor of its last item. */
  page(spec: ListSpec): Page;
  /** A listing of a resource optionally filtered by country (parties and elections answer the same way). */
  countryFilteredPage(
    resource: 'parties' | 'elections',
    input: { countryId?: string | undefined; limit?: number | undefined; cursor?: string | null | undefined },
    ctx: SimContext,
  ): Promise<Page>;
  /** Identity of a user / party id; undefined when unknown. */
  userIdent(userId: string): number | undefined;
  partyIdent(partyId: string): number | undefined;
  /** The simulated latency of a feed read: flat when filtered, growing with depth otherwise. */
  delayFor(settings: RuntimeSettings, filtered: boolean, boundMs: number | undefined): number;
}

/**
 * The page faults on the rows of a page read (`rows` is cut or grown in place): `shortPages` (a page with rows below it
 * served cut to half: what the real service is not known to do) and issue 48's bad pages; the bad page drawn.
 */
function applyPageFaults(
  spec: ListSpec,
  table: ReturnType<World['store']>['table'],
  bound: CursorBound | undefined,
  rows: number[],
  more: boolean,
  badPages: BadPages,
): BadPageKind | undefined {
  // The `shortPages` fault: a page with rows below it served cut to half (what the real service is not known to do).
  const first = rows[0];
  const firstIdent = first === undefined ? undefined : table.ident(first);
  if (
    more &&
    rows.length > 1 &&
    first !== undefined &&
    servedShort(spec.resource, table.ident(first), spec.settings.faults.shortPages, spec.settings.faults.seed)
  )
    rows.length = Math.ceil(rows.length / 2);
  // Issue 48's bad pages, drawn per read (a retry may be answered well).
  const bad = badPages.draw(spec.settings.faults, spec.settings.cursor, more ? firstIdent : undefined);
  if (bad === 'longPages') {
    // One row more than asked for.
    const extra = listRows(table, spec.view, {
      bound,
      limit: rows.length + 1,
      minTimeMs: spec.minTimeMs,
      predicate: spec.predicate,
      mode: spec.settings.cursor,
    }).rows;
    rows.splice(0, rows.length, ...extra);
  }
  return bad;
}

export function createPaging(world: World): Paging {
  function serve(
    resource: SimulatorResource,
    row: number,
    record: ApiRecord,
    settings: RuntimeSettings,
  ): ApiRecord {
    const table = world.store(resource).table;
    // A record the upstream has fixed (`Simulator.fix`) is served as it is.
    if (world.fixes.count(resource) > 0 && world.fixes.has(resource, table.oid(row))) return record;
    const ident = table.ident(row);
    const bad = badItemKind(resource, ident, settings.faults.badItems, settings.faults.seed);
    // Served as no record at all (the `badItems` fault): what the envelope check lets through.
    if (bad !== undefined) return badItem(record, bad) as ApiRecord;
    const kind = malformedKind(resource, ident, settings.faults.malformed, settings.faults.seed);
    return kind === undefined ? record : corruptRecord(resource, record, kind);
  }

  function parseBound(text: string | null | undefined, settings: RuntimeSettings): CursorBound | undefined {
    if (text === undefined || text === null || text === '') return undefined;
    let bound: CursorBound;
    try {
      bound = decodeCursor(text);
    } catch (error) {
      throw new TRPCError({ code: 'BAD_REQUEST', message: (error as Error).message });
    }
    // Upstream answers 500 to a self-made v1 cursor since it moved to v2 (upstream-facts.md); and the old
    // service did not know v2.
    if (bound.format !== settings.cursor)
      throw new TRPCError({ code: 'INTERNAL_SERVER_ERROR', message: `Cannot read a ${bound.format} cursor` });
    return bound;
  }

  // Transactions and donations never change once written: their served bodies are cached (walks and retries
  // re-read the same pages). Served objects are only serialised, never mutated; truth() builds fresh copies.
  const immutable = new LRUCache<string, ApiRecord>({ max: 50_000 });
  function built(resource: SimulatorResource, row: number, variant: RecordVariant | undefined): ApiRecord {
    const store = world.store(resource);
    if (resource !== 'transactions' && resource !== 'donations') return store.build(row, variant);
    const key = `${resource}:${store.table.ident(row)}`;
    let record = immutable.get(key);
    if (record === undefined) {
      record = store.build(row, variant);
      immutable.set(key, record);
    }
    return record;
  }

  const badPages = createBadPages();

  function page(spec: ListSpec): Page {
    const store = world.store(spec.resource);
    const { table } = store;
    const bound = parseBound(spec.cursor, spec.settings);
    const { rows, more } = listRows(table, spec.view, {
      bound,
      limit: Math.floor(spec.limit),
      minTimeMs: spec.minTimeMs,
      predicate: spec.predicate,
      mode: spec.settings.cursor,
    });
    const first = rows[0];
    const bad = applyPageFaults(spec, table, bound, rows, more, badPages);
    const items = rows.map((row) =>
      serve(spec.resource, row, built(spec.resource, row, spec.variant), spec.settings),
    );
    const last = rows[rows.length - 1];
    const encode = spec.settings.cursor === 'v2' ? encodeCursorV2 : encodeCursorV1;
    // The next page's bound is the last item's key; an empty page echoes the cursor it was given (upstream may
    // send a cursor with an empty page: clients must stop on empty items, not on a missing cursor).
    const nextCursor = badPages.nextCursor(
      bad,
      last !== undefined ? encode(table.time(last), table.oid(last)) : (spec.cursor ?? undefined),
      spec.cursor ?? undefined,
      first === undefined ? undefined : { timeMs: table.time(first) },
    );
    const out: Page = { items: bad === 'emptyPages' ? [] : items };
    if (nextCursor !== undefined && nextCursor !== '') out.nextCursor = nextCursor;
    if (spec.settings.hasMore) out.hasMore = more;
    return out;
  }

  return {
    serve,
    page,
    async countryFilteredPage(resource, input, ctx) {
      const table = world.store(resource).table;
      let view = tableView(table);
      if (input.countryId !== undefined) {
        const c = world.countryIndex(input.countryId);
        view = c === undefined ? emptyView : indexView(table, 'country', c);
      }
      await ctx.filteredCall(ctx.settings.latency.filteredMs);
      return page({ resource, view, limit: input.limit ?? 20, cursor: input.cursor, settings: ctx.settings });
    },
    userIdent(userId) {
      const users = world.store('users').table;
      const row = users.find(userId);
      return row === undefined ? undefined : users.ident(row);
    },
    partyIdent(partyId) {
      const parties = world.store('parties').table;
      const row = parties.find(partyId);
      return row === undefined ? undefined : parties.ident(row);
    },
    delayFor(settings, filtered, boundMs) {
      const l = settings.latency;
      if (filtered) return l.filteredMs;
      // Below the feed's 72 h an empty page, priced as the window's deepest (models/call-cost.ts does the same).
      const depthHours =
        boundMs === undefined ? 0 : Math.min(72, Math.max(0, (world.nowMs - boundMs) / HOUR));
      return l.feedHeadMs + l.feedPerHourMs * depthHours;
    },
  };
}
