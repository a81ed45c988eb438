/**
 * The tRPC router of the simulator: the 12 operations of the spec (§4) plus `country.getAllCountries` and
 * `inventory.fetchCurrentEquipment`, with the wire input names of wire-contract.json, validated with zod
 * (bad input -> 400 BAD_REQUEST), plain JSON (no transformer, as upstream).
 *
 * One module per procedure group in `routes/` (`article-routes.ts`, ...); they share the base procedure
 * (`routes/procedure.ts`: stats, key check, 5xx faults, latency), the input schemas (`routes/inputs.ts`) and
 * the listing helpers (`routes/paging.ts`).
 */
import { createArticleRoutes } from './routes/article-routes.js';
import { createDonationRoutes } from './routes/donation-routes.js';
import { createElectionRoutes } from './routes/election-routes.js';
import { createPaging } from './routes/paging.js';
import { createPartyRoutes } from './routes/party-routes.js';
import { t } from './routes/procedure.js';
import { createCountryRoutes, createInventoryRoutes } from './routes/reference-routes.js';
import { createTransactionRoutes } from './routes/transaction-routes.js';
import { createUserRoutes } from './routes/user-routes.js';
import type { World } from './world.js';

export type { SimContext } from './routes/procedure.js';

/** Builds the router over a world (the world's clock is the simulated now; live mode moves it). */
export function createSimulatorRouter(world: World) {
  const paging = createPaging(world);
  return t.router({
    article: createArticleRoutes(world, paging),
    transaction: createTransactionRoutes(world, paging),
    party: createPartyRoutes(world, paging),
    user: createUserRoutes(world, paging),
    election: createElectionRoutes(paging),
    donation: createDonationRoutes(world, paging),
    country: createCountryRoutes(world),
    inventory: createInventoryRoutes(world),
  });
}

export type SimulatorRouter = ReturnType<typeof createSimulatorRouter>;
