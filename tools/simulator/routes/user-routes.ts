/** `user.*`: one user (full or lite) and users by country (lite or thin). */
import { indexView } from '../ordered-table.js';
import type { World } from '../world.js';
import { ROUTE_INPUTS } from './inputs.js';
import { emptyView, type Paging } from './paging.js';
import { baseProcedure, notFound, t } from './procedure.js';

export function createUserRoutes(world: World, paging: Paging) {
  return t.router({
    getUserById: baseProcedure.input(ROUTE_INPUTS.userById).query(({ input, ctx }) => {
      const row = world.store('users').table.find(input.userId);
      if (row === undefined) throw notFound('User', input.userId);
      return paging.serve('users', row, world.store('users').build(row, 'full'), ctx.settings);
    }),
    getUserLite: baseProcedure.input(ROUTE_INPUTS.userLite).query(({ input, ctx }) => {
      const row = world.store('users').table.find(input.userId);
      if (row === undefined) throw notFound('User', input.userId);
      return paging.serve('users', row, world.store('users').build(row, 'lite'), ctx.settings);
    }),
    getUsersByCountry: baseProcedure.input(ROUTE_INPUTS.usersByCountry).query(async ({ input, ctx }) => {
      const table = world.store('users').table;
      const c = world.countryIndex(input.countryId);
      await ctx.filteredCall(ctx.settings.latency.filteredMs);
      return paging.page({
        resource: 'users',
        view: c === undefined ? emptyView : indexView(table, 'country', c),
        limit: input.limit ?? 10,
        cursor: input.cursor,
        variant: ctx.settings.thinUserListing ? 'thin' : 'lite',
        settings: ctx.settings,
      });
    }),
  });
}
