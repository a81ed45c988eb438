/**
 * Claims by mark on Redis (`mark-claims.ts`, `lone-runs.ts`), on the compact seen-set of `redis-seen-set.ts`: one
 * script claims a page (the run's and the slice's checks, the seen check, the locks' read, the marks), one settles it.
 * Lease ends are on Redis' clock (`TIME`).
 */
import type { Redis } from 'ioredis';
import { CLOSED_MARKS_TTL_MS, type MarkClaimsBackend } from './mark-claims.js';
import { recordArgs, scriptRunner, SEEN_SET_LUA, type ProcessIndexes } from './internal/seen-set-lua.js';

/** The slice's marks live this long after its last page claimed by mark or owner (a slice abandoned for good). */
const MARKS_TTL_MS = 7 * 24 * 3_600_000;

const PARSE_RUN = `
local function parse_run(v)
  local a = string.find(v, '|', 1, true)
  local b = string.find(v, '|', a + 1, true)
  local c = string.find(v, '|', b + 1, true)
  return sub(v, 1, a - 1), sub(v, a + 1, b - 1), sub(v, b + 1, c - 1), sub(v, c + 1)
end
`;

// KEYS = the records' locks. ARGV[1] = the set, [2] = the registry, [3] = the run, [4] = the slice's marks, [5] = the
// session, [6] = the page key, [7] = the lease (ms), [8] = the run's marking set, [9] = the page's value, [10] = the
// set's bucket load; then per record: id, '', ''. Returns {'ok', 's' | 'm' per record} or {'shared' | 'locked' |
// 'unowned' | 'fenced'} (nothing changed).
const MARK_CLAIM_SCRIPT = `${SEEN_SET_LUA}${PARSE_RUN}
local name, run, marks, session, page = ARGV[1], ARGV[3], ARGV[4], ARGV[5], ARGV[6]
local entry = redis.call('HGET', ARGV[2], run)
if not entry then return {'shared'} end
local _, _, mode = parse_run(entry)
if mode ~= 'lone' then return {'shared'} end
local owner = redis.call('HGET', marks, 'owner')
if not owner then return {'unowned'} end
if owner ~= session then return {'fenced'} end
local L, S, n = meta(name)
local legacy = redis.call('EXISTS', name) == 1
local cache, out, unseen, locks, appends, others = {}, {'ok'}, {}, {}, {}, {}
for i = 1, #KEYS do
  local r = 11 + (i - 1) * 3
  local a = ARGV[r]
  local b12 = idarg(a)
  local hit, e, key = 0, nil, nil
  -- The common case in one lookup: an ObjectId whose process part the set knows, looked up in its bucket; the
  -- entry and bucket found are the ones it is appended to.
  if b12 then
    local part = sub(b12, 5, 9)
    local pi = cache[part]
    if pi == nil then pi = redis.call('HGET', name .. ':v2:proc', part); cache[part] = pi end
    if pi then
      local _, p
      e, key, _, p = locate(name, a, b12, pi, L, S, 8, cache)
      if p then hit = 1 end
    end
  end
  if hit == 0 and (not key or legacy) then hit = seen_in(name, 8, L, S, legacy, cache, a, '', '') end
  if hit == 1 then out[i + 1] = 's'
  else
    out[i + 1] = 'm'; unseen[#unseen + 1] = i; locks[#locks + 1] = KEYS[i]
    if key then appends[#appends + 1] = key; appends[#appends + 1] = e
    else others[#others + 1] = a; others[#others + 1] = ''; others[#others + 1] = '' end
  end
end
if #unseen == 0 then return out end
for i = 1, #locks, 1000 do
  for _, v in ipairs(redis.call('MGET', unpack(locks, i, math.min(i + 999, #locks)))) do
    if v then return {'locked'} end
  end
end
-- Marked as a settle marks: appended unread (checked absent above, in this same step).
for j = 1, #appends, 2 do redis.call('APPEND', appends[j], appends[j + 1]) end
local load = tonumber(ARGV[10])
if #appends > 0 then grow(name, 8, load, L, S, n + #appends / 2) end
if #others > 0 then add_to(name, 8, load, others, true) end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('HSET', marks, page, table.concat(unseen, ',') .. '\\n' .. ARGV[9])
redis.call('PEXPIRE', marks, ${MARKS_TTL_MS})
redis.call('ZADD', ARGV[8], now + tonumber(ARGV[7]), page)
return out
`;

// ARGV[1] = the set, [2] = the slice's marks, [3] = the run's marking set, [4] = the page key, [5] = committed ('1' |
// '0'), then per marked record: id, '', ''. Returns 1 when the page was in the marks (this call settled it), else 0.
const MARK_SETTLE_SCRIPT = `${SEEN_SET_LUA}
local had = redis.call('HDEL', ARGV[2], ARGV[4])
redis.call('ZREM', ARGV[3], ARGV[4])
if had == 1 and ARGV[5] == '0' and #ARGV > 5 then
  local recs = {}
  for i = 6, #ARGV do recs[#recs + 1] = ARGV[i] end
  remove_from(ARGV[1], recs)
end
return had
`;

// KEYS[1] = the registry, [2] = the run's drain set. ARGV[1] = the run, [2] = since, [3] = until, [4] = lone wanted
// ('1' | '0'), [5] / [6] = a run's marking set is [5] .. run .. [6]. Returns {'lone' | 'shared', overlapping runs...}.
const REGISTER_SCRIPT = `local sub = string.sub
${PARSE_RUN}
local run, s, u = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local lone = ARGV[4] == '1'
local all = redis.call('HGETALL', KEYS[1])
local drain = {}
for i = 1, #all, 2 do
  local id, v = all[i], all[i + 1]
  if id ~= run then
    local os, ou, mode, st = parse_run(v)
    if st == 'retired' and redis.call('ZCARD', ARGV[5] .. id .. ARGV[6]) == 0 then
      redis.call('HDEL', KEYS[1], id)
    elseif tonumber(os) < u and s < tonumber(ou) then
      lone = false
      drain[#drain + 1] = id
      if mode == 'lone' then redis.call('HSET', KEYS[1], id, os .. '|' .. ou .. '|shared|' .. st) end
    end
  end
end
local mine = redis.call('HGET', KEYS[1], run)
if mine then
  local _, _, mode = parse_run(mine)
  if mode ~= 'lone' then lone = false end
end
redis.call('HSET', KEYS[1], run, ARGV[2] .. '|' .. ARGV[3] .. '|' .. (lone and 'lone' or 'shared') .. '|active')
if #drain > 0 then
  redis.call('SADD', KEYS[2], unpack(drain))
  redis.call('PEXPIRE', KEYS[2], ${MARKS_TTL_MS})
end
return {lone and 'lone' or 'shared', unpack(drain)}
`;

// KEYS[1] = the registry. ARGV[1] = the run, [2] = its marking set.
const RETIRE_SCRIPT = `local sub = string.sub
${PARSE_RUN}
local v = redis.call('HGET', KEYS[1], ARGV[1])
if not v then return 0 end
if redis.call('ZCARD', ARGV[2]) == 0 then redis.call('HDEL', KEYS[1], ARGV[1]); return 1 end
local s, u = parse_run(v)
redis.call('HSET', KEYS[1], ARGV[1], s .. '|' .. u .. '|shared|retired')
return 2
`;

// KEYS[1] = a slice's marks, ARGV[1] = the session closing it: expire soon when that session owns them, no page left.
const CLOSE_SCRIPT = `
if redis.call('HGET', KEYS[1], 'owner') == ARGV[1] and redis.call('HLEN', KEYS[1]) == 1 then
  redis.call('PEXPIRE', KEYS[1], ${CLOSED_MARKS_TTL_MS})
end
return 0`;

/** The claims by mark of `createRedisPendingMarks`, on its connection, bucket load and process indexes. */
export function createRedisMarkClaims(
  redis: Redis,
  bucketEntries: number,
  indexes: ProcessIndexes,
): MarkClaimsBackend {
  const claimScript = scriptRunner(redis, MARK_CLAIM_SCRIPT);
  const settleScript = scriptRunner(redis, MARK_SETTLE_SCRIPT);
  const registerScript = scriptRunner(redis, REGISTER_SCRIPT);
  const retireScript = scriptRunner(redis, RETIRE_SCRIPT);
  const closeScript = scriptRunner(redis, CLOSE_SCRIPT);
  return {
    async markClaim(q) {
      const r = (await claimScript(q.locks.length, [
        ...q.locks,
        q.set,
        q.registry,
        q.run,
        q.marks,
        q.session,
        q.pageKey,
        String(q.leaseMs),
        q.marking,
        q.value,
        String(bucketEntries),
        ...recordArgs(q.entries, false, indexes.of(q.set)),
      ])) as string[];
      await indexes.learn(q.set);
      const [status, ...states] = r;
      if (status === 'ok') return { status, marked: states.map((s) => s === 'm') };
      if (status === 'shared' || status === 'locked' || status === 'unowned' || status === 'fenced')
        return { status };
      throw new Error(`the claim-by-mark script answered ${JSON.stringify(status)}`);
    },
    async markSettle(q) {
      const had = await settleScript(0, [
        q.set,
        q.marks,
        q.marking,
        q.pageKey,
        q.committed ? '1' : '0',
        ...(q.committed ? [] : recordArgs(q.entries, false, indexes.of(q.set))),
      ]);
      return had === 1;
    },
    async markCommitted(marks, marking, pageKeys) {
      if (pageKeys.length === 0) return;
      await Promise.all([redis.hdel(marks, ...pageKeys), redis.zrem(marking, ...pageKeys)]);
    },
    async openMarks(marks, session) {
      await Promise.all([redis.hset(marks, 'owner', session), redis.pexpire(marks, MARKS_TTL_MS)]);
    },
    async closeMarks(marks, session) {
      await closeScript(1, [marks, session]);
    },
    async readMarks(marks) {
      const all = await redis.hgetall(marks);
      return Object.entries(all).filter(([field]) => field !== 'owner');
    },
    async readMark(marks, pageKey) {
      return (await redis.hget(marks, pageKey)) ?? undefined;
    },
    async marking(key) {
      const [flat, [seconds, micros]] = await Promise.all([
        redis.zrange(key, 0, '999', 'WITHSCORES'),
        redis.time(),
      ]);
      const pages: [string, number][] = [];
      for (let i = 0; i + 1 < flat.length; i += 2) pages.push([flat[i]!, Number(flat[i + 1])]);
      return { pages, now: Number(seconds) * 1000 + Math.floor(Number(micros) / 1000) };
    },
    async register(q) {
      const r = (await registerScript(2, [
        q.registry,
        q.drain,
        q.run,
        String(q.since),
        String(q.until),
        q.lone ? '1' : '0',
        q.markingHead,
        q.markingTail,
      ])) as string[];
      const [mode, ...drain] = r;
      return { lone: mode === 'lone', drain };
    },
    async retire(q) {
      await retireScript(1, [q.registry, q.run, q.marking]);
    },
    async registered(registry) {
      const all = await redis.hgetall(registry);
      return Object.entries(all).map(([run, v]) => ({ run, retired: v.endsWith('|retired') }));
    },
    drainList: (drain) => redis.smembers(drain),
    async clearDrain(drain) {
      await redis.del(drain);
    },
  };
}
