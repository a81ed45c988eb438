/**
 * Drift folded in the worker's memory and written by one script call per resource every `flushMs`, instead of one
 * call per page: at scale medium the per-page merge was ~26.6 k script calls, ~1.7 µs of Redis CPU a record, for
 * counts that change by a few each page (issue 51, the Redis profile of 2026-12-04). Folding is what the store's
 * script does ({@link mergeDriftRecord}): counts and types add up, the affected records' range widens; a batch is
 * written with the time of its newest page, so a path's `firstSeenMs` may be up to `flushMs` late.
 *
 * {@link BufferedDriftStore.flushed} resolves once everything recorded before it is in Redis, or its write failed
 * (drift is an alarm, never a reason to fail a slice: the records are what is guaranteed). A slice awaits it before
 * its job completes, so what a finished run saw is readable when the run is, as when every page wrote its own.
 */
import type { ResourceName } from '../../foundation/models/index.js';
import type { PageDrift, PageDriftEntry } from './drift-tracker.js';
import type { DriftStore } from './redis-drift-store.js';

export interface BufferedDriftStore extends DriftStore {
  /**
   * Resolves once everything recorded before the call was written (or failed to be); with nothing held, once the
   * write under way (if any) ends.
   */
  flushed(): Promise<void>;
  /** Writes what is held now and resolves when it is written. */
  close(): Promise<void>;
}

export interface BufferedDriftStoreOptions {
  /** How long a recorded page's drift waits for others before the batch is written. @default 100 */
  flushMs?: number;
  /**
   * Most paths held per resource: a page with one more writes the batch first (the store bounds what it keeps
   * itself). @default 300
   */
  maxPaths?: number;
}

export const DEFAULT_BUFFERED_DRIFT_STORE_OPTIONS = { flushMs: 100, maxPaths: 300 } as const;

/** One resource's drift held for the next write. */
interface Held {
  entries: Map<string, PageDriftEntry>;
  dropped: number;
}

/** `entry` folded into `held` (a copy: the page's entry stays as it was). */
function fold(held: PageDriftEntry | undefined, entry: PageDriftEntry): PageDriftEntry {
  if (held === undefined) return { ...entry, types: { ...entry.types } };
  for (const [type, n] of Object.entries(entry.types) as [keyof PageDriftEntry['types'], number][])
    held.types[type] = (held.types[type] ?? 0) + n;
  held.count += entry.count;
  if (entry.firstRecordMs !== undefined)
    held.firstRecordMs = Math.min(held.firstRecordMs ?? entry.firstRecordMs, entry.firstRecordMs);
  if (entry.lastRecordMs !== undefined)
    held.lastRecordMs = Math.max(held.lastRecordMs ?? entry.lastRecordMs, entry.lastRecordMs);
  return held;
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** Buffers `store`'s writes (see the header); reads and clears go to `store` after what is held was written. */
export function createBufferedDriftStore(
  store: DriftStore,
  options: BufferedDriftStoreOptions = {},
): BufferedDriftStore {
  const { flushMs, maxPaths } = { ...DEFAULT_BUFFERED_DRIFT_STORE_OPTIONS, ...options };
  let held = new Map<ResourceName, Held>();
  let newestMs = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  // The write that will carry what is held now, and the chain of writes (one at a time, in order).
  let next: ReturnType<typeof deferred> | undefined;
  let writing: Promise<void> = Promise.resolve();

  const write = async (batch: Map<ResourceName, Held>, nowMs: number): Promise<void> => {
    for (const [resource, h] of batch)
      await store
        .record(resource, { entries: [...h.entries.values()], dropped: h.dropped }, nowMs)
        .catch(() => undefined);
  };

  const holdFor = (resource: ResourceName): Held => {
    let h = held.get(resource);
    if (h === undefined) held.set(resource, (h = { entries: new Map<string, PageDriftEntry>(), dropped: 0 }));
    return h;
  };

  const flushNow = (): Promise<void> => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    if (held.size === 0) return writing;
    const [batch, nowMs, done] = [held, newestMs, next];
    held = new Map();
    next = undefined;
    writing = writing.then(() => write(batch, nowMs)).then(() => done?.resolve());
    return writing;
  };

  return {
    record(resource, page: PageDrift, nowMs = Date.now()) {
      if (page.entries.length === 0 && page.dropped === 0) return Promise.resolve();
      newestMs = Math.max(newestMs, nowMs);
      holdFor(resource).dropped += page.dropped;
      for (const entry of page.entries) {
        const field = `${entry.kind}\t${entry.path}`;
        let h = holdFor(resource);
        // A path the batch does not hold, past the bound: the batch is written first (the store, which knows its
        // paths, decides what it keeps), so the memory held stays bounded and the figures are the same.
        if (!h.entries.has(field) && h.entries.size >= maxPaths) {
          void flushNow();
          h = holdFor(resource);
        }
        h.entries.set(field, fold(h.entries.get(field), entry));
      }
      next ??= deferred();
      timer ??= setTimeout(() => void flushNow(), flushMs);
      timer.unref?.();
      return next.promise;
    },
    flushed() {
      return held.size === 0 ? writing : (next ??= deferred()).promise;
    },
    close: flushNow,
    async read(resource) {
      await flushNow();
      return store.read(resource);
    },
    async clear(resource) {
      await flushNow();
      await store.clear(resource);
    },
  };
}
