/**
 * The Lua scripts of the shared budget (each one atomic in Redis). Queue items are JSON
 * `{ id, r: reply process, p: priority rank, m: procedure, i: input }`.
 */

/**
 * TAKE: KEYS = queues (4), batch key, batches hash; ARGV = max, fetcher id, alive prefix, serial budget (ms),
 * serial work in flight ('1' or '0').
 * Pops up to `max` items highest priority first (FIFO within one), drops items whose caller process is gone,
 * and files the rest under the batch key (so a new fetcher can re-queue them if this one dies). An item's serial
 * feed cost (`s`, ms) counts against the budget: an item that would pass it is put back at the front of its queue in
 * its order (issue 32), except the first serial item when none is in flight; at most 200 are passed over per queue.
 */
export const TAKE = `
local max = tonumber(ARGV[1])
local budget = tonumber(ARGV[4])
local inFlight = ARGV[5] == '1'
local serial = 0
local out = {}
local alive = {}
for qi = 1, 4 do
  local passed = {}
  while #out < max do
    local item = redis.call('LPOP', KEYS[qi])
    if not item then break end
    local ok, obj = pcall(cjson.decode, item)
    if ok and type(obj) == 'table' then
      local r = tostring(obj['r'])
      if alive[r] == nil then alive[r] = redis.call('EXISTS', ARGV[3] .. r) == 1 end
      if alive[r] then
        local s = tonumber(obj['s']) or 0
        if budget ~= nil and s > 0 and serial + s > budget and (serial > 0 or inFlight) then
          passed[#passed + 1] = item
          if #passed >= 200 then break end
        else
          serial = serial + s
          out[#out + 1] = item
        end
      end
    end
  end
  for j = #passed, 1, -1 do redis.call('LPUSH', KEYS[qi], passed[j]) end
end
if #out > 0 then
  redis.call('RPUSH', KEYS[5], unpack(out))
  redis.call('HSET', KEYS[6], KEYS[5], ARGV[2])
end
return out
`;

/**
 * RECOVER: KEYS = queues (4), batches hash; ARGV = alive prefix, own id.
 * Puts the batches of fetchers that are gone back at the front of their queues, in their order.
 */
export const RECOVER = `
local entries = redis.call('HGETALL', KEYS[5])
local moved = 0
for i = 1, #entries, 2 do
  local bk, owner = entries[i], entries[i + 1]
  if owner ~= ARGV[2] and redis.call('EXISTS', ARGV[1] .. owner) == 0 then
    local items = redis.call('LRANGE', bk, 0, -1)
    for j = #items, 1, -1 do
      local ok, obj = pcall(cjson.decode, items[j])
      local rank = 0
      if ok and type(obj) == 'table' then rank = tonumber(obj['p']) or 0 end
      if rank < 0 or rank > 3 then rank = 0 end
      redis.call('LPUSH', KEYS[1 + rank], items[j])
      moved = moved + 1
    end
    redis.call('DEL', bk)
    redis.call('HDEL', KEYS[5], bk)
  end
end
return moved
`;

/** RENEW: KEYS = leader; ARGV = id, lease ms. 1 when the caller still holds the lease. */
export const RENEW = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
`;

/** RELEASE: KEYS = leader; ARGV = id. Frees the lease only for its holder. */
export const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;
