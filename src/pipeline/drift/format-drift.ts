/** One line per drifted path, shared by `gamedata status` and `gamedata schemas drift`. */
import type { DriftRecord, JsonType } from './drift-tracker.js';

const n = (x: number): string => x.toLocaleString('en-US');

/** `integer 12, string 3` (most frequent first). */
export function formatDriftTypes(types: Partial<Record<JsonType, number>>): string {
  return (Object.entries(types) as [JsonType, number][])
    .sort((a, b) => b[1] - a[1])
    .map(([type, count]) => `${type} ${n(count)}`)
    .join(', ');
}

/** `sellerMuId  new_field  1,234 records (string 1,234), first seen <iso>, last seen <iso>` */
export function formatDriftRecord(r: DriftRecord): string {
  return (
    `${r.path}  ${r.kind}  ${n(r.count)} record${r.count === 1 ? '' : 's'} (${formatDriftTypes(r.types)}), ` +
    `first seen ${new Date(r.firstSeenMs).toISOString()}, last seen ${new Date(r.lastSeenMs).toISOString()}`
  );
}
