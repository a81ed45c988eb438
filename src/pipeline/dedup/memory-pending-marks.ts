/**
 * An in-memory backend of the pending-marks protocol for unit tests, with the Redis scripts' rules (see
 * `redis-pending-marks.ts`) on the in-memory seen-set of `dedup-store.ts`, an injected clock, and every step
 * atomic (steps run one after another).
 */
import { createMemorySeenSet, type MemorySeenSet } from './dedup-store.js';
import type { LockState, PendingMarksBackend } from './pending-marks.js';

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
}

/** Creates an in-memory pending-marks backend. */
export function createMemoryPendingMarks(options: MemoryPendingMarksOptions = {}): MemoryPendingMarks {
  const now = options.now ?? Date.now;
  const seen = createMemorySeenSet();
  const locks = new Map<string, string>();
  const intents = new Map<string, Map<number, string>>();
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
