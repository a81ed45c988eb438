/**
 * The owners of each slice (`output/kafka/transactions/slice-owners.ts`) in Redis, shared by every process of a deployment: a set
 * `<prefix>:eos:owners:<sliceKey>` of transactional.ids. `enter` is one script (add, then list the others), so of two
 * owners entering at once the second sees the first. A set lives while a slice runs: clean sessions leave it and
 * fenced ids are removed, so it is empty (gone) once the slice is done; a TTL of `ttlMs` bounds what a slice
 * abandoned for good leaves behind.
 */
import type { Redis } from 'ioredis';
import { scriptRunner } from '../dedup/index.js';
import type { SliceOwners } from '../../output/kafka/index.js';

const ENTER = `
redis.call('SADD', KEYS[1], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
local all = redis.call('SMEMBERS', KEYS[1])
local out = {}
for _, id in ipairs(all) do if id ~= ARGV[1] then out[#out + 1] = id end end
return out
`;

export interface RedisSliceOwnersOptions {
  /** Key prefix (the deployment's `GAMEDATA_REDIS_PREFIX`). @default 'gamedata' */
  prefix?: string;
  /** A slice's owner set expires this long after its last owner entered. @default 7 days */
  ttlMs?: number;
}

export function createRedisSliceOwners(redis: Redis, options: RedisSliceOwnersOptions = {}): SliceOwners {
  const prefix = options.prefix ?? 'gamedata';
  const ttlMs = options.ttlMs ?? 7 * 24 * 3_600_000;
  const key = (sliceKey: string): string => `${prefix}:eos:owners:${sliceKey}`;
  const enter = scriptRunner(redis, ENTER);
  return {
    async enter(sliceKey, id) {
      return (await enter(1, [key(sliceKey), id, String(ttlMs)])) as string[];
    },
    list(sliceKey) {
      return redis.smembers(key(sliceKey));
    },
    async leave(sliceKey, ids) {
      if (ids.length > 0) await redis.srem(key(sliceKey), ...ids);
    },
  };
}
