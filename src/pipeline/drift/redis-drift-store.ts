/**
 * The thin Redis side of drift tracking: one hash per resource (`<prefix>:drift:<resource>`), one field per
 * (kind, path) holding a {@link DriftRecord} as JSON, merged by one script call per page given (never one key per
 * record, never one call per record; the worker gives it batches of pages, `buffered-drift-store.ts`). Bounded: a resource keeps at most `maxPaths` paths; a page's occurrences of
 * paths over the bound are added to the hash's `__dropped` field instead.
 */
import type { Redis } from 'ioredis';
import type { ResourceName } from '../../foundation/models/index.js';
import { RESOURCES } from '../../foundation/models/index.js';
import { ConfigError } from '../../foundation/errors/index.js';
import { DRIFT_KINDS } from './drift-tracker.js';
import type { DriftKind, DriftRecord, PageDrift } from './drift-tracker.js';

export interface RedisDriftStoreOptions {
  /** Key prefix (`GAMEDATA_REDIS_PREFIX`). @default 'gamedata' */
  prefix?: string;
  /** Most paths kept per resource (all kinds together). @default 300 */
  maxPaths?: number;
}

export const DEFAULT_REDIS_DRIFT_STORE_OPTIONS = { prefix: 'gamedata', maxPaths: 300 } as const;

/** A resource's drift as stored: every path, and how many occurrences the bound turned away. */
export interface ResourceDrift {
  resource: ResourceName;
  records: DriftRecord[];
  dropped: number;
}

export interface DriftStore {
  /** Folds one page's drift into the resource's hash (one round trip; nothing when the page did not drift). */
  record(resource: ResourceName, page: PageDrift, nowMs?: number): Promise<void>;
  /** The stored drift of `resource`, or of every resource that has some, paths sorted by kind then path. */
  read(resource?: ResourceName): Promise<ResourceDrift[]>;
  /** Forgets a resource's drift (after the catalogue absorbed it). */
  clear(resource: ResourceName): Promise<void>;
}

const DROPPED = '__dropped';

// KEYS[1] the hash; ARGV: maxPaths, now, then per entry: field, count, types JSON, first and last record time (ms,
// or '' when none). Returns nothing.
const MERGE = `
local max = tonumber(ARGV[1])
local now = tonumber(ARGV[2])
local size = redis.call('HLEN', KEYS[1]) - redis.call('HEXISTS', KEYS[1], '${DROPPED}')
for i = 3, #ARGV, 5 do
  local field = ARGV[i]
  local count = tonumber(ARGV[i + 1])
  local types = cjson.decode(ARGV[i + 2])
  local firstRec = tonumber(ARGV[i + 3])
  local lastRec = tonumber(ARGV[i + 4])
  local old = redis.call('HGET', KEYS[1], field)
  if old then
    local r = cjson.decode(old)
    r.count = r.count + count
    for t, n in pairs(types) do r.types[t] = (r.types[t] or 0) + n end
    if now > r.lastSeenMs then r.lastSeenMs = now end
    if firstRec and (not r.firstRecordMs or firstRec < r.firstRecordMs) then r.firstRecordMs = firstRec end
    if lastRec and (not r.lastRecordMs or lastRec > r.lastRecordMs) then r.lastRecordMs = lastRec end
    redis.call('HSET', KEYS[1], field, cjson.encode(r))
  elseif size < max then
    redis.call('HSET', KEYS[1], field, cjson.encode({ count = count, types = types, firstSeenMs = now, lastSeenMs = now, firstRecordMs = firstRec, lastRecordMs = lastRec }))
    size = size + 1
  else
    redis.call('HINCRBY', KEYS[1], '${DROPPED}', count)
  end
end
`;

/** The hash of `resource`'s drift. */
export function driftKey(prefix: string, resource: ResourceName): string {
  return `${prefix}:drift:${resource}`;
}

function parseField(field: string): { kind: DriftKind; path: string } | undefined {
  const tab = field.indexOf('\t');
  const kind = field.slice(0, tab) as DriftKind;
  return tab > 0 && DRIFT_KINDS.includes(kind) ? { kind, path: field.slice(tab + 1) } : undefined;
}

/** @throws ConfigError when `maxPaths` is not a positive integer. */
export function createRedisDriftStore(redis: Redis, options: RedisDriftStoreOptions = {}): DriftStore {
  const { prefix, maxPaths } = { ...DEFAULT_REDIS_DRIFT_STORE_OPTIONS, ...options };
  if (!Number.isSafeInteger(maxPaths) || maxPaths < 1)
    throw new ConfigError(`drift store maxPaths must be an integer >= 1, got ${String(maxPaths)}`);
  return {
    async record(resource, page, nowMs = Date.now()) {
      if (page.entries.length === 0 && page.dropped === 0) return;
      const args: (string | number)[] = [maxPaths, nowMs];
      for (const e of page.entries)
        args.push(
          `${e.kind}\t${e.path}`,
          e.count,
          JSON.stringify(e.types),
          e.firstRecordMs ?? '',
          e.lastRecordMs ?? '',
        );
      const key = driftKey(prefix, resource);
      await redis.eval(MERGE, 1, key, ...args);
      if (page.dropped > 0) await redis.hincrby(key, DROPPED, page.dropped);
    },
    async read(resource) {
      const out: ResourceDrift[] = [];
      for (const name of resource === undefined ? RESOURCES : [resource]) {
        const hash = await redis.hgetall(driftKey(prefix, name));
        const records: DriftRecord[] = [];
        for (const [field, json] of Object.entries(hash)) {
          const id = parseField(field);
          if (id === undefined) continue;
          const r = JSON.parse(json) as Omit<DriftRecord, 'kind' | 'path'>;
          // cjson writes an empty table as `{}`; a types table is never empty, but be lenient.
          records.push({
            ...id,
            count: r.count,
            types: r.types,
            firstSeenMs: r.firstSeenMs,
            lastSeenMs: r.lastSeenMs,
            ...(typeof r.firstRecordMs === 'number' ? { firstRecordMs: r.firstRecordMs } : {}),
            ...(typeof r.lastRecordMs === 'number' ? { lastRecordMs: r.lastRecordMs } : {}),
          });
        }
        const dropped = Number(hash[DROPPED] ?? 0);
        if (records.length === 0 && dropped === 0 && resource === undefined) continue;
        records.sort((a, b) =>
          a.kind === b.kind
            ? a.path.localeCompare(b.path)
            : DRIFT_KINDS.indexOf(a.kind) - DRIFT_KINDS.indexOf(b.kind),
        );
        out.push({ resource: name, records, dropped });
      }
      return out;
    },
    async clear(resource) {
      await redis.del(driftKey(prefix, resource));
    },
  };
}
