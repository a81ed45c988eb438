/** `transaction.getPaginatedTransactions`: the feed (72 h window unless an entity filter is set) and its filters, ANDed. */
import { TRPCError } from '@trpc/server';
import { decodeCursor } from '../cursor.js';
import { indexView, tableView, type RowView } from '../ordered-table.js';
import { ITEM_CODES, TRANSACTION_TYPES } from '../vocab.js';
import type { World } from '../world.js';
import { ROUTE_INPUTS } from './inputs.js';
import { emptyView, HOUR, shortest, type Paging } from './paging.js';
import { baseProcedure, t } from './procedure.js';

export function createTransactionRoutes(world: World, paging: Paging) {
  return t.router({
    getPaginatedTransactions: baseProcedure
      .input(ROUTE_INPUTS.transactions)
      .query(async ({ input = {}, ctx }) => {
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
          const u = paging.userIdent(input.userId);
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
          const p = paging.partyIdent(input.partyId);
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
        const cost = paging.delayFor(ctx.settings, entityFilter, boundMs);
        // Filtered pages run side by side; the unfiltered feed's are serialised per key (feed-lane.ts).
        if (entityFilter) ctx.filteredTransactionPage();
        await (entityFilter ? ctx.filteredCall(cost) : ctx.feedCall(cost));
        return paging.page({
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
}
