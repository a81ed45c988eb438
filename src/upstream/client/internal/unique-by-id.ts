/**
 * The output filter of `collectAll`: unique by `_id`. The output is ordered by (time, _id), so a repeat can only
 * sit at the same instant, and only the ids of the current instant are kept (memory stays bounded). v1 orders by
 * (whole second, _id), so there a repeat shares the second rather than the millisecond (`alignMs` 1000).
 */
import { sortTimeOf } from '../read-slice.js';

/** Returns `accept(item, sortField)`: true the first time an item is seen, false for a repeat. */
export function createUniqueById(alignMs: number): (item: unknown, sortField: string) => boolean {
  let lastTime = NaN;
  let idsAtLastTime = new Set<string>();
  // Items without a readable sort time (malformed records passed through) cannot be placed by time, so every
  // slice that reads past one keeps it (never dropped); their ids are remembered for the whole call instead.
  const unplacedIds = new Set<string>();
  return (item, sortField) => {
    const t = Math.floor(sortTimeOf(item, sortField) / alignMs) * alignMs;
    const id = (item as Record<string, unknown>)['_id'];
    if (Number.isNaN(t)) {
      if (typeof id !== 'string') return true;
      if (unplacedIds.has(id)) return false;
      unplacedIds.add(id);
      return true;
    }
    if (t !== lastTime) {
      lastTime = t;
      idsAtLastTime = new Set();
    }
    if (typeof id !== 'string') return true;
    if (idsAtLastTime.has(id)) return false;
    idsAtLastTime.add(id);
    return true;
  };
}
