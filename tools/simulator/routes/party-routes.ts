/** `party.*`: one party and the listing by country. */
import type { World } from '../world.js';
import { ROUTE_INPUTS } from './inputs.js';
import type { Paging } from './paging.js';
import { baseProcedure, notFound, t } from './procedure.js';

export function createPartyRoutes(world: World, paging: Paging) {
  return t.router({
    getById: baseProcedure.input(ROUTE_INPUTS.partyById).query(({ input, ctx }) => {
      const row = world.store('parties').table.find(input.partyId);
      if (row === undefined) throw notFound('Party', input.partyId);
      return paging.serve('parties', row, world.store('parties').build(row), ctx.settings);
    }),
    getManyPaginated: baseProcedure
      .input(ROUTE_INPUTS.partiesPaginated)
      .query(({ input = {}, ctx }) => paging.countryFilteredPage('parties', input, ctx)),
  });
}
