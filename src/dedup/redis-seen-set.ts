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
 * One script call per page for `has`, one per page for `add` (all sets of the page at once). The scripts touch keys
 * derived from the seen-set's name (buckets are found through the meta hash): fine on a single Redis, not on a
 * cluster.
 */
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { ConfigError } from '../errors.js';
import { encodeVersion, MIN_LEVEL, MAX_PROCESS_INDEX } from './seen-encoding.js';

/** One record for the seen-set: its `_id` and its version text ('' for immutable resources). */
export interface SeenEntry {
  id: string;
  version: string;
}

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
   * Cross-process in-flight locks (optional): for each key, whether `owner` got it (`SET key owner NX PX ttl`).
   * Without them, only slices of the same process wait for each other.
   */
  lock?(keys: readonly string[], owner: string, ttlMs: number): Promise<boolean[]>;
  /** Releases the keys `owner` still holds. */
  unlock?(keys: readonly string[], owner: string): Promise<void>;
}

export interface RedisSeenSetOptions {
  /**
   * Average entries per bucket before linear hashing splits one more bucket. A lookup scans one bucket
   * (`bucketEntries` x 8 or 13 bytes) and an insert rewrites it (the AOF logs the whole bucket); each bucket key
   * costs ~110 bytes. Any value is correct; processes may differ.
   * @default 256
   */
  bucketEntries?: number;
}

export const DEFAULT_REDIS_SEEN_SET_OPTIONS = { bucketEntries: 256 } as const;

// Mirrors seen-encoding.ts (entryHash, bucketHash, bucketAddress, versionCovered, versionReplaces).
const PRELUDE = `
local MIN_LEVEL, MAX_PI, TBASE = ${MIN_LEVEL}, ${MAX_PROCESS_INDEX}, 4294967296
local sub, byte = string.sub, string.byte
local function u16(s, i) local a, b = byte(s, i, i + 1) return a * 256 + b end
local function u32(s, i) local a, b, c, d = byte(s, i, i + 3) return ((a * 256 + b) * 256 + c) * 256 + d end
local function u40(s, i) local a, b, c, d, e = byte(s, i, i + 4) return (((a * 256 + b) * 256 + c) * 256 + d) * 256 + e end
local function vbytes(v)
  local t = {}
  for i = 5, 1, -1 do t[i] = v % 256; v = math.floor(v / 256) end
  return string.char(t[1], t[2], t[3], t[4], t[5])
end
local M32 = 4294967296
local function u(x) return x % M32 end
local function mul32(x, hi, lo) return ((x * hi) % 65536 * 65536 + x * lo) % M32 end
local function ehash(e)
  local x = u(bit.bxor(u32(e, 1), u16(e, 5) * 65536 + u16(e, 7)))
  x = u(bit.bxor(x, bit.rshift(x, 16)))
  x = mul32(x, 0x85eb, 0xca6b)
  x = u(bit.bxor(x, bit.rshift(x, 13)))
  x = mul32(x, 0xc2b2, 0xae35)
  return u(bit.bxor(x, bit.rshift(x, 16)))
end
local function address(e, clo, L, S)
  local h = ehash(e)
  local H = h * 256 + bit.band(bit.bxor(clo, math.floor(h / 16777216)), 255)
  local a = H % (2 ^ L)
  if a < S then a = H % (2 ^ (L + 1)) end
  return a
end
local function covered(stored, v) return (stored >= TBASE) == (v >= TBASE) and v <= stored end
local function find(b, e, w)
  local i = 1
  while true do
    local p = string.find(b, e, i, true)
    if not p then return nil end
    if (p - 1) % w == 0 then return p end
    i = p + 1
  end
end
local function oid(id) return #id == 24 and not string.find(id, '[^0-9a-f]') end
local function bin(hex)
  local t = {}
  for i = 1, 23, 2 do t[#t + 1] = tonumber(sub(hex, i, i + 1), 16) end
  return string.char(unpack(t))
end
local function meta(base)
  local m = redis.call('HMGET', base .. ':v2:meta', 'L', 'S', 'n')
  return tonumber(m[1]) or MIN_LEVEL, tonumber(m[2]) or 0, tonumber(m[3]) or 0
end
`;

// KEYS[1] = the set's name (also its old-layout key). ARGV[1] = entry width (8 | 13); then per record: id, version
// code ('' when it has none), version text. Returns 1 (covered) or 0 per record.
const HAS_SCRIPT = `${PRELUDE}
local name, w = KEYS[1], tonumber(ARGV[1])
local base = name
local L, S = meta(base)
local legacy = redis.call('EXISTS', name) == 1
local buckets, out = {}, {}
for r = 2, #ARGV, 3 do
  local id, code, raw = ARGV[r], ARGV[r + 1], ARGV[r + 2]
  local seen, compact = 0, false
  if oid(id) and (w == 8 or code ~= '') then
    local b12 = bin(id)
    local pi = redis.call('HGET', base .. ':v2:proc', sub(b12, 5, 9))
    if pi then
      compact = true
      local e = string.char(bit.band(bit.bxor(byte(b12, 11), byte(b12, 4)), 255)) .. sub(b12, 1, 4) .. sub(b12, 10, 10) .. pi
      local key = base .. ':v2:b:' .. address(e, byte(b12, 12), L, S)
      local b = buckets[key]
      if b == nil then b = redis.call('GET', key) or ''; buckets[key] = b end
      local p = find(b, e, w)
      if p and (w == 8 or covered(u40(b, p + 8), tonumber(code))) then seen = 1 end
    end
  end
  if not compact then
    if w == 8 then seen = redis.call('SISMEMBER', base .. ':v2:odd', id)
    elseif redis.call('HGET', base .. ':v2:odd', id) == raw then seen = 1 end
  end
  if seen == 0 and legacy then
    local member = id
    if w == 13 and raw ~= '' then member = id .. '@' .. raw end
    seen = redis.call('SISMEMBER', name, member)
  end
  out[#out + 1] = seen
end
return out
`;

// KEYS = the sets' names. ARGV[1] = entry width, ARGV[2] = bucket entries; then per record: id, code, version text.
const ADD_SCRIPT = `${PRELUDE}
local w, load = tonumber(ARGV[1]), tonumber(ARGV[2])
for k = 1, #KEYS do
  local base = KEYS[k]
  local L, S, n = meta(base)
  local buckets, dirty = {}, {}
  for r = 3, #ARGV, 3 do
    local id, code, raw = ARGV[r], ARGV[r + 1], ARGV[r + 2]
    local compact = false
    if oid(id) and (w == 8 or code ~= '') then
      local b12 = bin(id)
      local part = sub(b12, 5, 9)
      local pi = redis.call('HGET', base .. ':v2:proc', part)
      if not pi then
        local next = redis.call('HINCRBY', base .. ':v2:meta', 'pn', 1)
        if next <= MAX_PI then
          pi = string.char(math.floor(next / 256), next % 256)
          redis.call('HSET', base .. ':v2:proc', part, pi)
        end
      end
      if pi then
        compact = true
        local e = string.char(bit.band(bit.bxor(byte(b12, 11), byte(b12, 4)), 255)) .. sub(b12, 1, 4) .. sub(b12, 10, 10) .. pi
        local key = base .. ':v2:b:' .. address(e, byte(b12, 12), L, S)
        local b = buckets[key]
        if b == nil then b = redis.call('GET', key) or ''; buckets[key] = b end
        local p = find(b, e, w)
        if not p then
          if w == 8 then b = b .. e else b = b .. e .. vbytes(tonumber(code)) end
          n = n + 1
          buckets[key] = b; dirty[key] = true
        elseif w == 13 then
          local stored, v = u40(b, p + 8), tonumber(code)
          if (stored >= TBASE) ~= (v >= TBASE) or v > stored then
            buckets[key] = sub(b, 1, p + 7) .. vbytes(v) .. sub(b, p + 13); dirty[key] = true
          end
        end
      end
    end
    if not compact then
      if w == 8 then redis.call('SADD', base .. ':v2:odd', id)
      else redis.call('HSET', base .. ':v2:odd', id, raw) end
    end
  end
  for key in pairs(dirty) do redis.call('SET', key, buckets[key]) end
  -- Linear hashing: split bucket S into S and S + 2^L until the average load is back under the limit. Every entry
  -- of bucket S has an address = S mod 2^L, so the address's low byte (L >= 8) is the hash's low byte.
  while n > load * (2 ^ L + S) do
    local half = 2 ^ L
    local src, dst = base .. ':v2:b:' .. S, base .. ':v2:b:' .. (S + half)
    local b = redis.call('GET', src) or ''
    local keep, move = {}, {}
    for p = 1, #b, w do
      local e = sub(b, p, p + w - 1)
      local H = ehash(e) * 256 + S % 256
      if H % (2 * half) == S then keep[#keep + 1] = e else move[#move + 1] = e end
    end
    if #keep > 0 then redis.call('SET', src, table.concat(keep)) else redis.call('DEL', src) end
    if #move > 0 then redis.call('SET', dst, table.concat(move)) end
    S = S + 1
    if S == half then L = L + 1; S = 0 end
  end
  redis.call('HSET', base .. ':v2:meta', 'L', L, 'S', S, 'n', n)
end
return 0
`;

const LOCK_SCRIPT = `local r = {} for i, k in ipairs(KEYS) do if redis.call('set', k, ARGV[1], 'PX', ARGV[2], 'NX') then r[i] = 1 else r[i] = 0 end end return r`;
const UNLOCK_SCRIPT = `for i, k in ipairs(KEYS) do if redis.call('get', k) == ARGV[1] then redis.call('del', k) end end return 0`;

/** Runs a script by its SHA1 (the body is sent only when Redis does not have it cached yet: NOSCRIPT). */
function scriptRunner(redis: Redis, body: string): (numKeys: number, args: string[]) => Promise<unknown> {
  const sha = createHash('sha1').update(body).digest('hex');
  return async (numKeys, args) => {
    try {
      return await redis.evalsha(sha, numKeys, ...args);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return redis.eval(body, numKeys, ...args);
    }
  };
}

function recordArgs(entries: readonly SeenEntry[], versioned: boolean): string[] {
  const args: string[] = [];
  for (const e of entries) {
    const code = versioned ? encodeVersion(e.version) : undefined;
    args.push(e.id, code === undefined ? '' : String(code), versioned ? e.version : '');
  }
  return args;
}

/** A Redis seen-set backend in the compact layout (see the file comment). */
export function createRedisSeenSet(redis: Redis, options: RedisSeenSetOptions = {}): SeenSetBackend {
  const bucketEntries = options.bucketEntries ?? DEFAULT_REDIS_SEEN_SET_OPTIONS.bucketEntries;
  if (!Number.isSafeInteger(bucketEntries) || bucketEntries < 1)
    throw new ConfigError(`option bucketEntries must be an integer >= 1, got ${String(bucketEntries)}`);
  const width = (versioned: boolean): string => (versioned ? '13' : '8');
  const hasScript = scriptRunner(redis, HAS_SCRIPT);
  const addScript = scriptRunner(redis, ADD_SCRIPT);
  return {
    async has(name, versioned, entries) {
      if (entries.length === 0) return [];
      const r = (await hasScript(1, [name, width(versioned), ...recordArgs(entries, versioned)])) as number[];
      return entries.map((_, i) => r[i] === 1);
    },
    async add(names, versioned, entries) {
      if (entries.length === 0 || names.length === 0) return;
      await addScript(names.length, [
        ...names,
        width(versioned),
        String(bucketEntries),
        ...recordArgs(entries, versioned),
      ]);
    },
    async drop(names) {
      for (const name of names) {
        const [level, split] = await redis.hmget(`${name}:v2:meta`, 'L', 'S');
        const count = level === null ? 0 : 2 ** Number(level) + Number(split ?? 0);
        const keys = [name, `${name}:v2:meta`, `${name}:v2:proc`, `${name}:v2:odd`];
        for (let a = 0; a < count; a++) keys.push(`${name}:v2:b:${a}`);
        // Chunks: one DEL of 200 000 keys would block Redis for a while.
        for (let i = 0; i < keys.length; i += 1000) await redis.del(...keys.slice(i, i + 1000));
      }
    },
    async lock(keys, owner, ttlMs) {
      if (keys.length === 0) return [];
      // One script call per page instead of a MULTI of one SET per key; the same SET NX PX per key, atomically.
      const got = (await redis.eval(LOCK_SCRIPT, keys.length, ...keys, owner, String(ttlMs))) as number[];
      return keys.map((_, i) => got[i] === 1);
    },
    async unlock(keys, owner) {
      if (keys.length > 0) await redis.eval(UNLOCK_SCRIPT, keys.length, ...keys, owner);
    },
  };
}
