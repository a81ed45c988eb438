/**
 * A Redis store shared by every process (ioredis). Entries are JSON under `<prefix>entry:<key>` with a TTL at their
 * expiry; writes are compare-and-set on `fetchedAt` in one Lua script (an older fetch never overwrites a newer
 * entry, even across processes); the revalidation lock is `SET NX PX` with a token, released only by its holder.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { ServiceError } from '../../foundation/errors/index.js';
import type { CacheEntry, CacheStore } from './cache-store.js';

export interface RedisStoreOptions {
  /** A connected ioredis client (not closed by the store). */
  redis: Redis;
  /** Key prefix of every cache key. @default 'gamedata:cache:' */
  prefix?: string;
}

export const DEFAULT_REDIS_STORE_OPTIONS = { prefix: 'gamedata:cache:' } as const;

const SET_IF_NEWER = `
local cur = redis.call('GET', KEYS[1])
if cur then
  local ok, decoded = pcall(cjson.decode, cur)
  if ok and decoded.fetchedAt and tonumber(decoded.fetchedAt) > tonumber(ARGV[2]) then return 0 end
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
return 1`;

const UNLOCK = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

function wrap<T>(what: string, p: Promise<T>): Promise<T> {
  return p.catch((cause: unknown) => {
    throw new ServiceError(
      `redis cache ${what} failed: ${cause instanceof Error ? cause.message : String(cause)}`,
      'redis',
      {
        cause,
        retriable: true,
      },
    );
  });
}

export function createRedisStore(options: RedisStoreOptions): CacheStore {
  const { redis } = options;
  const prefix = options.prefix ?? DEFAULT_REDIS_STORE_OPTIONS.prefix;
  const entryKey = (key: string): string => `${prefix}entry:${key}`;
  const lockKey = (key: string): string => `${prefix}lock:${key}`;
  return {
    async get(key) {
      const raw = await wrap('get', redis.get(entryKey(key)));
      if (raw === null) return undefined;
      try {
        return JSON.parse(raw) as CacheEntry;
      } catch {
        return undefined; // a corrupt entry is a miss
      }
    },
    async set(key, entry) {
      const ttl = Math.max(1, Math.ceil(entry.expiresAt - Date.now()));
      const written = await wrap(
        'set',
        redis.eval(
          SET_IF_NEWER,
          1,
          entryKey(key),
          JSON.stringify(entry),
          String(entry.fetchedAt),
          String(ttl),
        ),
      );
      return written === 1;
    },
    async delete(key) {
      await wrap('delete', redis.del(entryKey(key)));
    },
    async clear() {
      // SCAN + DEL in pages: never KEYS on a shared server.
      let cursor = '0';
      do {
        const [next, keys] = await wrap(
          'clear',
          redis.scan(cursor, 'MATCH', `${prefix}entry:*`, 'COUNT', 500),
        );
        cursor = next;
        if (keys.length > 0) await wrap('clear', redis.del(...keys));
      } while (cursor !== '0');
    },
    async tryLock(key, ttlMs) {
      const token = randomUUID();
      const ok = await wrap(
        'lock',
        redis.set(lockKey(key), token, 'PX', Math.max(1, Math.ceil(ttlMs)), 'NX'),
      );
      return ok === 'OK' ? token : undefined;
    },
    async unlock(key, token) {
      await wrap('unlock', redis.eval(UNLOCK, 1, lockKey(key), token));
    },
  };
}
