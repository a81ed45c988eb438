/**
 * Moves seen-sets of the old layout (one Redis set of `_id` / `_id@version` strings per resource and replay scope,
 * `<prefix>:seen:<resource>[:run:<scope>]`) into the compact layout, then deletes them.
 *
 * Until a set is migrated the new backend still reads it (an old-layout member counts as seen), so an upgrade
 * without this step dedups exactly; it only keeps the old memory. Run it once every worker runs the new version
 * (an old worker would still add to the old set after it was deleted: those records would be published once more).
 * Idempotent; interrupted, it can simply be run again.
 */
import type { Redis } from 'ioredis';
import { isResourceName, RESOURCE_INFO } from '../../foundation/models/index.js';
import type { SeenEntry, SeenSetBackend } from './redis-seen-set.js';
import { encodeVersion } from './seen-encoding.js';

export interface MigrateLegacyOptions {
  /** Key prefix in Redis (as the dedup store's). @default 'gamedata' */
  prefix?: string;
  /** Members moved per script call. @default 1000 */
  batchSize?: number;
}

export interface MigrateLegacyReport {
  /** Per old-layout set: its key and how many members were moved. */
  sets: { key: string; members: number }[];
}

/**
 * Splits an old-layout member of a changing resource into `_id` and version: at the last `@`, when what follows
 * reads as a version (an ISO time or an integer; versions never hold an `@`), else the whole member is an `_id`
 * of a record without a version.
 */
export function parseLegacyMember(member: string, versioned: boolean): SeenEntry {
  if (!versioned) return { id: member, version: '' };
  const at = member.lastIndexOf('@');
  if (at > 0) {
    const version = member.slice(at + 1);
    if (encodeVersion(version) !== undefined || /^\d{4}-\d\d-\d\dT[\d:.]+Z$|^-?\d+$/.test(version))
      return { id: member.slice(0, at), version };
  }
  return { id: member, version: '' };
}

/** Finds the old-layout sets under `prefix` and moves each into `backend` (a Redis seen-set on the same Redis). */
export async function migrateLegacySeenSets(
  redis: Redis,
  backend: SeenSetBackend,
  options: MigrateLegacyOptions = {},
): Promise<MigrateLegacyReport> {
  const prefix = options.prefix ?? 'gamedata';
  const batchSize = options.batchSize ?? 1000;
  const report: MigrateLegacyReport = { sets: [] };
  const legacy: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:seen:*`, 'COUNT', 1000);
    cursor = next;
    for (const key of keys) if (!key.includes(':v2:')) legacy.push(key);
  } while (cursor !== '0');
  for (const key of legacy.sort()) {
    const resource = key.slice(prefix.length + ':seen:'.length).split(':')[0] ?? '';
    if (!isResourceName(resource) || (await redis.type(key)) !== 'set') continue;
    const versioned = RESOURCE_INFO[resource].dedup === 'version';
    let members = 0;
    let c = '0';
    do {
      const [next, batch] = await redis.sscan(key, c, 'COUNT', batchSize);
      c = next;
      if (batch.length > 0) {
        // SSCAN may return a member twice: adding it twice is harmless.
        await backend.add(
          [key],
          versioned,
          batch.map((m) => parseLegacyMember(m, versioned)),
        );
        members += batch.length;
      }
    } while (c !== '0');
    await redis.del(key);
    report.sets.push({ key, members });
  }
  return report;
}
