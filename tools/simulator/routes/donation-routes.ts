/** `donation.*`: the listing by target (one target filter at most matches) and the totals of a target. */
import { indexView, tableView, type RowView } from '../ordered-table.js';
import type { World } from '../world.js';
import { ROUTE_INPUTS } from './inputs.js';
import { emptyView, type Paging } from './paging.js';
import { baseProcedure, t } from './procedure.js';

/** Index families of the donations table, by target kind (0 mu, 1 country, 2 party). */
const FAMILIES = ['mu', 'country', 'party'] as const;

interface DonationFilter {
  muId?: string | undefined;
  countryId?: string | undefined;
  partyId?: string | undefined;
}

export function createDonationRoutes(world: World, paging: Paging) {
  /** Donation targets of a filter: [kind, target] pairs that must all match (AND); undefined target = unknown id. */
  function donationTargets(input: DonationFilter): Array<[number, number | undefined]> {
    const wanted: Array<[number, number | undefined]> = [];
    if (input.muId !== undefined) wanted.push([0, world.muIndex(input.muId)]);
    if (input.countryId !== undefined) wanted.push([1, world.countryIndex(input.countryId)]);
    if (input.partyId !== undefined) wanted.push([2, paging.partyIdent(input.partyId)]);
    return wanted;
  }
  function donationView(input: DonationFilter): RowView {
    const table = world.store('donations').table;
    const wanted = donationTargets(input);
    if (wanted.length === 0) return tableView(table);
    // A donation has one target: two different target filters match nothing.
    if (wanted.length > 1 || wanted.some(([, target]) => target === undefined)) return emptyView;
    const [kind, target] = wanted[0] as [number, number];
    return indexView(table, FAMILIES[kind] as string, target);
  }

  return t.router({
    getManyPaginated: baseProcedure.input(ROUTE_INPUTS.donations).query(async ({ input = {}, ctx }) => {
      const view = donationView(input);
      await ctx.filteredCall(ctx.settings.latency.filteredMs);
      return paging.page({
        resource: 'donations',
        view,
        limit: input.limit ?? 20,
        cursor: input.cursor,
        settings: ctx.settings,
      });
    }),
    getTotalDonations: baseProcedure.input(ROUTE_INPUTS.donationTotals).query(({ input = {} }) => {
      const view = donationView(input);
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
}
