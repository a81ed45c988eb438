/** The sort time of a listing item (its resource's sort field), for the density estimate that drives splitting. */
import type { DedupRecord } from '../dedup/index.js';
import { RESOURCE_INFO, type ResourceName } from '../../foundation/models/index.js';

/** Epoch ms of the item's sort field, undefined when it has none. */
export function sortTime(resource: ResourceName, item: DedupRecord): number | undefined {
  const v = item[RESOURCE_INFO[resource].sortField];
  const t = typeof v === 'string' ? Date.parse(v) : typeof v === 'number' ? v : Number.NaN;
  return Number.isFinite(t) ? t : undefined;
}
