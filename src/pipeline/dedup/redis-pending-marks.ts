/**
 * The pending-marks protocol's atomic steps on Redis (see `pending-marks.ts`), on the compact seen-set of
 * `redis-seen-set.ts`: one script call claims a page (seen check + locks), one settles it (marks + compare-and-
 * delete). Leases are measured on Redis' clock (`TIME`), so workers with skewed clocks agree on them.
 *
 * Keys: a lock `<prefix>:lock:<resource>/<_id>` (a string `<pageKey>|<leaseUntilMs>|<version code>|<version text>`,
 * no TTL; the version is the one the page publishes, marked when another slice resolves the page as committed); an
 * intent `<prefix>:intent:<sliceKey>` (a hash: seq -> the page as JSON).
 */
import type { Redis } from 'ioredis';
import { ConfigError } from '../../foundation/errors/index.js';
import { processIndexes, recordArgs, scriptRunner, SEEN_SET_LUA } from './internal/seen-set-lua.js';
import type { LockState, PendingMarksBackend } from './pending-marks.js';
import { DEFAULT_REDIS_SEEN_SET_OPTIONS, type RedisSeenSetOptions } from './redis-seen-set.js';
import { createRedisMarkClaims } from './redis-mark-claims.js';

/**
 * An intent lives this long after its slice last claimed a page: a slice abandoned for good (its run failed) leaves
 * nothing behind for longer. Its locks do not need it: whoever meets them resolves them by the slice's checkpoint.
 */
const INTENT_TTL_MS = 7 * 24 * 3_600_000;

// Commands over many keys go out in chunks of this many arguments (Lua's unpack has a limit of ~8 000).
const CHUNK_LUA = `
local function chunks(t, step, fn)
  for i = 1, #t, step do fn(unpack(t, i, math.min(i + step - 1, #t))) end
end
local function mget(keys)
  local out = {}
  chunks(keys, 1000, function(...) for _, v in ipairs(redis.call('MGET', ...)) do out[#out + 1] = v end end)
  return out
end
`;

// KEYS = the locks, one per record, then the slice's intent when ARGV[5] is not ''. ARGV[1] = the set checked,
// ARGV[2] = entry width (8 | 13), ARGV[3] = the page key, ARGV[4] = the lease in ms, ARGV[5] = the page's intent
// field ('' when none), ARGV[6] = its value (set when the call takes a lock); then per record: id, version code
// ('' when none), version text.
// Returns per record, in order: 's' (seen), else up to the first lock another page holds 'm' (mine), then 'w' (wait)
// or 'x<pageKey>' (held by that page, lease expired) for that lock; the unseen records after it are not taken ('u').
// The seen check comes first for every record; the locks of the unseen are read with one MGET and taken with one MSET
// (per-record GETs and SETs cost ~2 us of Redis CPU a record more, issue 47).
const CLAIM_SCRIPT = `${SEEN_SET_LUA}${CHUNK_LUA}
local INTENT_TTL_MS = ${INTENT_TTL_MS}
local name, w, page, lease = ARGV[1], tonumber(ARGV[2]), ARGV[3], tonumber(ARGV[4])
local field = ARGV[5]
local n = #KEYS
if field ~= '' then n = n - 1 end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local L, S = meta(name)
local legacy = redis.call('EXISTS', name) == 1
local cache, out, unseen, locks = {}, {}, {}, {}
for i = 1, n do
  local r = 7 + (i - 1) * 3
  if seen_in(name, w, L, S, legacy, cache, ARGV[r], ARGV[r + 1], ARGV[r + 2]) == 1 then out[i] = 's'
  else out[i] = 'u'; unseen[#unseen + 1] = i; locks[#locks + 1] = KEYS[i] end
end
if #unseen == 0 then return out end
local held = mget(locks)
local own = page .. '|'
local head = own .. (now + lease) .. '|'
local take = {}
for j, i in ipairs(unseen) do
  local v = held[j]
  if not v or sub(v, 1, #own) == own then
    local r = 7 + (i - 1) * 3
    take[#take + 1] = KEYS[i]; take[#take + 1] = head .. ARGV[r + 1] .. '|' .. ARGV[r + 2]
    out[i] = 'm'
  else
    local a = string.find(v, '|', 1, true)
    local b = string.find(v, '|', a + 1, true)
    if tonumber(sub(v, a + 1, b - 1)) < now then out[i] = 'x' .. sub(v, 1, a - 1) else out[i] = 'w' end
    break
  end
end
if #take > 0 then
  if field ~= '' then
    redis.call('HSET', KEYS[#KEYS], field, ARGV[6])
    redis.call('PEXPIRE', KEYS[#KEYS], INTENT_TTL_MS)
  end
  chunks(take, 1000, function(...) redis.call('MSET', ...) end)
end
return out
`;

// KEYS = the locks. ARGV[1] = the page key, ARGV[2] = committed ('1' | '0'), ARGV[3] = version from the lock
// ('1' | '0'), ARGV[4] = entry width, ARGV[5] = bucket entries, ARGV[6] = number of sets, then the sets' names, then
// per record: id, version code, version text. Returns the number of locks deleted. The locks are read with one MGET
// and deleted with one DEL; an immutable record's lock holds no version (its code and text are ''), so it is not
// parsed.
const SETTLE_SCRIPT = `${SEEN_SET_LUA}${CHUNK_LUA}
local page, committed, fromLock = ARGV[1], ARGV[2] == '1', ARGV[3] == '1'
local w, load, ns = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local first = 7 + ns
local own = page .. '|'
local recs, held = {}, {}
local vals = mget(KEYS)
for i = 1, #KEYS do
  local r = first + (i - 1) * 3
  local v = vals[i]
  local ours = v and sub(v, 1, #own) == own
  if ours then held[#held + 1] = KEYS[i] end
  if committed and not fromLock then
    recs[#recs + 1] = ARGV[r]; recs[#recs + 1] = ARGV[r + 1]; recs[#recs + 1] = ARGV[r + 2]
  elseif committed and ours then
    recs[#recs + 1] = ARGV[r]
    if w == 8 then recs[#recs + 1] = ''; recs[#recs + 1] = ''
    else
      local b = string.find(v, '|', #own + 1, true)
      local c = string.find(v, '|', b + 1, true)
      recs[#recs + 1] = sub(v, b + 1, c - 1); recs[#recs + 1] = sub(v, c + 1)
    end
  end
end
-- The last set is the one the claim checked (the global set, or the run-scoped one under --replay): marked blind.
if #recs > 0 then for k = 7, 6 + ns do add_to(ARGV[k], w, load, recs, k == 6 + ns) end end
chunks(held, 1000, function(...) redis.call('DEL', ...) end)
return #held
`;

/**
 * The Redis backend of the pending-marks protocol, on the compact seen-set. `bucketEntries` must be the seen-set
 * backend's (any value is correct; it only sets when buckets split).
 */
export function createRedisPendingMarks(
  redis: Redis,
  options: RedisSeenSetOptions = {},
): PendingMarksBackend {
  const bucketEntries = options.bucketEntries ?? DEFAULT_REDIS_SEEN_SET_OPTIONS.bucketEntries;
  if (!Number.isSafeInteger(bucketEntries) || bucketEntries < 1)
    throw new ConfigError(`option bucketEntries must be an integer >= 1, got ${String(bucketEntries)}`);
  const claimScript = scriptRunner(redis, CLAIM_SCRIPT);
  const settleScript = scriptRunner(redis, SETTLE_SCRIPT);
  const width = (versioned: boolean): string => (versioned ? '13' : '8');
  // The ids carry their entries and bucket hashes, so the scripts do not hash them (recordArgs).
  const indexes = processIndexes(redis);
  return {
    ...createRedisMarkClaims(redis, bucketEntries, indexes),
    async claim({ set, versioned, pageKey, leaseMs, locks, entries, intent }) {
      if (locks.length === 0) return [];
      const r = (await claimScript(locks.length + (intent === undefined ? 0 : 1), [
        ...locks,
        ...(intent === undefined ? [] : [intent.key]),
        set,
        width(versioned),
        pageKey,
        String(leaseMs),
        intent === undefined ? '' : String(intent.seq),
        intent?.value ?? '',
        ...recordArgs(entries, versioned, indexes.of(set)),
      ])) as string[];
      await indexes.learn(set);
      return r.map((s): LockState => {
        if (s === 's') return { state: 'seen' };
        if (s === 'm') return { state: 'mine' };
        if (s === 'w') return { state: 'wait' };
        if (s === 'u') return { state: 'untried' };
        return { state: 'expired', owner: s.slice(1) };
      });
    },
    async settle({ sets, versioned, pageKey, committed, versionFromLock, locks, entries }) {
      if (locks.length === 0) return;
      // The set the page's claim checked, where the settle marks blind (see markSets): the hints are its.
      const claimed = sets[sets.length - 1] ?? '';
      await settleScript(locks.length, [
        ...locks,
        pageKey,
        committed ? '1' : '0',
        versionFromLock ? '1' : '0',
        width(versioned),
        String(bucketEntries),
        String(sets.length),
        ...sets,
        ...recordArgs(entries, versioned, indexes.of(claimed)),
      ]);
      await indexes.learn(claimed);
    },
    async writeIntent(key, seq, value) {
      await redis.hset(key, String(seq), value);
    },
    async readIntent(key) {
      const all = await redis.hgetall(key);
      return Object.entries(all).map(([seq, value]): [number, string] => [Number(seq), value]);
    },
    async clearIntent(key, seqs) {
      if (seqs.length > 0) await redis.hdel(key, ...seqs.map(String));
    },
    async scanLocks(keyPrefix, cursor, count) {
      // The pattern's own glob characters are escaped: a prefix is the deployment's, any text.
      const pattern = `${keyPrefix.replace(/[*?[\]\\]/g, '\\$&')}*`;
      const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', count);
      const values = keys.length === 0 ? [] : await redis.mget(...keys);
      const [seconds, micros] = await redis.time();
      const locks: [string, string][] = [];
      keys.forEach((key, i) => {
        const v = values[i];
        if (typeof v === 'string') locks.push([key, v]);
      });
      return { cursor: next, locks, now: Number(seconds) * 1000 + Math.floor(Number(micros) / 1000) };
    },
  };
}
