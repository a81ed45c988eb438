/**
 * The truth of a real upstream (no simulator): every record re-read through the client, walking the listings the
 * way the planner does (users per country with full profiles, transactions per user). Repeats are kept once.
 * Per-user transaction walks also walk every counterparty their trades name (users a listing served without `_id`),
 * as the pipeline's slices do.
 */
import type { DedupRecord } from '../../pipeline/dedup/index.js';
import type { SliceSource } from '../../pipeline/slice/index.js';
import { counterparties } from '../../pipeline/slice/index.js';
import type { ResourceName } from '../../foundation/models/index.js';
import type { PlannerSource } from '../../pipeline/planner/index.js';

/** Reads every record of `resource` older than `until` (epoch ms; default: the head of the feed). */
export async function collectUpstreamTruth(
  source: SliceSource,
  planner: PlannerSource,
  resource: ResourceName,
  options: { until?: number; filters?: Record<string, string> } = {},
): Promise<DedupRecord[]> {
  const filters = options.filters ?? {};
  const walks: Record<string, string>[] =
    resource === 'users'
      ? (await planner.countryIds()).map((countryId) => ({ ...filters, countryId }))
      : resource === 'transactions' && filters['userId'] === undefined
        ? (await planner.userIds()).map((userId) => ({ ...filters, userId }))
        : [filters];
  const perUser = resource === 'transactions' && filters['userId'] === undefined;
  const known = new Set(perUser ? walks.map((w) => w['userId']) : []);
  const byKey = new Map<string, DedupRecord>();
  let anonymous = 0;
  // `walks` grows while it is read: each newly named user is walked too.
  for (let w = 0; w < walks.length; w++) {
    const walk = walks[w] as Record<string, string>;
    for await (const page of source.readPages(
      { resource, filters: walk, start: -Infinity, end: options.until ?? Infinity },
      {},
    )) {
      const items = source.enrich ? await source.enrich(resource, page.items) : page.items;
      if (perUser) {
        for (const userId of counterparties(items)) {
          if (known.has(userId)) continue;
          known.add(userId);
          walks.push({ ...filters, userId });
        }
      }
      for (const item of items) {
        const id = typeof item._id === 'string' ? item._id : `#anonymous-${anonymous++}`;
        byKey.set(id, item);
      }
    }
  }
  return [...byKey.values()];
}
