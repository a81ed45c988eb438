/**
 * The tRPC router of the simulator: the 12 operations of the spec (§4) plus `country.getAllCountries` and
 * `inventory.fetchCurrentEquipment`, with the wire input names of wire-contract.json, validated with zod
 * (bad input -> 400 BAD_REQUEST), plain JSON (no transformer, as upstream).
 */
import { initTRPC, TRPCError } from '@trpc/server';
import { LRUCache } from 'lru-cache';
import { z } from 'zod';
import { decodeCursor, encodeCursorV1, encodeCursorV2, type CursorBound } from './cursor.js';
import { corruptRecord, malformedKind } from './faults.js';
import { indexView, listRows, tableView, type RowView } from './ordered-table.js';
import type { RuntimeSettings } from './options.js';
import { ACCEPTED_TRANSACTION_TYPES, ARTICLE_FEED_TYPES, ITEM_CODES, TRANSACTION_TYPES } from './vocab.js';
import type { RecordVariant, SimulatorResource, World } from './world.js';

/** Per-request context, made by the HTTP layer. */
export interface SimContext {
  /** `X-API-Key` header, `undefined` when absent or empty. */
  apiKey: string | undefined;
  /** Settings as they were when the request arrived. */
  settings: RuntimeSettings;
  /** Batch indexes whose call must fail with a 500 (fault injection). */
  failingSlots: ReadonlySet<number>;
  /** Counts one procedure call (stats). */
  countCall(path: string): void;
}

type Rec = Record<string, unknown>;

interface Page {
  items: Rec[];
  nextCursor?: string;
  hasMore?: boolean;
}

const HOUR = 3_600_000;
const sleep = (ms: number): Promise<void> =>
  ms > 0 ? new Promise((r) => setTimeout(r, ms)) : Promise.resolve();

// ---- input schemas (wire names from wire-contract.json) -------------------------------------------------------
// Operations documented in the service's OpenAPI declare additionalProperties:false: unknown keys are rejected.
// The other ones (party, election, donation) are only known from client code: unknown keys are tolerated.
const cursor = z.string().nullish();
const direction = z.enum(['forward', 'backward']).nullish();
const limitOf = () => z.number().int().min(1).max(100).optional();
const id = z.string().min(1);

const inputs = {
  articleById: z.strictObject({ articleId: id }),
  articlesPaginated: z.strictObject({
    type: z.enum(ARTICLE_FEED_TYPES),
    limit: z.number().min(1).max(100).optional(),
    cursor,
    userId: z.string().optional(),
    categories: z.array(z.string()).optional(),
    languages: z.array(z.string()).optional(),
    positiveScoreOnly: z.boolean().optional(),
  }),
  transactions: z
    .strictObject({
      limit: limitOf(),
      cursor,
      userId: z.string().optional(),
      muId: z.string().optional(),
      countryId: z.string().optional(),
      partyId: z.string().optional(),
      itemCode: z.string().optional(),
      transactionType: z
        .union([z.enum(ACCEPTED_TRANSACTION_TYPES), z.array(z.enum(ACCEPTED_TRANSACTION_TYPES))])
        .optional(),
    })
    .optional(),
  partyById: z.object({ partyId: id }),
  partiesPaginated: z
    .object({ countryId: z.string().optional(), limit: limitOf(), cursor, direction })
    .optional(),
  userById: z.strictObject({ userId: id }),
  userLite: z.strictObject({ userId: z.string().regex(/^[a-f\d]{24}$/) }),
  usersByCountry: z.strictObject({
    countryId: z.string().min(1),
    limit: z.number().min(1).max(100).optional(),
    cursor,
  }),
  elections: z.object({ countryId: z.string().optional(), limit: limitOf(), cursor, direction }).optional(),
  donations: z
    .object({
      muId: z.string().optional(),
      countryId: z.string().optional(),
      partyId: z.string().optional(),
      limit: limitOf(),
      cursor,
      direction,
    })
    .optional(),
  donationTotals: z
    .object({ muId: z.string().optional(), countryId: z.string().optional(), partyId: z.string().optional() })
    .optional(),
  countries: z.strictObject({}).optional(),
  equipment: z.strictObject({ userId: id }),
};

/** Builds the router over a world. `now()` is the simulated clock (live mode moves it). */
export function createSimulatorRouter(world: World) {
  // isDev false: no stack traces in error envelopes, as a production service.
  const t = initTRPC.context<SimContext>().create({ isDev: false });

  /** Stats, key check and per-slot 5xx faults, for every call. */
  const base = t.procedure.use(async (opts) => {
    opts.ctx.countCall(opts.path);
    const { apiKeys } = opts.ctx.settings;
    if (apiKeys !== undefined && opts.ctx.apiKey !== undefined && !apiKeys.includes(opts.ctx.apiKey))
      throw new TRPCError({ code: 'UNAUTHORIZED', message: 'Invalid API token' });
    if (opts.ctx.failingSlots.has(opts.batchIndex))
      throw new TRPCError({ code: 'INTERNAL_SERVER_ERROR', message: 'Internal server error' });
    if (opts.ctx.settings.latency.procedureMs > 0) await sleep(opts.ctx.settings.latency.procedureMs);
    return opts.next();
  });

  // ---- shared helpers -----------------------------------------------------------------------------------------
  const notFound = (what: string, value: string): TRPCError =>
    new TRPCError({ code: 'NOT_FOUND', message: `${what} not found: ${value}` });

  function serve(resource: SimulatorResource, row: number, record: Rec, settings: RuntimeSettings): Rec {
    const kind = malformedKind(
      resource,
      world.store(resource).table.ident(row),
      settings.faults.malformed,
      settings.faults.seed,
    );
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

  interface ListSpec {
    resource: SimulatorResource;
    view: RowView;
    limit: number;
    cursor: string | null | undefined;
    minTimeMs?: number | undefined;
    predicate?: ((row: number) => boolean) | undefined;
    variant?: RecordVariant;
    settings: RuntimeSettings;
  }

  // Transactions and donations never change once written: their served bodies are cached (walks and retries
  // re-read the same pages). Served objects are only serialised, never mutated; truth() builds fresh copies.
  const immutable = new LRUCache<string, Rec>({ max: 50_000 });
  function built(resource: SimulatorResource, row: number, variant: RecordVariant | undefined): Rec {
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
    const items = rows.map((row) =>
      serve(spec.resource, row, built(spec.resource, row, spec.variant), spec.settings),
    );
    const last = rows[rows.length - 1];
    const encode = spec.settings.cursor === 'v2' ? encodeCursorV2 : encodeCursorV1;
    // The next page's bound is the last item's key; an empty page echoes the cursor it was given (upstream may
    // send a cursor with an empty page: clients must stop on empty items, not on a missing cursor).
    const nextCursor =
      last !== undefined ? encode(table.time(last), table.oid(last)) : (spec.cursor ?? undefined);
    const out: Page = { items };
    if (nextCursor !== undefined && nextCursor !== '') out.nextCursor = nextCursor;
    if (spec.settings.hasMore) out.hasMore = more;
    return out;
  }

  const emptyView: RowView = { length: 0, at: () => -1 };

  /** A listing of a resource optionally filtered by country (parties and elections answer the same way). */
  async function countryFilteredPage(
    resource: 'parties' | 'elections',
    input: { countryId?: string | undefined; limit?: number | undefined; cursor?: string | null | undefined },
    settings: RuntimeSettings,
  ): Promise<Page> {
    const table = world.store(resource).table;
    let view = tableView(table);
    if (input.countryId !== undefined) {
      const c = world.countryIndex(input.countryId);
      view = c === undefined ? emptyView : indexView(table, 'country', c);
    }
    await sleep(settings.latency.filteredMs);
    return page({ resource, view, limit: input.limit ?? 20, cursor: input.cursor, settings });
  }
  const userIdent = (userId: string): number | undefined => {
    const users = world.store('users').table;
    const row = users.find(userId);
    return row === undefined ? undefined : users.ident(row);
  };
  const partyIdent = (partyId: string): number | undefined => {
    const parties = world.store('parties').table;
    const row = parties.find(partyId);
    return row === undefined ? undefined : parties.ident(row);
  };
  /** The shortest of several candidate views (the most selective posting list). */
  const shortest = (views: RowView[]): RowView => views.reduce((a, b) => (b.length < a.length ? b : a));
  const delayFor = (settings: RuntimeSettings, filtered: boolean, boundMs: number | undefined): number => {
    const l = settings.latency;
    if (filtered) return l.filteredMs;
    const depthHours = boundMs === undefined ? 0 : Math.max(0, (world.nowMs - boundMs) / HOUR);
    return l.feedHeadMs + l.feedPerHourMs * depthHours;
  };

  // ---- procedures ---------------------------------------------------------------------------------------------
  const article = t.router({
    getArticleById: base.input(inputs.articleById).query(({ input, ctx }) => {
      const table = world.store('articles').table;
      const row = table.find(input.articleId);
      if (row === undefined) throw notFound('Article', input.articleId);
      if (ctx.settings.countArticleViews) world.countView(row);
      return serve('articles', row, world.store('articles').build(row, 'full'), ctx.settings);
    }),
    getArticleLiteById: base.input(inputs.articleById).query(({ input, ctx }) => {
      const row = world.store('articles').table.find(input.articleId);
      if (row === undefined) throw notFound('Article', input.articleId);
      return serve('articles', row, world.store('articles').build(row, 'lite'), ctx.settings);
    }),
    getArticlesPaginated: base.input(inputs.articlesPaginated).query(async ({ input, ctx }) => {
      const table = world.store('articles').table;
      const now = world.nowMs;
      let view: RowView = tableView(table);
      let minTimeMs: number | undefined;
      let author: number | undefined;
      let country: number | undefined;
      const user = input.userId === undefined ? undefined : userIdent(input.userId);
      switch (input.type) {
        case 'daily':
          minTimeMs = now - 24 * HOUR;
          break;
        case 'weekly':
          minTimeMs = now - 7 * 24 * HOUR;
          break;
        case 'my':
          // The caller's own articles: the simulator takes the caller from userId (no sessions here).
          if (user === undefined) view = emptyView;
          break;
        case 'subscriptions':
          // The feed of the country the user follows: simulated as the user's own country.
          if (user === undefined) view = emptyView;
          else {
            const users = world.store('users').table;
            const userRow = users.rowOf(user) as number;
            country = world.countryIndex(String(world.store('users').build(userRow, 'lite')['country']));
          }
          break;
        default:
          break;
      }
      if (input.type !== 'subscriptions' && input.userId !== undefined) {
        if (user === undefined) view = emptyView;
        else author = user;
      }
      if (view !== emptyView) {
        if (author !== undefined) view = indexView(table, 'author', author);
        else if (country !== undefined) view = indexView(table, 'country', country);
      }
      const categories = input.categories === undefined ? undefined : new Set(input.categories);
      const languages = input.languages === undefined ? undefined : new Set(input.languages);
      const minScore = input.type === 'top' ? 10 : input.positiveScoreOnly === true ? 1 : undefined;
      const predicate =
        categories === undefined && languages === undefined && minScore === undefined
          ? undefined
          : (row: number): boolean => {
              const meta = world.articleMeta(row);
              return (
                (categories === undefined || categories.has(meta.category)) &&
                (languages === undefined || languages.has(meta.language)) &&
                (minScore === undefined || meta.score >= minScore)
              );
            };
      await sleep(ctx.settings.latency.filteredMs);
      return page({
        resource: 'articles',
        view,
        limit: input.limit ?? 10,
        cursor: input.cursor,
        minTimeMs,
        predicate,
        variant: 'feed',
        settings: ctx.settings,
      });
    }),
  });

  const transaction = t.router({
    getPaginatedTransactions: base.input(inputs.transactions).query(async ({ input = {}, ctx }) => {
      if (ctx.apiKey === undefined)
        throw new TRPCError({ code: 'UNAUTHORIZED', message: 'API token required' });
      const table = world.store('transactions').table;
      const { tx } = world;
      const views: RowView[] = [];
      const tests: Array<(ident: number) => boolean> = [];
      let none = false;
      let entityFilter = false;
      if (input.userId !== undefined) {
        entityFilter = true;
        const u = userIdent(input.userId);
        if (u === undefined) none = true;
        else {
          views.push(indexView(table, 'user', u));
          tests.push((i) => tx.buyer.get(i) === u || tx.seller.get(i) === u);
        }
      }
      if (input.muId !== undefined) {
        entityFilter = true;
        const m = world.muIndex(input.muId);
        if (m === undefined) none = true;
        else {
          views.push(indexView(table, 'mu', m));
          tests.push((i) => tx.mu.get(i) === m);
        }
      }
      if (input.countryId !== undefined) {
        entityFilter = true;
        const c = world.countryIndex(input.countryId);
        if (c === undefined) none = true;
        else {
          views.push(indexView(table, 'country', c));
          tests.push((i) => tx.country.get(i) === c);
        }
      }
      if (input.partyId !== undefined) {
        entityFilter = true;
        const p = partyIdent(input.partyId);
        if (p === undefined) none = true;
        else {
          views.push(indexView(table, 'party', p));
          tests.push((i) => tx.party.get(i) === p);
        }
      }
      if (input.itemCode !== undefined) {
        entityFilter = true;
        // The outer itemCode only (a case's content does not match), ANDed with the type filter.
        const code = ITEM_CODES.indexOf(input.itemCode);
        if (code < 0) none = true;
        else {
          views.push(indexView(table, 'item', code));
          tests.push((i) => tx.item.get(i) === code);
        }
      }
      if (input.transactionType !== undefined) {
        const wanted = (
          Array.isArray(input.transactionType) ? input.transactionType : [input.transactionType]
        )
          .map((type) => (TRANSACTION_TYPES as readonly string[]).indexOf(type))
          .filter((k) => k >= 0);
        if (wanted.length === 0) none = true;
        else {
          if (wanted.length === 1) views.push(indexView(table, 'type', wanted[0] as number));
          const set = new Set(wanted);
          tests.push((i) => set.has(tx.type.get(i)));
        }
      }
      const view = none ? emptyView : views.length > 0 ? shortest(views) : tableView(table);
      const predicate =
        tests.length <= 1 && views.length === tests.length
          ? undefined
          : (row: number): boolean => {
              const ident = table.ident(row);
              return tests.every((test) => test(ident));
            };
      // Only the entity filters reach the full history; the rest of the feed stops at now - 72 h.
      const minTimeMs = ctx.settings.window72h && !entityFilter ? world.nowMs - 72 * HOUR : undefined;
      let boundMs: number | undefined;
      try {
        boundMs = input.cursor ? decodeCursor(input.cursor).timeMs : undefined;
      } catch {
        boundMs = undefined;
      }
      await sleep(delayFor(ctx.settings, entityFilter, boundMs));
      return page({
        resource: 'transactions',
        view,
        limit: input.limit ?? 10,
        cursor: input.cursor,
        minTimeMs,
        predicate,
        settings: ctx.settings,
      });
    }),
  });

  const party = t.router({
    getById: base.input(inputs.partyById).query(({ input, ctx }) => {
      const row = world.store('parties').table.find(input.partyId);
      if (row === undefined) throw notFound('Party', input.partyId);
      return serve('parties', row, world.store('parties').build(row), ctx.settings);
    }),
    getManyPaginated: base
      .input(inputs.partiesPaginated)
      .query(({ input = {}, ctx }) => countryFilteredPage('parties', input, ctx.settings)),
  });

  const userRouter = t.router({
    getUserById: base.input(inputs.userById).query(({ input, ctx }) => {
      const row = world.store('users').table.find(input.userId);
      if (row === undefined) throw notFound('User', input.userId);
      return serve('users', row, world.store('users').build(row, 'full'), ctx.settings);
    }),
    getUserLite: base.input(inputs.userLite).query(({ input, ctx }) => {
      const row = world.store('users').table.find(input.userId);
      if (row === undefined) throw notFound('User', input.userId);
      return serve('users', row, world.store('users').build(row, 'lite'), ctx.settings);
    }),
    getUsersByCountry: base.input(inputs.usersByCountry).query(async ({ input, ctx }) => {
      const table = world.store('users').table;
      const c = world.countryIndex(input.countryId);
      await sleep(ctx.settings.latency.filteredMs);
      return page({
        resource: 'users',
        view: c === undefined ? emptyView : indexView(table, 'country', c),
        limit: input.limit ?? 10,
        cursor: input.cursor,
        variant: ctx.settings.thinUserListing ? 'thin' : 'lite',
        settings: ctx.settings,
      });
    }),
  });

  const election = t.router({
    getElections: base
      .input(inputs.elections)
      .query(({ input = {}, ctx }) => countryFilteredPage('elections', input, ctx.settings)),
  });

  /** Donation targets of a filter: [kind, target] pairs that must all match (AND); undefined target = unknown id. */
  function donationTargets(input: {
    muId?: string | undefined;
    countryId?: string | undefined;
    partyId?: string | undefined;
  }) {
    const wanted: Array<[number, number | undefined]> = [];
    if (input.muId !== undefined) wanted.push([0, world.muIndex(input.muId)]);
    if (input.countryId !== undefined) wanted.push([1, world.countryIndex(input.countryId)]);
    if (input.partyId !== undefined) wanted.push([2, partyIdent(input.partyId)]);
    return wanted;
  }
  const FAMILIES = ['mu', 'country', 'party'] as const;
  function donationView(input: Parameters<typeof donationTargets>[0]): {
    view: RowView;
    predicate?: (row: number) => boolean;
  } {
    const table = world.store('donations').table;
    const wanted = donationTargets(input);
    if (wanted.length === 0) return { view: tableView(table) };
    // A donation has one target: two different target filters match nothing.
    if (wanted.length > 1 || wanted.some(([, target]) => target === undefined)) return { view: emptyView };
    const [kind, target] = wanted[0] as [number, number];
    return { view: indexView(table, FAMILIES[kind] as string, target) };
  }

  const donation = t.router({
    getManyPaginated: base.input(inputs.donations).query(async ({ input = {}, ctx }) => {
      const { view } = donationView(input);
      await sleep(ctx.settings.latency.filteredMs);
      return page({
        resource: 'donations',
        view,
        limit: input.limit ?? 20,
        cursor: input.cursor,
        settings: ctx.settings,
      });
    }),
    getTotalDonations: base.input(inputs.donationTotals).query(({ input = {} }) => {
      const { view } = donationView(input);
      const store = world.store('donations');
      let totalAmount = 0;
      const donors = new Set<number>();
      for (let j = 0; j < view.length; j++) {
        const row = view.at(j);
        totalAmount += store.build(row)['amount'] as number;
        donors.add(world.donationMeta(row).donor);
      }
      return { totalAmount: Math.round(totalAmount * 100) / 100, donorCount: donors.size };
    }),
  });

  const country = t.router({
    getAllCountries: base.input(inputs.countries).query(() => world.truth('countries')),
  });

  const inventory = t.router({
    fetchCurrentEquipment: base.input(inputs.equipment).query(({ input }) => {
      const row = world.store('users').table.find(input.userId);
      if (row === undefined) throw notFound('User', input.userId);
      return world.equipmentOf(row);
    }),
  });

  return t.router({ article, transaction, party, user: userRouter, election, donation, country, inventory });
}

export type SimulatorRouter = ReturnType<typeof createSimulatorRouter>;
