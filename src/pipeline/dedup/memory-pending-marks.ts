/**
 * An in-memory backend of the pending-marks protocol for unit tests, with the Redis scripts' rules (see
 * `redis-pending-marks.ts`) on the in-memory seen-set of `dedup-store.ts`, an injected clock, and every step
 * atomic (steps run one after another).
 */
import { createMemorySeenSet, type MemorySeenSet } from './dedup-store.js';
import type { LockState, PendingMarksBackend } from './pending-marks.js';
import type { MarkClaimsBackend, RegisterAnswer } from './mark-claims.js';
import type { SeenEntry } from './redis-seen-set.js';

export interface MemoryPendingMarksOptions {
  /** The clock leases are measured on (Redis' clock in production). @default Date.now */
  now?: () => number;
}

/** The memory backend and its state, for assertions. */
export interface MemoryPendingMarks extends PendingMarksBackend {
  /** Seen-sets by name. */
  sets: Map<string, MemorySeenSet>;
  /** Locks by key: `<pageKey>|<leaseUntil>|<version text>`. */
  locks: Map<string, string>;
  /** Intents by key: seq -> value. */
  intents: Map<string, Map<number, string>>;
  /** Claims by mark: the slices' marks (field -> value), the runs' marking sets (page key -> lease end), the registries and drain sets. */
  sliceMarks: Map<string, Map<string, string>>;
  markingSets: Map<string, Map<string, number>>;
  registries: Map<string, Map<string, string>>;
  drains: Map<string, Set<string>>;
  /** Slices' marks closed by their owner (Redis lets them expire). */
  closedMarks: Set<string>;
}

/** Creates an in-memory pending-marks backend. */
export function createMemoryPendingMarks(options: MemoryPendingMarksOptions = {}): MemoryPendingMarks {
  const now = options.now ?? Date.now;
  const seen = createMemorySeenSet();
  const locks = new Map<string, string>();
  const intents = new Map<string, Map<number, string>>();
  const markState = createMemoryMarkClaims(seen, locks, now);
  let queue: Promise<unknown> = Promise.resolve();
  // Each step runs alone, as a Redis script does.
  const atomic = <T>(step: () => Promise<T>): Promise<T> => {
    const run = queue.then(step);
    queue = run.catch(() => undefined);
    return run;
  };
  const split = (v: string): { owner: string; until: number; version: string } => {
    const a = v.indexOf('|');
    const b = v.indexOf('|', a + 1);
    return { owner: v.slice(0, a), until: Number(v.slice(a + 1, b)), version: v.slice(b + 1) };
  };
  return {
    sets: seen.sets,
    locks,
    intents,
    ...markState.state,
    ...atomicAll(markState.backend, atomic),
    claim: ({ set, versioned, pageKey, leaseMs, locks: keys, entries, intent }) =>
      atomic(async () => {
        const covered = await seen.has(set, versioned, entries);
        const t = now();
        let stopped = false;
        return keys.map((key, i): LockState => {
          if (stopped) return { state: 'untried' };
          if (covered[i] === true) return { state: 'seen' };
          const held = locks.get(key);
          if (held === undefined || split(held).owner === pageKey) {
            if (intent !== undefined) {
              const fields = intents.get(intent.key) ?? new Map<number, string>();
              fields.set(intent.seq, intent.value);
              intents.set(intent.key, fields);
            }
            locks.set(key, `${pageKey}|${t + leaseMs}|${entries[i]!.version}`);
            return { state: 'mine' };
          }
          stopped = true;
          const { owner, until } = split(held);
          return until < t ? { state: 'expired', owner } : { state: 'wait' };
        });
      }),
    settle: ({ sets, versioned, pageKey, committed, versionFromLock, locks: keys, entries }) =>
      atomic(async () => {
        const marks = [];
        const held: string[] = [];
        for (const [i, key] of keys.entries()) {
          const v = locks.get(key);
          const ours = v !== undefined && split(v).owner === pageKey;
          if (ours) held.push(key);
          if (committed && !versionFromLock) marks.push(entries[i]!);
          else if (committed && ours) marks.push({ id: entries[i]!.id, version: split(v).version });
        }
        if (marks.length > 0) await seen.add(sets, versioned, marks);
        for (const key of held) locks.delete(key);
      }),
    writeIntent: (key, seq, value) =>
      atomic(() => {
        const fields = intents.get(key) ?? new Map<number, string>();
        fields.set(seq, value);
        intents.set(key, fields);
        return Promise.resolve();
      }),
    scanLocks: (keyPrefix) =>
      atomic(() =>
        Promise.resolve({
          cursor: '0',
          locks: [...locks].filter(([key]) => key.startsWith(keyPrefix)),
          now: now(),
        }),
      ),
    readIntent: (key) => atomic(() => Promise.resolve([...(intents.get(key) ?? new Map<number, string>())])),
    clearIntent: (key, seqs) =>
      atomic(() => {
        const fields = intents.get(key);
        for (const s of seqs) fields?.delete(s);
        if (fields?.size === 0) intents.delete(key);
        return Promise.resolve();
      }),
  };
}

/** Every step of `backend` run through `atomic`. */
function atomicAll(
  backend: MarkClaimsBackend,
  atomic: <T>(step: () => Promise<T>) => Promise<T>,
): MarkClaimsBackend {
  const out: Record<string, unknown> = {};
  for (const [name, fn] of Object.entries(backend) as [string, (...a: unknown[]) => Promise<unknown>][])
    out[name] = (...args: unknown[]) => atomic(() => fn(...args));
  return out as unknown as MarkClaimsBackend;
}

const parseRun = (v: string): { since: number; until: number; mode: string; state: string } => {
  const [since, until, mode, state] = v.split('|');
  return { since: Number(since), until: Number(until), mode: mode ?? '', state: state ?? '' };
};

/** The map at `key` of `m`, created empty when absent. */
function of<K, V>(m: Map<string, Map<K, V>>, key: string): Map<K, V> {
  let v = m.get(key);
  if (v === undefined) m.set(key, (v = new Map<K, V>()));
  return v;
}

/** The claims by mark in memory, with the Redis scripts' rules (`redis-mark-claims.ts`). */
function createMemoryMarkClaims(
  seen: ReturnType<typeof createMemorySeenSet>,
  locks: Map<string, string>,
  now: () => number,
): {
  backend: MarkClaimsBackend;
  state: Pick<MemoryPendingMarks, 'sliceMarks' | 'markingSets' | 'registries' | 'drains' | 'closedMarks'>;
} {
  const marks = new Map<string, Map<string, string>>();
  const marking = new Map<string, Map<string, number>>();
  const registries = new Map<string, Map<string, string>>();
  const drains = new Map<string, Set<string>>();
  const closed = new Set<string>();
  const remove = (set: string, entries: readonly SeenEntry[]): void => {
    for (const e of entries) seen.sets.get(set)?.delete(e.id);
  };
  const backend: MarkClaimsBackend = {
    async markClaim(q) {
      const entry = registries.get(q.registry)?.get(q.run);
      if (entry === undefined || parseRun(entry).mode !== 'lone') return { status: 'shared' };
      const owner = marks.get(q.marks)?.get('owner');
      if (owner === undefined) return { status: 'unowned' };
      if (owner !== q.session) return { status: 'fenced' };
      const covered = await seen.has(q.set, false, q.entries);
      const unseen = q.entries.flatMap((_, i) => (covered[i] === true ? [] : [i]));
      if (unseen.some((i) => locks.has(q.locks[i]!))) return { status: 'locked' };
      if (unseen.length > 0) {
        await seen.add(
          [q.set],
          false,
          unseen.map((i) => q.entries[i]!),
        );
        of(marks, q.marks).set(q.pageKey, `${unseen.map((i) => i + 1).join(',')}\n${q.value}`);
        of(marking, q.marking).set(q.pageKey, now() + q.leaseMs);
      }
      return { status: 'ok', marked: q.entries.map((_, i) => covered[i] !== true) };
    },
    markSettle(q) {
      const had = marks.get(q.marks)?.delete(q.pageKey) === true;
      marking.get(q.marking)?.delete(q.pageKey);
      if (had && !q.committed) remove(q.set, q.entries);
      return Promise.resolve(had);
    },
    markCommitted(key, markingKey, pageKeys) {
      for (const k of pageKeys) {
        marks.get(key)?.delete(k);
        marking.get(markingKey)?.delete(k);
      }
      return Promise.resolve();
    },
    closeMarks(key, session) {
      // Redis lets them expire in CLOSED_MARKS_TTL_MS; memory has no clock for keys: closed marks are noted.
      const m = marks.get(key);
      if (m?.get('owner') === session && m.size === 1) closed.add(key);
      return Promise.resolve();
    },
    openMarks(key, session) {
      closed.delete(key);
      of(marks, key).set('owner', session);
      return Promise.resolve();
    },
    readMarks: (key) =>
      Promise.resolve([...(marks.get(key) ?? new Map<string, string>())].filter(([f]) => f !== 'owner')),
    readMark: (key, pageKey) => Promise.resolve(marks.get(key)?.get(pageKey)),
    marking: (key) =>
      Promise.resolve({ pages: [...(marking.get(key) ?? new Map<string, number>())], now: now() }),
    register: (q) => Promise.resolve(registerRun(registries, marking, drains, q)),
    retire(q) {
      const reg = registries.get(q.registry);
      const v = reg?.get(q.run);
      if (reg === undefined || v === undefined) return Promise.resolve();
      if ((marking.get(q.marking)?.size ?? 0) === 0) reg.delete(q.run);
      else {
        const r = parseRun(v);
        reg.set(q.run, `${r.since}|${r.until}|shared|retired`);
      }
      return Promise.resolve();
    },
    registered: (key) =>
      Promise.resolve(
        [...(registries.get(key) ?? new Map<string, string>())].map(([run, v]) => ({
          run,
          retired: v.endsWith('|retired'),
        })),
      ),
    drainList: (key) => Promise.resolve([...(drains.get(key) ?? new Set<string>())]),
    clearDrain(key) {
      drains.delete(key);
      return Promise.resolve();
    },
  };
  return {
    backend,
    state: { sliceMarks: marks, markingSets: marking, registries, drains, closedMarks: closed },
  };
}

/** The registry's step in memory (`redis-mark-claims.ts`' REGISTER_SCRIPT). */
function registerRun(
  registries: Map<string, Map<string, string>>,
  marking: Map<string, Map<string, number>>,
  drains: Map<string, Set<string>>,
  q: Parameters<MarkClaimsBackend['register']>[0],
): RegisterAnswer {
  const of = (key: string): Map<string, string> => {
    let v = registries.get(key);
    if (v === undefined) registries.set(key, (v = new Map<string, string>()));
    return v;
  };
  const reg = of(q.registry);
  let lone = q.lone;
  const drain: string[] = [];
  for (const [id, v] of [...reg]) {
    if (id === q.run) continue;
    const r = parseRun(v);
    if (r.state === 'retired' && (marking.get(q.markingHead + id + q.markingTail)?.size ?? 0) === 0)
      reg.delete(id);
    else if (r.since < q.until && q.since < r.until) {
      lone = false;
      drain.push(id);
      if (r.mode === 'lone') reg.set(id, `${r.since}|${r.until}|shared|${r.state}`);
    }
  }
  const mine = reg.get(q.run);
  if (mine !== undefined && parseRun(mine).mode !== 'lone') lone = false;
  reg.set(q.run, `${q.since}|${q.until}|${lone ? 'lone' : 'shared'}|active`);
  if (drain.length > 0) {
    const d = drains.get(q.drain) ?? new Set<string>();
    for (const id of drain) d.add(id);
    drains.set(q.drain, d);
  }
  return { lone, drain };
}
