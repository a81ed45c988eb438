/** Reference reads outside the spec's twelve: `country.getAllCountries` and `inventory.fetchCurrentEquipment`. */
import type { World } from '../world.js';
import { ROUTE_INPUTS } from './inputs.js';
import { baseProcedure, notFound, t } from './procedure.js';

export function createCountryRoutes(world: World) {
  return t.router({
    getAllCountries: baseProcedure.input(ROUTE_INPUTS.countries).query(() => world.truth('countries')),
  });
}

export function createInventoryRoutes(world: World) {
  return t.router({
    fetchCurrentEquipment: baseProcedure.input(ROUTE_INPUTS.equipment).query(({ input }) => {
      const row = world.store('users').table.find(input.userId);
      if (row === undefined) throw notFound('User', input.userId);
      return world.equipmentOf(row);
    }),
  });
}
