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
  const id = typeof record._id === 'string' ? record._id : typeof record._id === 'number' ? String(record._id) : '';
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
  claim<T extends DedupRecord>(resource: ResourceName, records: readonly T[], options?: ClaimOptions): Promise<Claim<T>>;
  markSeen(resource: ResourceName, records: readonly DedupRecord[], options?: ClaimOptions): Promise<void>;
  /** Forgets everything seen for the resource (and the given scopes). */
  reset(resource: ResourceName, scopes?: readonly string[]): Promise<void>;
}

export interface DedupStoreOptions {
  /** Key prefix in Redis. @default 'gamedata' */
  prefix?: string;
}

export const DEFAULT_DEDUP_STORE_OPTIONS: Required<DedupStoreOptions> = { prefix: 'gamedata' };

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
  };
}

/** An in-memory backend for unit tests and dry runs. */
export function createMemorySeenSet(): SeenSetBackend & { sets: Map<string, Set<string>> } {
  const sets = new Map<string, Set<string>>();
  return {
    sets,
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
 * Creates the dedup store. Besides the seen-set it tracks keys in flight in this process: when two slices read
 * the same record at once (a trade under its buyer and its seller), the second waits for the first's outcome
 * instead of publishing it again.
 */
export function createDedupStore(backend: SeenSetBackend, options: DedupStoreOptions = {}): DedupStore {
  const prefix = options.prefix ?? DEFAULT_DEDUP_STORE_OPTIONS.prefix;
  if (prefix === '') throw new ConfigError('option prefix must be a non-empty string, got ""');
  const inFlight = new Map<string, Promise<void>>();
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
      const mine: string[] = [];
      entries.forEach(([k, rec], i) => {
        if (seen[i] === true || inFlight.has(k)) return;
        inFlight.set(k, settled);
        mine.push(k);
        fresh.push(rec);
      });
      let released = false;
      return {
        fresh,
        repeats: records.length - fresh.length,
        release() {
          if (released) return;
          released = true;
          for (const k of mine) if (inFlight.get(k) === settled) inFlight.delete(k);
          done();
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
