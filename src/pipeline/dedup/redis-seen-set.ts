/**
 * The Redis seen-set backend in the compact layout of `seen-encoding.ts` (Redis >= 6.2; scripts, no modules).
 *
 * Keys of one seen-set `<name>` (`<prefix>:seen:<resource>`, or `...:run:<scope>` for a replay run):
 * - `<name>:v2:meta`  hash: `L`, `S` (linear hashing level and split pointer), `n` (entries), `pn` (last process index)
 * - `<name>:v2:proc`  hash: ObjectId process part (5 bytes) -> 2-byte index
 * - `<name>:v2:b:<a>` string: the packed entries of bucket `a` (8 bytes per record, 13 per changing entity)
 * - `<name>:v2:odd`   the exact fallback: a set of ids (immutable) or a hash id -> version text (changing)
 * - `<name>`          the old layout (a Redis set of `_id` / `_id@version` strings), read while it exists, until
 *                     `migrateLegacySeenSets` moved it over.
 *
 * One script call per page for `claimLocks` (seen check + in-flight locks), one per page for `add` (all sets of the
 * page at once: a new entry rewrites its bucket once, a changing entity's new version is written in place by
 * SETRANGE; the exactly-once settle of `redis-pending-marks.ts` APPENDs immutable records unread). The scripts touch keys
 * derived from the seen-set's name (buckets are found through the meta hash): fine on a single Redis, not on a
 * cluster.
 */
import type { Redis } from 'ioredis';
import { ConfigError } from '../../foundation/errors/index.js';
import { processIndexes, recordArgs, scriptRunner, SEEN_SET_LUA } from './internal/seen-set-lua.js';

import type { SeenEntry } from './seen-encoding.js';

export type { SeenEntry } from './seen-encoding.js';

/** One key of a claim (see {@link SeenSetBackend.claimLocks}). */
export type LockClaim = 'seen' | 'locked' | 'busy';

/** Where seen records are stored: Redis in production, a Map in unit tests. */
export interface SeenSetBackend {
  /**
   * For each entry, whether it is covered by the set `name`: the same `_id` (immutable, `versioned` false), or the
   * same or an older version of the same `_id` (changing resources).
   */
  has(name: string, versioned: boolean, entries: readonly SeenEntry[]): Promise<boolean[]>;
  /** Records the entries in every set in `names` (a changing entity keeps its latest version). */
  add(names: readonly string[], versioned: boolean, entries: readonly SeenEntry[]): Promise<void>;
  /** Removes the sets. */
  drop(names: readonly string[]): Promise<void>;
  /**
   * Cross-process in-flight locks (optional), taken with the seen check in one atomic step: per entry, 'seen' when
   * the set `name` covers it, else 'locked' when `owner` got `keys[i]` (`SET key owner NX PX ttl`), else 'busy'.
   * Without them, only slices of the same process wait for each other.
   */
  claimLocks?(
    name: string,
    versioned: boolean,
    entries: readonly SeenEntry[],
    keys: readonly string[],
    owner: string,
    ttlMs: number,
  ): Promise<LockClaim[]>;
  /** Releases the keys `owner` still holds. */
  unlock?(keys: readonly string[], owner: string): Promise<void>;
}

export interface RedisSeenSetOptions {
  /**
   * Average entries per bucket before linear hashing splits one more bucket. A lookup scans one bucket
   * (`bucketEntries` x 8 or 13 bytes) and an insert here rewrites it (the AOF logs the whole bucket; the exactly-once
   * settle appends immutable records instead, ~14.3 bytes per record with Redis' preallocation); each bucket key
   * costs ~110 bytes. Any value is correct; processes may differ. 128 (from 256, issue 47): Redis reads and rewrites
   * 1 KB buckets instead of 2 KB ones, ~20.5 instead of ~24.4 µs of Redis CPU per exactly-once record
   * (bench/dedup-protocol.ts), for 9.8 instead of 9.1 bytes per record and 15.1 bytes per entity after 10 rescans
   * (bench/dedup-memory.ts, limit 16). 64 saves another ~1 µs but costs 16.1 bytes per entity, over the limit.
   * @default 128
   */
  bucketEntries?: number;
}

export const DEFAULT_REDIS_SEEN_SET_OPTIONS = { bucketEntries: 128 } as const;

// KEYS[1] = the set's name (also its old-layout key). ARGV[1] = entry width (8 | 13); then per record: id, version
// code ('' when it has none), version text. Returns 1 (covered) or 0 per record.
const HAS_SCRIPT = `${SEEN_SET_LUA}
local name, w = KEYS[1], tonumber(ARGV[1])
local L, S = meta(name)
local legacy = redis.call('EXISTS', name) == 1
local cache, out = {}, {}
for r = 2, #ARGV, 3 do
  out[#out + 1] = seen_in(name, w, L, S, legacy, cache, ARGV[r], ARGV[r + 1], ARGV[r + 2])
end
return out
`;

// KEYS = the sets' names. ARGV[1] = entry width, ARGV[2] = bucket entries; then per record: id, code, version text.
const ADD_SCRIPT = `${SEEN_SET_LUA}
local w, load = tonumber(ARGV[1]), tonumber(ARGV[2])
local recs = {}
for r = 3, #ARGV do recs[#recs + 1] = ARGV[r] end
for k = 1, #KEYS do add_to(KEYS[k], w, load, recs, false) end
return 0
`;

// KEYS = the in-flight locks, one per record. ARGV[1] = the set's name, ARGV[2] = entry width, ARGV[3] = owner,
// ARGV[4] = lock TTL in ms; then per record: id, code, version text. Returns per record 0 (seen), 1 (locked), 2 (busy).
const CLAIM_SCRIPT = `${SEEN_SET_LUA}
local name, w, owner, ttl = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4]
local L, S = meta(name)
local legacy = redis.call('EXISTS', name) == 1
local cache, out = {}, {}
for i = 1, #KEYS do
  local r = 5 + (i - 1) * 3
  if seen_in(name, w, L, S, legacy, cache, ARGV[r], ARGV[r + 1], ARGV[r + 2]) == 1 then out[i] = 0
  elseif redis.call('SET', KEYS[i], owner, 'PX', ttl, 'NX') then out[i] = 1
  else out[i] = 2 end
end
return out
`;
const UNLOCK_SCRIPT = `for i, k in ipairs(KEYS) do if redis.call('get', k) == ARGV[1] then redis.call('del', k) end end return 0`;

/** A Redis seen-set backend in the compact layout (see the file comment). */
export function createRedisSeenSet(redis: Redis, options: RedisSeenSetOptions = {}): SeenSetBackend {
  const bucketEntries = options.bucketEntries ?? DEFAULT_REDIS_SEEN_SET_OPTIONS.bucketEntries;
  if (!Number.isSafeInteger(bucketEntries) || bucketEntries < 1)
    throw new ConfigError(`option bucketEntries must be an integer >= 1, got ${String(bucketEntries)}`);
  const width = (versioned: boolean): string => (versioned ? '13' : '8');
  const hasScript = scriptRunner(redis, HAS_SCRIPT);
  const addScript = scriptRunner(redis, ADD_SCRIPT);
  const claimScript = scriptRunner(redis, CLAIM_SCRIPT);
  const unlockScript = scriptRunner(redis, UNLOCK_SCRIPT);
  // The ids carry their entries and bucket hashes, so the scripts do not hash them (recordArgs).
  const indexes = processIndexes(redis);
  return {
    async has(name, versioned, entries) {
      if (entries.length === 0) return [];
      const r = (await hasScript(1, [
        name,
        width(versioned),
        ...recordArgs(entries, versioned, indexes.of(name)),
      ])) as number[];
      await indexes.learn(name);
      return entries.map((_, i) => r[i] === 1);
    },
    async add(names, versioned, entries) {
      if (entries.length === 0 || names.length === 0) return;
      await addScript(names.length, [
        ...names,
        width(versioned),
        String(bucketEntries),
        ...recordArgs(entries, versioned, indexes.of(names[0]!)),
      ]);
      await indexes.learn(names[0]!);
    },
    async drop(names) {
      for (const name of names) {
        indexes.forget(name);
        const [level, split] = await redis.hmget(`${name}:v2:meta`, 'L', 'S');
        const count = level === null ? 0 : 2 ** Number(level) + Number(split ?? 0);
        const keys = [name, `${name}:v2:meta`, `${name}:v2:proc`, `${name}:v2:odd`];
        for (let a = 0; a < count; a++) keys.push(`${name}:v2:b:${a}`);
        // Chunks: one DEL of 200 000 keys would block Redis for a while.
        for (let i = 0; i < keys.length; i += 1000) await redis.del(...keys.slice(i, i + 1000));
      }
    },
    async claimLocks(name, versioned, entries, keys, owner, ttlMs) {
      if (keys.length === 0) return [];
      // One script call per page: the seen check and a SET NX PX per key, atomically (no re-check after locking).
      const got = (await claimScript(keys.length, [
        ...keys,
        name,
        width(versioned),
        owner,
        String(ttlMs),
        ...recordArgs(entries, versioned, indexes.of(name)),
      ])) as number[];
      await indexes.learn(name);
      return keys.map((_, i): LockClaim => (got[i] === 0 ? 'seen' : got[i] === 1 ? 'locked' : 'busy'));
    },
    async unlock(keys, owner) {
      if (keys.length > 0) await unlockScript(keys.length, [...keys, owner]);
    },
  };
}
