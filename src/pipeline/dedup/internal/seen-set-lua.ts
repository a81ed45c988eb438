/**
 * The Lua shared by the seen-set's scripts (`redis-seen-set.ts`) and the pending-marks scripts
 * (`redis-pending-marks.ts`): the compact layout's helpers, mirroring `seen-encoding.ts` (entryHash, bucketHash,
 * bucketAddress, versionCovered, versionReplaces), a lookup (`seen_in`) and an insert (`add_to`). Plus the runner
 * that calls a script by its SHA1.
 */
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import {
  bucketHash,
  encodeVersion,
  idEntry,
  MAX_PROCESS_INDEX,
  MIN_LEVEL,
  parseObjectId,
  processPart,
} from '../seen-encoding.js';
import type { SeenEntry } from '../seen-encoding.js';

/** Helpers and the `seen_in` / `add_to` functions; every script of the compact layout starts with it. */
export const SEEN_SET_LUA = `
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
-- An id argument (see recordArgs): 'o' .. the 12 bytes of a canonical ObjectId (then optionally its entry and 40-bit
-- bucket hash, 13 bytes: a hint), or 't' .. any other id's text. Returns the bytes or the text.
local function idarg(a)
  if byte(a, 1) == 111 then return sub(a, 2, 13), nil end
  return nil, sub(a, 2)
end
-- The text of an ObjectId's bytes (for the exact fallback and the old layout, which key ObjectIds by their text).
local function hex(b12) return (string.gsub(b12, '.', function(c) return string.format('%02x', byte(c)) end)) end
local function meta(base)
  local m = redis.call('HMGET', base .. ':v2:meta', 'L', 'S', 'n')
  return tonumber(m[1]) or MIN_LEVEL, tonumber(m[2]) or 0, tonumber(m[3]) or 0
end
-- The compact entry of an ObjectId's bytes (b12) whose process part has the index pi, in the set \`name\` (L, S: its
-- table): the entry, its bucket's key, the bucket (read once per call: \`buckets\` keeps what this call has read) and
-- the entry's position in it (nil when absent).
local function entry_of(b12, pi)
  return string.char(bit.band(bit.bxor(byte(b12, 11), byte(b12, 4)), 255)) .. sub(b12, 1, 4) .. sub(b12, 10, 10) .. pi
end
local function bucket_key(name, e, b12, L, S) return name .. ':v2:b:' .. address(e, byte(b12, 12), L, S) end
-- The entry and bucket key of the id argument \`a\` (bytes b12, process index pi): from its hint when the hint was
-- computed with this very index (recordArgs; the hash is of the entry, which holds the index), else here.
local function entry_key(name, a, b12, pi, L, S)
  if #a == 26 and sub(a, 20, 21) == pi then
    local H = u40(a, 22)
    local x = H % (2 ^ L)
    if x < S then x = H % (2 ^ (L + 1)) end
    return sub(a, 14, 21), name .. ':v2:b:' .. x
  end
  local e = entry_of(b12, pi)
  return e, bucket_key(name, e, b12, L, S)
end
local function locate(name, a, b12, pi, L, S, w, buckets)
  local e, key = entry_key(name, a, b12, pi, L, S)
  local b = buckets[key]
  if b == nil then b = redis.call('GET', key) or ''; buckets[key] = b end
  return e, key, b, find(b, e, w)
end

-- Whether the record (a = id argument, code, raw) is covered by the set \`name\` (L, S: its table; legacy: its old-layout set exists;
-- cache: the buckets and process indexes this call has read; bucket keys and 5-byte process parts never collide).
local function seen_in(name, w, L, S, legacy, cache, a, code, raw)
  local b12, id = idarg(a)
  local seen, compact = 0, false
  if b12 and (w == 8 or code ~= '') then
    local part = sub(b12, 5, 9)
    -- The process dictionary has a handful of entries: each is read once per call.
    local pi = cache[part]
    if pi == nil then pi = redis.call('HGET', name .. ':v2:proc', part); cache[part] = pi end
    if pi then
      compact = true
      local _, _, b, p = locate(name, a, b12, pi, L, S, w, cache)
      if p and (w == 8 or covered(u40(b, p + 8), tonumber(code))) then seen = 1 end
    end
  end
  if not compact then
    id = id or hex(b12)
    if w == 8 then seen = redis.call('SISMEMBER', name .. ':v2:odd', id)
    elseif redis.call('HGET', name .. ':v2:odd', id) == raw then seen = 1 end
  end
  if seen == 0 and legacy then
    id = id or hex(b12)
    local member = id
    if w == 13 and raw ~= '' then member = id .. '@' .. raw end
    seen = redis.call('SISMEMBER', name, member)
  end
  return seen
end

-- Linear hashing: splits bucket S into S and S + 2^L until the set's n entries are back under \`load\` a bucket on
-- average, then writes the table (L, S, n). Every entry of bucket S has an address = S mod 2^L, so the address's low
-- byte (L >= 8) is the hash's low byte.
local function grow(base, w, load, L, S, n)
  while n > load * (2 ^ L + S) do
    local half = 2 ^ L
    local src, dst = base .. ':v2:b:' .. S, base .. ':v2:b:' .. (S + half)
    local b = redis.call('GET', src) or ''
    local keep, move, had = {}, {}, {}
    for p = 1, #b, w do
      local e = sub(b, p, p + w - 1)
      -- A copy (an id appended twice, see above) is dropped here; a changing entity is never stored twice.
      if w == 13 or not had[e] then
        had[e] = true
        local H = ehash(e) * 256 + S % 256
        if H % (2 * half) == S then keep[#keep + 1] = e else move[#move + 1] = e end
      else n = n - 1 end
    end
    if #keep > 0 then redis.call('SET', src, table.concat(keep)) else redis.call('DEL', src) end
    if #move > 0 then redis.call('SET', dst, table.concat(move)) end
    S = S + 1
    if S == half then L = L + 1; S = 0 end
  end
  redis.call('HSET', base .. ':v2:meta', 'L', L, 'S', S, 'n', n)
end

-- Adds the records of \`recs\` (flat: id argument, code, raw, ...) to the set \`base\`; a changing entity keeps
-- its latest version. \`blind\`: the caller found these records absent under its own locks (a settle's mark into
-- the set its claim checked), so immutable ones are appended unread. Then splits buckets until the average load is
-- back under \`load\`.
local function add_to(base, w, load, recs, blind)
  local L, S, n = meta(base)
  local buckets, dirty, procs = {}, {}, {}
  for r = 1, #recs, 3 do
    local b12, id = idarg(recs[r])
    local code, raw = recs[r + 1], recs[r + 2]
    local compact = false
    if b12 and (w == 8 or code ~= '') then
      local part = sub(b12, 5, 9)
      local pi = procs[part]
      if pi == nil then
        pi = redis.call('HGET', base .. ':v2:proc', part)
        if not pi then
          local next = redis.call('HINCRBY', base .. ':v2:meta', 'pn', 1)
          if next <= MAX_PI then
            pi = string.char(math.floor(next / 256), next % 256)
            redis.call('HSET', base .. ':v2:proc', part, pi)
          end
        end
        procs[part] = pi
      end
      if pi and w == 8 and blind then
        -- An immutable record is appended without reading its bucket: its claim found it unseen under the page's
        -- own lock, so the entry is almost never there already, and one that is (a page settled by a resolver and
        -- by itself) costs 8 bytes and no error: a lookup stops at the first match, and the next split drops the
        -- copy. APPEND runs in C, where GET + concat + SET copied the ~1 KB bucket through Lua twice (the settle:
        -- 22.9 -> 14.7 us of Redis CPU per record, bench/dedup-protocol.ts --split, issue 47). Redis' preallocation
        -- lets an appended bucket hold up to twice its bytes: 14.3 instead of 9.7 bytes per record (the same bench,
        -- 1 M records; issue 17's limit is 16). The AOF logs 8 bytes per record instead of the bucket.
        compact = true
        local e, key = entry_key(base, recs[r], b12, pi, L, S)
        redis.call('APPEND', key, e)
        n = n + 1
      elseif pi then
        compact = true
        local e, key, b, p = locate(base, recs[r], b12, pi, L, S, w, buckets)
        -- A new entry rewrites its bucket once per call (SET of the exact size: APPEND would let Redis preallocate
        -- up to twice the bucket, ~50 % more memory); a newer version of a stored entity is written in place
        -- (SETRANGE: no growth, the AOF logs 5 bytes, not the bucket).
        if not p then
          if w == 8 then b = b .. e else b = b .. e .. vbytes(tonumber(code)) end
          n = n + 1
          buckets[key] = b; dirty[key] = true
        elseif w == 13 then
          local stored, v = u40(b, p + 8), tonumber(code)
          if (stored >= TBASE) ~= (v >= TBASE) or v > stored then
            local vb = vbytes(v)
            if not dirty[key] then redis.call('SETRANGE', key, p + 7, vb) end
            buckets[key] = sub(b, 1, p + 7) .. vb .. sub(b, p + 13)
          end
        end
      end
    end
    if not compact then
      id = id or hex(b12)
      if w == 8 then redis.call('SADD', base .. ':v2:odd', id)
      else redis.call('HSET', base .. ':v2:odd', id, raw) end
    end
  end
  for key in pairs(dirty) do redis.call('SET', key, buckets[key]) end
  grow(base, w, load, L, S, n)
end

-- Removes the immutable records of \`recs\` (flat: id argument, code, raw, ...) from the set \`base\`: the undo of a
-- claim by mark whose page did not commit (mark-claims.ts). Each id was absent when the page marked it and has been
-- present since, so nobody else added it: its one entry goes (a bucket left empty is deleted). Buckets never merge.
local function remove_from(base, recs)
  local L, S, n = meta(base)
  local buckets, dirty = {}, {}
  for r = 1, #recs, 3 do
    local b12, id = idarg(recs[r])
    local gone = false
    if b12 then
      local pi = redis.call('HGET', base .. ':v2:proc', sub(b12, 5, 9))
      if pi then
        local _, key, b, p = locate(base, recs[r], b12, pi, L, S, 8, buckets)
        if p then
          buckets[key] = sub(b, 1, p - 1) .. sub(b, p + 8); dirty[key] = true
          n = n - 1; gone = true
        end
      end
    end
    if not gone then redis.call('SREM', base .. ':v2:odd', id or hex(b12)) end
  end
  for key in pairs(dirty) do
    if #buckets[key] > 0 then redis.call('SET', key, buckets[key]) else redis.call('DEL', key) end
  end
  redis.call('HSET', base .. ':v2:meta', 'n', math.max(n, 0))
end
`;

/** Runs a script by its SHA1 (the body is sent only when Redis does not have it cached yet: NOSCRIPT). */
export function scriptRunner(
  redis: Redis,
  body: string,
): (numKeys: number, args: (string | Buffer)[]) => Promise<unknown> {
  const sha = createHash('sha1').update(body).digest('hex');
  return async (numKeys, args) => {
    try {
      return await redis.evalsha(sha, numKeys, ...args);
    } catch (error) {
      // Redis answers an unknown digest with the error reply `NOSCRIPT ...`: RESP's code is the reply's first word, and
      // ioredis' ReplyError keeps only the reply's text, so the text is read (the library gives nothing else).
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return redis.eval(body, numKeys, ...args);
    }
  };
}

const OBJECT_ID_TAG = Buffer.from('o');
const TEXT_TAG = 't';

/**
 * The script arguments of records: per record its id (a canonical ObjectId as 'o' + its 12 bytes, converted here
 * rather than in Lua, where it cost ~5 us per record and script; any other id as 't' + its text), its version code
 * ('' when it has none) and its version text ('' for immutable resources).
 *
 * `processIndex` (optional) gives the index a set's process dictionary holds for an ObjectId's process part: then the
 * id carries a hint, its entry (8 bytes) and its 40-bit bucket hash (5 bytes), which the scripts use when their own
 * dictionary holds that index (a stale index is ignored: the script computes both itself). The hash in Lua cost ~1.3 us
 * of Redis CPU per record and script (issue 47).
 */
export function recordArgs(
  entries: readonly SeenEntry[],
  versioned: boolean,
  processIndex?: (part: Buffer) => number | undefined,
): (string | Buffer)[] {
  const args: (string | Buffer)[] = [];
  for (const e of entries) {
    const oid = parseObjectId(e.id);
    const code = versioned ? encodeVersion(e.version) : undefined;
    args.push(
      oid === undefined ? TEXT_TAG + e.id : idArg(oid, processIndex?.(processPart(oid))),
      code === undefined ? '' : String(code),
      versioned ? e.version : '',
    );
  }
  return args;
}

/** 'o' + an ObjectId's 12 bytes, then (with its process index) its entry and bucket hash. */
function idArg(oid: Buffer, pi: number | undefined): Buffer {
  if (pi === undefined) return Buffer.concat([OBJECT_ID_TAG, oid]);
  const arg = Buffer.allocUnsafe(26);
  arg[0] = OBJECT_ID_TAG[0]!;
  oid.copy(arg, 1);
  const entry = idEntry(oid, pi);
  entry.copy(arg, 13);
  arg.writeUIntBE(bucketHash(entry, oid[11]!), 21, 5);
  return arg;
}

/**
 * The process indexes of sets' dictionaries (`<set>:v2:proc`), as far as this process has read them, for the hints of
 * {@link recordArgs}: an index once given is never changed while its set exists, and a script checks each hint
 * against its own dictionary anyway. A part not known yet goes without a hint and is read after the script
 * ({@link ProcessIndexes.learn}), so no call waits for it.
 */
export interface ProcessIndexes {
  /** The index `set` gives a process part, when known (an unknown part is noted for {@link learn}). */
  of(set: string): (part: Buffer) => number | undefined;
  /** Reads the indexes of the parts noted unknown since the last call (errors are ignored: hints are optional). */
  learn(set: string): Promise<void>;
  /** Forgets what is known of `set` (it was dropped: a new one gives its own indexes). */
  forget(set: string): void;
}

export function processIndexes(redis: Redis): ProcessIndexes {
  const bySet = new Map<string, { known: Map<string, number>; missing: Map<string, Buffer> }>();
  const stateOf = (set: string): { known: Map<string, number>; missing: Map<string, Buffer> } => {
    let m = bySet.get(set);
    if (m === undefined) bySet.set(set, (m = { known: new Map(), missing: new Map() }));
    return m;
  };
  return {
    of(set) {
      const { known, missing } = stateOf(set);
      return (part) => {
        const k = part.toString('latin1');
        const pi = known.get(k);
        if (pi === undefined && missing.size < 64) missing.set(k, Buffer.from(part));
        return pi;
      };
    },
    async learn(set) {
      const { known, missing } = stateOf(set);
      if (missing.size === 0) return;
      const parts = [...missing.values()];
      missing.clear();
      try {
        const got = await redis.hmgetBuffer(`${set}:v2:proc`, ...parts);
        parts.forEach((part, i) => {
          const v = got[i];
          if (v !== null && v !== undefined && v.length === 2)
            known.set(part.toString('latin1'), v.readUInt16BE(0));
        });
      } catch {
        // A hint is only a saving: the next call without it is exact too.
      }
    },
    forget: (set) => void bySet.delete(set),
  };
}
