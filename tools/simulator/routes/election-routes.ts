/** `election.getElections`: the listing by country. */
import { ROUTE_INPUTS } from './inputs.js';
import type { Paging } from './paging.js';
import { baseProcedure, t } from './procedure.js';

export function createElectionRoutes(paging: Paging) {
  return t.router({
    getElections: baseProcedure
      .input(ROUTE_INPUTS.elections)
      .query(({ input = {}, ctx }) => paging.countryFilteredPage('elections', input, ctx)),
  });
}
