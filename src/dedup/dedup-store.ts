/**
 * The seen-set behind "published once": a record is identified by `_id` (immutable resources) or
 * `_id@updatedAt` (resources whose records change, so a new version flows on while a repeat does not).
 * Keys live in one Redis set per resource (`<prefix>:seen:<resource>`).
 *
 * Order in the worker: `claim` (drop the seen) -> publish -> ack -> `markSeen` -> `release`. A crash between the
 * ack and `markSeen` republishes those records once: the only window the delivery promise allows.
 */
import type { Redis } from 'ioredis';
import { ConfigError } from '../errors.js';
import { recordVersion, type ResourceName } from '../models/resources.js';

/** The minimal record shape dedup reads. */
export type DedupRecord = Record<string, unknown> & { _id?: unknown };

function hasId(record: DedupRecord): boolean {
  return (typeof record._id === 'string' && record._id !== '') || typeof record._id === 'number';
}

/** The dedup key of one record: `_id` or `_id@version`. */
export function dedupKey(resource: ResourceName, record: DedupRecord): string {
  const id =
    typeof record._id === 'string' ? record._id : typeof record._id === 'number' ? String(record._id) : '';
  const version = recordVersion(resource, record);
  return version === '' ? id : `${id}@${version}`;
}

/** Where seen keys are stored: Redis in production, a Set in unit tests. */
export interface SeenSetBackend {
  /** For each key, whether it is in the set `name`. */
  has(name: string, keys: readonly string[]): Promise<boolean[]>;
  /** Adds the keys to every set in `names`. */
  add(names: readonly string[], keys: readonly string[]): Promise<void>;
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

export interface ClaimOptions {
  /**
   * Check a run-scoped set instead of the global one (`--replay`: publish what earlier runs published, but still
   * only once within this run). Marks always go to the global set too.
   */
  scope?: string;
}

export interface Claim<T> {
  /** Records not seen before (in Redis, earlier in this page, or in flight in another slice of this process). */
  fresh: T[];
  /** How many records were dropped as repeats. */
  repeats: number;
  /** Ends the in-flight claim (call after markSeen, or on failure). */
  release(): void;
}

export interface DedupStore {
  claim<T extends DedupRecord>(
    resource: ResourceName,
    records: readonly T[],
    options?: ClaimOptions,
  ): Promise<Claim<T>>;
  markSeen(resource: ResourceName, records: readonly DedupRecord[], options?: ClaimOptions): Promise<void>;
  /** Forgets everything seen for the resource (and the given scopes). */
  reset(resource: ResourceName, scopes?: readonly string[]): Promise<void>;
}

export interface DedupStoreOptions {
  /** Key prefix in Redis. @default 'gamedata' */
  prefix?: string;
  /**
   * How long a cross-process in-flight lock lives if its holder dies (it is released right after `markSeen`).
   * Longer than publishing one page takes; about the slice lock, so a crashed worker's records are free by the time
   * its slices resume. @default 30000
   */
  lockTtlMs?: number;
  /** How often a record locked by another process is checked again. @default 100 */
  lockPollMs?: number;
  /** Identifies this process's locks. @default `<pid>-<random>` */
  owner?: string;
}

export const DEFAULT_DEDUP_STORE_OPTIONS = {
  prefix: 'gamedata',
  lockTtlMs: 30_000,
  lockPollMs: 100,
} as const;

const LOCK_SCRIPT = `local r = {} for i, k in ipairs(KEYS) do if redis.call('set', k, ARGV[1], 'PX', ARGV[2], 'NX') then r[i] = 1 else r[i] = 0 end end return r`;
const UNLOCK_SCRIPT = `for i, k in ipairs(KEYS) do if redis.call('get', k) == ARGV[1] then redis.call('del', k) end end return 0`;

/** A Redis seen-set backend (SMISMEMBER / SADD; Redis >= 6.2). */
export function createRedisSeenSet(redis: Redis): SeenSetBackend {
  return {
    async has(name, keys) {
      if (keys.length === 0) return [];
      const r = await redis.smismember(name, ...keys);
      return r.map((x) => x === 1);
    },
    async add(names, keys) {
      if (keys.length === 0) return;
      const tx = redis.multi();
      for (const n of names) tx.sadd(n, ...keys);
      await tx.exec();
    },
    async drop(names) {
      if (names.length > 0) await redis.del(...names);
    },
    async lock(keys, owner, ttlMs) {
      if (keys.length === 0) return [];
      // One script call per page instead of a MULTI of one SET per key (a hundred commands for ioredis to build,
      // write and parse); the same SET NX PX per key, atomically.
      const got = (await redis.eval(LOCK_SCRIPT, keys.length, ...keys, owner, String(ttlMs))) as number[];
      return keys.map((_, i) => got[i] === 1);
    },
    async unlock(keys, owner) {
      if (keys.length > 0) await redis.eval(UNLOCK_SCRIPT, keys.length, ...keys, owner);
    },
  };
}

/** An in-memory backend for unit tests and dry runs. */
export function createMemorySeenSet(): SeenSetBackend & {
  sets: Map<string, Set<string>>;
  locks: Map<string, { owner: string; until: number }>;
} {
  const sets = new Map<string, Set<string>>();
  const locks = new Map<string, { owner: string; until: number }>();
  return {
    sets,
    locks,
    lock: (keys, owner, ttlMs) =>
      Promise.resolve(
        keys.map((k) => {
          const held = locks.get(k);
          if (held !== undefined && held.until > Date.now()) return false;
          locks.set(k, { owner, until: Date.now() + ttlMs });
          return true;
        }),
      ),
    unlock: (keys, owner) => {
      for (const k of keys) if (locks.get(k)?.owner === owner) locks.delete(k);
      return Promise.resolve();
    },
    has: (name, keys) => Promise.resolve(keys.map((k) => sets.get(name)?.has(k) ?? false)),
    add: (names, keys) => {
      for (const n of names) {
        const s = sets.get(n) ?? new Set<string>();
        for (const k of keys) s.add(k);
        sets.set(n, s);
      }
      return Promise.resolve();
    },
    drop: (names) => {
      for (const n of names) sets.delete(n);
      return Promise.resolve();
    },
  };
}

/**
 * Creates the dedup store. Besides the seen-set it tracks keys in flight: when two slices read the same record at
 * once (a trade under its buyer and its seller), the second waits for the first's outcome instead of publishing
 * it again. Within a process through promises; across processes through short-lived Redis locks (when the backend
 * has them), released right after `markSeen`.
 */
export function createDedupStore(backend: SeenSetBackend, options: DedupStoreOptions = {}): DedupStore {
  const prefix = options.prefix ?? DEFAULT_DEDUP_STORE_OPTIONS.prefix;
  if (prefix === '') throw new ConfigError('option prefix must be a non-empty string, got ""');
  const inFlight = new Map<string, Promise<void>>();
  const lockTtlMs = options.lockTtlMs ?? DEFAULT_DEDUP_STORE_OPTIONS.lockTtlMs;
  const lockPollMs = options.lockPollMs ?? DEFAULT_DEDUP_STORE_OPTIONS.lockPollMs;
  const owner = options.owner ?? `${process.pid}-${Math.random().toString(36).slice(2, 10)}`;
  const lockKey = (k: string): string => `${prefix}:inflight:${k}`;
  const globalSet = (r: ResourceName): string => `${prefix}:seen:${r}`;
  const scopedSet = (r: ResourceName, scope: string): string => `${prefix}:seen:${r}:run:${scope}`;
  const setsFor = (r: ResourceName, o?: ClaimOptions): string[] =>
    o?.scope === undefined ? [globalSet(r)] : [globalSet(r), scopedSet(r, o.scope)];

  return {
    async claim<T extends DedupRecord>(resource: ResourceName, records: readonly T[], o?: ClaimOptions) {
      // In-page repeats first: the first occurrence wins.
      const byKey = new Map<string, T>();
      // A record without an `_id` cannot be recognised again: it always passes (it will be dead-lettered).
      const anonymous: T[] = [];
      for (const rec of records) {
        if (!hasId(rec)) {
          anonymous.push(rec);
          continue;
        }
        const k = `${resource}/${dedupKey(resource, rec)}`;
        if (!byKey.has(k)) byKey.set(k, rec);
      }
      // Wait for other slices of this process that are publishing the same keys, then read the seen-set.
      const waits = [...byKey.keys()].map((k) => inFlight.get(k)).filter((p) => p !== undefined);
      if (waits.length > 0) await Promise.all(waits);
      const entries = [...byKey.entries()].filter(([k]) => !inFlight.has(k));
      const name = o?.scope === undefined ? globalSet(resource) : scopedSet(resource, o.scope);
      const seen = await backend.has(
        name,
        entries.map(([k]) => k.slice(resource.length + 1)),
      );
      const fresh: T[] = [...anonymous];
      let done!: () => void;
      const settled = new Promise<void>((resolve) => (done = resolve));
      let candidates: [string, T][] = [];
      entries.forEach(([k, rec], i) => {
        if (seen[i] === true || inFlight.has(k)) return;
        inFlight.set(k, settled);
        candidates.push([k, rec]);
      });
      const mine: string[] = [];
      const locked: string[] = [];
      const acquired: [string, T][] = [];
      try {
        // Other processes: take a lock per key; a key locked elsewhere is waited for until it is seen (the other
        // process published it) or its lock is gone (it failed, or died and the lock expired).
        while (candidates.length > 0 && backend.lock !== undefined) {
          const got = await backend.lock(
            candidates.map(([k]) => lockKey(k)),
            owner,
            lockTtlMs,
          );
          const rest: [string, T][] = [];
          candidates.forEach(([k, rec], i) => {
            if (got[i] === true) {
              locked.push(lockKey(k));
              acquired.push([k, rec]);
            } else rest.push([k, rec]);
          });
          if (rest.length === 0) break;
          await new Promise((r) => setTimeout(r, lockPollMs));
          const nowSeen = await backend.has(
            name,
            rest.map(([k]) => k.slice(resource.length + 1)),
          );
          candidates = [];
          rest.forEach(([k, rec], i) => {
            if (nowSeen[i] === true) {
              if (inFlight.get(k) === settled) inFlight.delete(k);
            } else candidates.push([k, rec]);
          });
        }
        if (backend.lock === undefined) {
          for (const [k, rec] of candidates) {
            mine.push(k);
            fresh.push(rec);
          }
        } else if (acquired.length > 0) {
          // Another process may have published and released between our read of the seen-set and our lock.
          const again = await backend.has(
            name,
            acquired.map(([k]) => k.slice(resource.length + 1)),
          );
          acquired.forEach(([k, rec], i) => {
            mine.push(k);
            if (again[i] !== true) fresh.push(rec);
          });
        }
      } catch (error) {
        for (const [k] of [...candidates, ...mine.map((m) => [m] as const)])
          if (inFlight.get(k) === settled) inFlight.delete(k);
        done();
        if (locked.length > 0 && backend.unlock) await backend.unlock(locked, owner).catch(() => undefined);
        throw error;
      }
      let released = false;
      return {
        fresh,
        repeats: records.length - fresh.length,
        release() {
          if (released) return;
          released = true;
          for (const k of mine) if (inFlight.get(k) === settled) inFlight.delete(k);
          done();
          // Best effort: a lock that is not deleted expires after lockTtlMs.
          if (locked.length > 0 && backend.unlock) void backend.unlock(locked, owner).catch(() => undefined);
        },
      };
    },
    async markSeen(resource, records, o) {
      await backend.add(
        setsFor(resource, o),
        records.filter(hasId).map((r) => dedupKey(resource, r)),
      );
    },
    async reset(resource, scopes = []) {
      await backend.drop([globalSet(resource), ...scopes.map((s) => scopedSet(resource, s))]);
    },
  };
}
