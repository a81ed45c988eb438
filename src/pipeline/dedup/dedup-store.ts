/**
 * The seen-set behind "published once": a record is identified by `_id` (immutable resources) or by `_id` and its
 * version (resources whose records change: a newer version flows on, a repeat or an older version does not; one
 * entry per entity holds its latest version). One seen-set per resource (`<prefix>:seen:<resource>`), stored in the
 * compact layout of `redis-seen-set.ts` (8 bytes per record, 13 per entity, plus bucket overhead).
 *
 * Order in the worker: `claim` (drop the seen) -> publish -> ack -> `markSeen` -> `release`. A crash between the
 * ack and `markSeen` republishes those records once: the only window the delivery promise allows.
 */
import { ConfigError } from '../../foundation/errors/index.js';
import { RESOURCE_INFO, recordVersion, type ResourceName } from '../../foundation/models/index.js';
import type { LockClaim, SeenEntry, SeenSetBackend } from './redis-seen-set.js';
import { encodeVersion, parseObjectId, versionCovered, versionReplaces } from './seen-encoding.js';

/** The minimal record shape dedup reads. */
export type DedupRecord = Record<string, unknown> & { _id?: unknown };

/**
 * Whether the record has an `_id` the seen-set can key (a non-empty string or a number); records without one are
 * never deduplicated, marked or locked. The one rule of the dedup store, the pending marks and the slices.
 */
export function hasDedupId(record: DedupRecord): boolean {
  return (typeof record._id === 'string' && record._id !== '') || typeof record._id === 'number';
}

/** The dedup key of one record: `_id` or `_id@version`. */
export function dedupKey(resource: ResourceName, record: DedupRecord): string {
  const id =
    typeof record._id === 'string' ? record._id : typeof record._id === 'number' ? String(record._id) : '';
  const version = recordVersion(resource, record);
  return version === '' ? id : `${id}@${version}`;
}

/** A record as the seen-set stores it: its `_id` as text and its version ('' for immutable resources). */
export function seenEntry(resource: ResourceName, record: DedupRecord): SeenEntry {
  const id =
    typeof record._id === 'string' ? record._id : typeof record._id === 'number' ? String(record._id) : '';
  return { id, version: recordVersion(resource, record) };
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
  /**
   * Changing resources: per record, whether the global seen-set holds a strictly newer version of its entity (one
   * was published, or dead-lettered, since). False for immutable resources, records without `_id` or a version, and
   * ids kept in the exact fallback (text versions compare only for equality). `dlq replay` asks it before it
   * republishes a stored copy (issue 48). @default absent (no check)
   */
  newerSeen?(resource: ResourceName, records: readonly DedupRecord[]): Promise<boolean[]>;
}

/** The smallest version above `version` (`updatedAt` + 1 ms, `__v` + 1), or undefined when it has no order. */
export function nextVersion(version: string): string | undefined {
  if (/^\d+$/.test(version)) return String(Number(version) + 1);
  const ms = Date.parse(version);
  return Number.isFinite(ms) ? new Date(ms + 1).toISOString() : undefined;
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

/** One set of the in-memory backend: per `_id`, its latest version code and/or its fallback version text. */
export type MemorySeenSet = Map<string, { code?: number; text?: string }>;

/**
 * An in-memory backend for unit tests and dry runs, with the Redis backend's rules: ObjectIds with an encodable
 * version compare by version code (same or older = covered), anything else by exact text.
 */
export function createMemorySeenSet(): SeenSetBackend & {
  sets: Map<string, MemorySeenSet>;
  locks: Map<string, { owner: string; until: number }>;
} {
  const sets = new Map<string, MemorySeenSet>();
  const locks = new Map<string, { owner: string; until: number }>();
  const compactCode = (versioned: boolean, e: SeenEntry): number | undefined =>
    parseObjectId(e.id) === undefined ? undefined : versioned ? encodeVersion(e.version) : 0;
  const covered = (name: string, versioned: boolean, e: SeenEntry): boolean => {
    const stored = sets.get(name)?.get(e.id);
    if (stored === undefined) return false;
    const code = compactCode(versioned, e);
    if (code === undefined) return stored.text === (versioned ? e.version : '');
    return stored.code !== undefined && versionCovered(stored.code, code);
  };
  return {
    sets,
    locks,
    claimLocks: (name, versioned, entries, keys, owner, ttlMs) =>
      Promise.resolve(
        keys.map((k, i): LockClaim => {
          if (covered(name, versioned, entries[i]!)) return 'seen';
          const held = locks.get(k);
          if (held !== undefined && held.until > Date.now()) return 'busy';
          locks.set(k, { owner, until: Date.now() + ttlMs });
          return 'locked';
        }),
      ),
    unlock: (keys, owner) => {
      for (const k of keys) if (locks.get(k)?.owner === owner) locks.delete(k);
      return Promise.resolve();
    },
    has: (name, versioned, entries) => Promise.resolve(entries.map((e) => covered(name, versioned, e))),
    add: (names, versioned, entries) => {
      for (const n of names) {
        const s: MemorySeenSet = sets.get(n) ?? (new Map() as MemorySeenSet);
        for (const e of entries) {
          const stored = s.get(e.id) ?? {};
          const code = compactCode(versioned, e);
          if (code === undefined) stored.text = versioned ? e.version : '';
          else if (stored.code === undefined || versionReplaces(stored.code, code)) stored.code = code;
          s.set(e.id, stored);
        }
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

/** See `DedupStore.newerSeen`: "covered at the next version up" is "a version above this one is seen". */
async function newerSeenIn(
  backend: SeenSetBackend,
  name: string,
  resource: ResourceName,
  records: readonly DedupRecord[],
): Promise<boolean[]> {
  if (RESOURCE_INFO[resource].dedup !== 'version') return records.map(() => false);
  const probes = records.map((r) => {
    const entry = hasDedupId(r) ? seenEntry(resource, r) : undefined;
    const next = entry === undefined || entry.version === '' ? undefined : nextVersion(entry.version);
    return entry === undefined || next === undefined ? undefined : { id: entry.id, version: next };
  });
  const asked = probes.filter((p) => p !== undefined);
  const answers = asked.length === 0 ? [] : await backend.has(name, true, asked);
  let i = 0;
  return probes.map((p) => (p === undefined ? false : answers[i++] === true));
}

/**
 * A page's records by dedup key, the first occurrence of each (in-page repeats dropped), and those without an `_id`,
 * which cannot be recognised again: they always pass (they will be dead-lettered).
 */
function firstOfEach<T extends DedupRecord>(
  resource: ResourceName,
  records: readonly T[],
): { byKey: Map<string, T>; anonymous: T[] } {
  const byKey = new Map<string, T>();
  const anonymous: T[] = [];
  for (const rec of records) {
    if (!hasDedupId(rec)) {
      anonymous.push(rec);
      continue;
    }
    const k = `${resource}/${dedupKey(resource, rec)}`;
    if (!byKey.has(k)) byKey.set(k, rec);
  }
  return { byKey, anonymous };
}

/** The seen-sets' names under a prefix: the global one, a `--replay` run's, and those a mark goes to. */
function seenSetNames(prefix: string): {
  globalSet: (r: ResourceName) => string;
  scopedSet: (r: ResourceName, scope: string) => string;
  setsFor: (r: ResourceName, o?: ClaimOptions) => string[];
} {
  const globalSet = (r: ResourceName): string => `${prefix}:seen:${r}`;
  const scopedSet = (r: ResourceName, scope: string): string => `${prefix}:seen:${r}:run:${scope}`;
  return {
    globalSet,
    scopedSet,
    setsFor: (r, o) => (o?.scope === undefined ? [globalSet(r)] : [globalSet(r), scopedSet(r, o.scope)]),
  };
}

/** The seen-set entries of keyed candidates. */
function entriesOf<T extends DedupRecord>(
  resource: ResourceName,
  candidates: readonly [string, T][],
): SeenEntry[] {
  return candidates.map(([, rec]) => seenEntry(resource, rec));
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
  const { globalSet, scopedSet, setsFor } = seenSetNames(prefix);

  return {
    async claim<T extends DedupRecord>(resource: ResourceName, records: readonly T[], o?: ClaimOptions) {
      const { byKey, anonymous } = firstOfEach(resource, records);
      // Wait for other slices of this process that are publishing the same keys.
      const waits = [...byKey.keys()].map((k) => inFlight.get(k)).filter((p) => p !== undefined);
      if (waits.length > 0) await Promise.all(waits);
      const versioned = RESOURCE_INFO[resource].dedup === 'version';
      const name = o?.scope === undefined ? globalSet(resource) : scopedSet(resource, o.scope);
      const fresh: T[] = [...anonymous];
      let done!: () => void;
      const settled = new Promise<void>((resolve) => (done = resolve));
      // Nothing is awaited between this check and taking the keys: no other slice of this process can slip in.
      let candidates = [...byKey.entries()].filter(([k]) => !inFlight.has(k));
      for (const [k] of candidates) inFlight.set(k, settled);
      const mine: string[] = [];
      const locked: string[] = [];
      try {
        if (backend.claimLocks === undefined) {
          const seen = await backend.has(name, versioned, entriesOf(resource, candidates));
          candidates.forEach(([k, rec], i) => {
            if (seen[i] === true) {
              if (inFlight.get(k) === settled) inFlight.delete(k);
            } else {
              mine.push(k);
              fresh.push(rec);
            }
          });
          candidates = [];
        }
        // Other processes: the seen check and a lock per key in one script call; a key locked elsewhere is asked
        // again until it is seen (the other process published it) or its lock is gone (it failed, or died and the
        // lock expired).
        while (candidates.length > 0 && backend.claimLocks !== undefined) {
          const states = await backend.claimLocks(
            name,
            versioned,
            entriesOf(resource, candidates),
            candidates.map(([k]) => lockKey(k)),
            owner,
            lockTtlMs,
          );
          const rest: [string, T][] = [];
          candidates.forEach(([k, rec], i) => {
            if (states[i] === 'locked') {
              locked.push(lockKey(k));
              mine.push(k);
              fresh.push(rec);
            } else if (states[i] === 'seen') {
              if (inFlight.get(k) === settled) inFlight.delete(k);
            } else rest.push([k, rec]);
          });
          candidates = rest;
          if (rest.length > 0) await new Promise((r) => setTimeout(r, lockPollMs));
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
        RESOURCE_INFO[resource].dedup === 'version',
        records.filter(hasDedupId).map((r) => seenEntry(resource, r)),
      );
    },
    async reset(resource, scopes = []) {
      await backend.drop([globalSet(resource), ...scopes.map((s) => scopedSet(resource, s))]);
    },
    newerSeen: (resource, records) => newerSeenIn(backend, globalSet(resource), resource, records),
  };
}
