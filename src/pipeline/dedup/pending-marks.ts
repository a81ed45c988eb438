/**
 * Cross-slice dedup that stays exact across the crash window between a Kafka transaction's commit and the seen mark
 * (exactly-once delivery, issue 17; the protocol of the EOS design note, sections 2.4-2.6).
 *
 * A page is identified by its page key `<sliceKey>#<seq>@<writer>~<session>` ({@link pageKeyOf}): the slice, the
 * page's seq, the producer it commits through and the session (one owner's run of the slice) that wrote it. Per page,
 * in this order:
 * 1. {@link PendingMarks.claim}: the locks, in ONE global order (the lock keys sorted), each script call checking the
 *    seen-set and taking a lock per entity (`<prefix>:lock:<resource>/<_id>` = `<pageKey>|<leaseUntil>|<version>`)
 *    up to the first one another page holds, and, in the same call, writing the page into the slice's intent with
 *    every id it may lock (so no lock ever exists that the slice's next owner cannot find), with NO Redis TTL: once a page may
 *    have committed, its lock is the only trace tying the id to that page, so it disappears only when the page's
 *    fate is known. The lease only says when others may resolve it. A lock held by a live foreign page is waited
 *    for, keeping the locks before it (ordered acquisition: no cycle of waits, whatever pages overlap); one whose
 *    lease expired is resolved: `resolveForeign(pageKey)` makes sure that page's session can commit nothing more and
 *    says whether it committed ({@link pageCommitted}), then its locks are settled (committed: the versions they
 *    hold are marked seen). A claim that fails releases the locks it took.
 * 2. The caller publishes the page(s) and the checkpoint in one Kafka transaction and commits.
 * 3. {@link PendingMarks.settle}: committed -> the ids whose locks still carry the page key are marked seen (at the
 *    version the lock holds: a changing entity at its latest) and those locks are deleted, in one script call; not
 *    committed -> compare-and-delete only. Then the pages leave the intent.
 *
 * Unlocks compare the page key, so a zombie can never delete a lock another page took over, and a page key names one
 * session: the slice's next owner re-runs a page that did not commit under a key of its own.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { ConfigError, GamedataError } from '../../foundation/errors/index.js';
import { onRedis } from './internal/on-redis.js';
import { RESOURCE_INFO, type ResourceName } from '../../foundation/models/index.js';
import { hasDedupId, seenEntry, type DedupRecord } from './dedup-store.js';
import type { SeenEntry } from './redis-seen-set.js';
import { encodeVersion, versionReplaces } from './seen-encoding.js';
import { sweepOrphanedLocks, type LockSweepOptions, type LockSweepReport } from './lock-sweep.js';
import {
  decodeIntentPage,
  encodeIntentPage,
  parsePageKey,
  pendingKeysOf,
  type PendingKeys,
  type PendingPage,
  type ResolveForeignPage,
} from './pending-page.js';
import {
  closeMarks,
  createMarkContext,
  drainBefore,
  markable,
  openMarks,
  readMarkPages,
  settleMarkPages,
  sweepMarks,
  tryMarkClaim,
  type MarkClaimsBackend,
  type MarkContext,
} from './mark-claims.js';

export { pageCommitted, pageKeyOf, parsePageKey } from './pending-page.js';
export type { PageKeyParts, PendingPage, ResolveForeignPage } from './pending-page.js';

export interface PageClaimOptions {
  /** Check the run-scoped set instead of the global one (`--replay`); marks go to both. */
  scope?: string;
  /**
   * Called once, before the claim first waits for a page of another slice. Commit (and settle) the slice's open
   * transaction here: while the claim waits, the earlier pages' locks are not held, and a page of this slice that
   * holds an id of this page is settled instead of being waited for until its lease expires.
   */
  onWait?: () => Promise<void>;
  /** Stops waiting (AbortedError). */
  signal?: AbortSignal;
  /**
   * The page's run: a page of a run alone on its resource's range (`lone-runs.ts`) whose records never change is
   * claimed by mark (`mark-claims.ts`: no lock); any other run's first claim of locks waits for the marks of the runs
   * it overlaps. Absent (`--replay`, or a caller that registers no run): locks, as before.
   */
  run?: string;
}

export interface PageClaim<T> {
  /** The records to publish: not seen, not superseded in this page, locked for this page. Records without `_id` always. */
  fresh: T[];
  /** Records dropped: seen, covered by a newer version, or repeated in the page. */
  repeats: number;
  /**
   * What to pass to settle once the page's fate is known (its entries: the ids it locked; when it locked any, the
   * page is in its slice's intent).
   */
  page: PendingPage;
}

export interface PendingMarks {
  /**
   * Claims a page's records for `pageKey`: takes its locks in lock order (the page joins its slice's intent with its
   * first lock), waiting (polling) at the first one a live page of another slice holds while keeping the ones before it
   * (ordered acquisition: no wait cycle between slices); resolves the pages whose lease expired. Returns the records
   * to publish. On failure it releases the locks it took.
   */
  claim<T extends DedupRecord>(
    pageKey: string,
    resource: ResourceName,
    records: readonly T[],
    resolveForeign: ResolveForeignPage,
    options?: PageClaimOptions,
  ): Promise<PageClaim<T>>;
  /**
   * Makes `session` the slice's current one before its owner reads the intent: a page of any older session can no
   * longer be claimed by mark (a zombie's page can then never hide an id from its successor).
   */
  openSlice(sliceKey: string, session: string): Promise<void>;
  /** The slice ended in `session` (its last page settled): what {@link openSlice} left goes (an older session's call: nothing). */
  closeSlice(sliceKey: string, session: string): Promise<void>;
  /** Adds the page to the slice's intent (`claim` does it itself, with its first lock). */
  writeIntent(sliceKey: string, page: PendingPage): Promise<void>;
  /** The slice's pages whose fate was not settled yet, by seq ([] when none). */
  readIntent(sliceKey: string): Promise<PendingPage[]>;
  /**
   * Settles pages of the slice once their fate is known: committed -> mark seen the ids whose locks still carry their
   * page keys (at the versions the locks hold), then delete those locks; not committed -> delete those locks only.
   * Then removes them from the intent. Idempotent; an intent page may list ids it never locked (they are left alone).
   */
  settle(sliceKey: string, pages: readonly PendingPage[], committed: boolean): Promise<void>;
  /**
   * Resolves and settles the locks whose lease expired more than `graceMs` ago (orphans no claim met since:
   * `lock-sweep.ts`). Safe beside claims and other sweeps.
   */
  sweep(
    resolveForeign: ResolveForeignPage,
    options?: Omit<LockSweepOptions, 'prefix'>,
  ): Promise<LockSweepReport>;
}

export interface PendingMarksOptions {
  /** Key prefix in Redis (as the dedup store's: the seen-sets are shared). @default 'gamedata' */
  prefix?: string;
  /**
   * How long a page's locks are its own before other slices may resolve them (fence its slice and settle it).
   * Well above the time a page takes, from its claim to its settle (a transaction holds up to K pages).
   * @default 30000
   */
  leaseMs?: number;
  /** How often a claim checks again for ids that a live page of another slice holds. @default 50 */
  pollMs?: number;
}

export const DEFAULT_PENDING_MARKS_OPTIONS = { prefix: 'gamedata', leaseMs: 30_000, pollMs: 50 } as const;

/**
 * A lock's state as one claim step found it; a step stops at the first lock another page holds, and the unseen
 * entries after it are `untried` (a seen one may say `seen` there: a backend may check them all first).
 */
export type LockState =
  | { state: 'seen' }
  | { state: 'mine' }
  | { state: 'wait' }
  | { state: 'expired'; owner: string }
  | { state: 'untried' };

/** The atomic steps of the protocol: Redis in production (`redis-pending-marks.ts`), memory in unit tests. */
export interface PendingMarksBackend extends MarkClaimsBackend {
  /**
   * Atomically, per entry in order: covered by `set` -> seen; else the lock `locks[i]` is free or `pageKey`'s -> taken
   * as `<pageKey>|<now + leaseMs>|<version>` (mine); else its lease is alive -> wait, or expired -> its owner, and
   * every later entry is untried (its lock not looked at), or seen when covered by `set`.
   */
  claim(request: {
    set: string;
    versioned: boolean;
    pageKey: string;
    leaseMs: number;
    locks: readonly string[];
    entries: readonly SeenEntry[];
    /**
     * The page's intent field (every id it may lock): set in the same atomic step when the step takes a lock, so no
     * lock ever exists that the slice's next owner cannot find in the intent.
     */
    intent?: { key: string; seq: number; value: string };
  }): Promise<LockState[]>;
  /**
   * Atomically: if `committed`, marks the entries in every set of `sets` (with `versionFromLock`, only the entries
   * whose lock `pageKey` still holds, at the version the lock holds); then deletes each lock `pageKey` still holds.
   * The last set is the one the page's claim checked (see `markSets`): a backend may mark it without reading it.
   */
  settle(request: {
    sets: readonly string[];
    versioned: boolean;
    pageKey: string;
    committed: boolean;
    versionFromLock: boolean;
    locks: readonly string[];
    entries: readonly SeenEntry[];
  }): Promise<void>;
  /** Sets field `seq` of the intent `key`. */
  writeIntent(key: string, seq: number, value: string): Promise<void>;
  /** Every field of the intent `key`. */
  readIntent(key: string): Promise<[seq: number, value: string][]>;
  /** Deletes fields of the intent `key`. */
  clearIntent(key: string, seqs: readonly number[]): Promise<void>;
  /**
   * One step of a scan over the locks whose keys start with `keyPrefix` (SCAN semantics: cursor '0' starts and
   * ends; a lock may come twice), with their values and the lease clock's time now (ms).
   */
  scanLocks(
    keyPrefix: string,
    cursor: string,
    count: number,
  ): Promise<{ cursor: string; locks: [key: string, value: string][]; now: number }>;
}

/** Whether a later occurrence of an entity in one page replaces the earlier one (the latest version wins). */
function laterWins(current: string, incoming: string): boolean {
  const [c, i] = [encodeVersion(current), encodeVersion(incoming)];
  return c !== undefined && i !== undefined ? versionReplaces(c, i) : incoming !== current;
}

function positiveInteger(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1)
    throw new ConfigError(`option ${name} must be an integer >= 1, got ${String(value)}`);
  return value;
}

function checkScope(scope: string | undefined): void {
  if (scope !== undefined && (scope === '' || scope.includes('/')))
    throw new GamedataError(`scope must be a non-empty string without "/", got ${JSON.stringify(scope)}`);
}

function checkPage(sliceKey: string, page: PendingPage): void {
  const parsed = parsePageKey(page.pageKey);
  if (parsed.sliceKey !== sliceKey || parsed.seq !== page.seq)
    throw new GamedataError(
      `page ${page.pageKey} (seq ${page.seq}) is not a page of slice ${JSON.stringify(sliceKey)}`,
    );
}

const versionedOf = (r: ResourceName): boolean => RESOURCE_INFO[r].dedup === 'version';

/** One entity of a page being claimed: the record it came from, its seen entry and its lock. */
interface ClaimItem {
  index: number;
  entry: SeenEntry;
  lock: string;
}

/**
 * One record per entity: the first occurrence (immutable), the latest version (changing resources). Records without
 * an `_id` cannot be recognised again: they always pass (they will be dead-lettered), as `fresh` indexes.
 */
function pickClaimItems(
  resource: ResourceName,
  records: readonly DedupRecord[],
  lockOf: (id: string) => string,
): { items: ClaimItem[]; fresh: Set<number> } {
  const versioned = versionedOf(resource);
  const byId = new Map<string, ClaimItem>();
  const fresh = new Set<number>();
  records.forEach((rec, index) => {
    if (!hasDedupId(rec)) return void fresh.add(index);
    const entry = seenEntry(resource, rec);
    const current = byId.get(entry.id);
    if (current === undefined || (versioned && laterWins(current.entry.version, entry.version)))
      byId.set(entry.id, { index, entry, lock: lockOf(entry.id) });
  });
  return { items: [...byId.values()], fresh };
}

/** Where one claim step stopped: every lock before it is the page's (or seen), this one is another page's. */
interface ClaimStop {
  /** The items still to take (not seen), in lock order: the page's own first, then the blocked one, then the rest. */
  todo: ClaimItem[];
  /** How many of `todo` the page holds. */
  held: number;
  /** The state of `todo[held]`, when the step stopped there (`wait` or `expired`). */
  blocked?: LockState;
}

/** Reads one ordered claim step: drops the seen, counts the held prefix, finds the lock it stopped at. */
function claimStep(batch: readonly ClaimItem[], states: readonly LockState[]): ClaimStop {
  const todo: ClaimItem[] = [];
  let held = 0;
  for (let i = 0; i < batch.length; i++) {
    const s = states[i];
    if (s?.state === 'seen') continue;
    if (s?.state === 'mine') {
      todo.push(batch[i]!);
      held += 1;
      continue;
    }
    todo.push(...batch.slice(i).filter((_, j) => states[i + j]?.state !== 'seen'));
    // Anything but an expired lock (a state missing from the answer too) is waited for: never taken as ours.
    return { todo, held, blocked: s ?? { state: 'wait' } };
  }
  return { todo, held };
}

/** What a claim of one page works with. */
interface ClaimContext {
  backend: PendingMarksBackend;
  keys: PendingKeys;
  leaseMs: number;
  pollMs: number;
  pageKey: string;
  resource: ResourceName;
  options: PageClaimOptions;
  /** Claims by mark. */
  marks: MarkContext;
}

/** Settles `items`'s locks held by `pageKey` (committed: marks them seen first, at the versions the locks hold). */
function settleItems(
  c: ClaimContext,
  what: string,
  pageKey: string,
  committed: boolean,
  items: readonly ClaimItem[],
): Promise<void> {
  return onRedis(what, () =>
    c.backend.settle({
      sets: c.keys.markSets(c.resource, c.options.scope),
      versioned: versionedOf(c.resource),
      pageKey,
      committed,
      versionFromLock: true,
      locks: items.map((it) => it.lock),
      entries: items.map((it) => it.entry),
    }),
  );
}

/** Waits one jittered poll, so that two pages that collide do not retry in step. */
async function pollAgain(pollMs: number, signal: AbortSignal | undefined): Promise<void> {
  try {
    const jittered = Math.round(pollMs * (0.5 + Math.random()));
    await sleep(jittered, undefined, signal === undefined ? undefined : { signal });
  } catch (error) {
    throw GamedataError.from(error);
  }
}

/** One claim step over `items` (in lock order), from the first; the page's intent field goes with its first lock. */
async function claimInOrder(
  c: ClaimContext,
  items: readonly ClaimItem[],
  intent: { key: string; seq: number; value: string },
): Promise<ClaimStop> {
  const states = await onRedis(`claiming page ${c.pageKey}`, () =>
    c.backend.claim({
      set: c.keys.claimSet(c.resource, c.options.scope),
      versioned: versionedOf(c.resource),
      pageKey: c.pageKey,
      leaseMs: c.leaseMs,
      locks: items.map((it) => it.lock),
      entries: items.map((it) => it.entry),
      intent,
    }),
  );
  return claimStep(items, states);
}

/**
 * Takes the locks of `items` for the page in lock order: each step takes every lock up to the first one another page
 * holds and stops there; a live holder is waited for (once, after the caller's `onWait` committed its open pages),
 * keeping the locks taken; an expired one is resolved. Every page takes its locks in the same order and waits only
 * while it holds locks before the one it waits for, so no cycle of waits can form, whatever the pages share (the
 * release-and-retry this replaces livelocked once hundreds of pages overlapped, issue 47). A step goes over the held
 * locks again, which renews their leases while the page waits.
 */
async function takeLocks(
  c: ClaimContext,
  items: readonly ClaimItem[],
  intent: { key: string; seq: number; value: string },
  resolveForeign: ResolveForeignPage,
): Promise<ClaimItem[]> {
  let todo = [...items].sort((a, b) => (a.lock < b.lock ? -1 : a.lock > b.lock ? 1 : 0));
  let waited = false;
  for (;;) {
    const step = await claimInOrder(c, todo, intent);
    todo = step.todo;
    if (step.blocked === undefined) return todo;
    if (step.blocked.state === 'expired') {
      const owner = step.blocked.owner;
      parsePageKey(owner);
      const fate = await resolveForeign(owner);
      if (fate !== 'live') {
        const rest = todo.slice(step.held);
        await settleItems(c, `settling page ${owner}`, owner, fate, rest);
        continue;
      }
    }
    // Held by a live page: commit ours first (our earlier pages' locks go), then wait for it, keeping the locks before.
    if (!waited && c.options.onWait !== undefined) await c.options.onWait();
    waited = true;
    await pollAgain(c.pollMs, c.options.signal);
  }
}

/** The items a page claimed by mark (the ones it marked), or undefined when it must take locks. */
async function claimByMark(
  c: ClaimContext,
  run: string,
  items: readonly ClaimItem[],
  page: PendingPage,
): Promise<ClaimItem[] | undefined> {
  const marked = await tryMarkClaim(c.marks, {
    pageKey: c.pageKey,
    resource: c.resource,
    run,
    locks: items.map((it) => it.lock),
    entries: items.map((it) => it.entry),
    // The stored page lists every entry in the order sent; the backend adds which ones it marked.
    value: encodeIntentPage({ ...page, run }),
  });
  return marked === undefined ? undefined : items.filter((_, i) => marked[i] === true);
}

/** {@link PendingMarks.claim} of one page. */
async function claimPage<T extends DedupRecord>(
  c: ClaimContext,
  records: readonly T[],
  resolveForeign: ResolveForeignPage,
): Promise<PageClaim<T>> {
  const { sliceKey, seq } = parsePageKey(c.pageKey);
  checkScope(c.options.scope);
  const { scope } = c.options;
  const { items, fresh } = pickClaimItems(c.resource, records, (id) => c.keys.lock(c.resource, scope, id));
  const page: PendingPage = {
    pageKey: c.pageKey,
    seq,
    resource: c.resource,
    ...(scope === undefined ? {} : { scope }),
    entries: items.map((it) => it.entry),
  };
  const run = c.options.run;
  if (run !== undefined && scope === undefined && items.length > 0 && markable(c.resource)) {
    const byMark = await claimByMark(c, run, items, page);
    if (byMark !== undefined) {
      for (const it of byMark) fresh.add(it.index);
      return {
        fresh: records.filter((_, i) => fresh.has(i)),
        repeats: records.length - fresh.size,
        page: { ...page, run, entries: byMark.map((it) => it.entry) },
      };
    }
    // Locks: the first claim of locks of a run waits for the marks of the runs it overlaps.
    await drainBefore(c.marks, run, c.resource, resolveForeign, c.options.signal);
  }
  // From its first lock on, the page is in the intent its slice's next owner settles.
  const intent = { key: c.keys.intent(sliceKey), seq, value: encodeIntentPage(page) };
  let mine: ClaimItem[];
  try {
    mine = await takeLocks(c, items, intent, resolveForeign);
  } catch (error) {
    // A failed claim releases its own locks (compare-and-delete: only the ones still carrying its page key).
    await settleItems(c, `releasing page ${c.pageKey}`, c.pageKey, false, items).catch(() => undefined);
    throw error;
  }
  for (const it of mine) fresh.add(it.index);
  return {
    fresh: records.filter((_, i) => fresh.has(i)),
    repeats: records.length - fresh.size,
    page: { ...page, entries: mine.map((it) => it.entry) },
  };
}

/** Creates the pending-marks protocol on a backend (`createRedisPendingMarks(redis)` in production). */
export function createPendingMarks(
  backend: PendingMarksBackend,
  options: PendingMarksOptions = {},
): PendingMarks {
  const prefix = options.prefix ?? DEFAULT_PENDING_MARKS_OPTIONS.prefix;
  if (prefix === '') throw new ConfigError('option prefix must be a non-empty string, got ""');
  const leaseMs = positiveInteger('leaseMs', options.leaseMs ?? DEFAULT_PENDING_MARKS_OPTIONS.leaseMs);
  const pollMs = positiveInteger('pollMs', options.pollMs ?? DEFAULT_PENDING_MARKS_OPTIONS.pollMs);
  const keys = pendingKeysOf(prefix);
  const marks = createMarkContext(backend, keys, leaseMs, pollMs);

  return {
    claim: (pageKey, resource, records, resolveForeign, o = {}) =>
      claimPage(
        { backend, keys, leaseMs, pollMs, pageKey, resource, options: o, marks },
        records,
        resolveForeign,
      ),

    openSlice: (sliceKey, session) => openMarks(marks, sliceKey, session),
    closeSlice: (sliceKey, session) => closeMarks(marks, sliceKey, session),

    async writeIntent(sliceKey, page) {
      checkPage(sliceKey, page);
      checkScope(page.scope);
      const value = encodeIntentPage(page);
      await onRedis(`writing the intent of ${sliceKey}`, () =>
        backend.writeIntent(keys.intent(sliceKey), page.seq, value),
      );
    },

    async sweep(resolveForeign, o = {}) {
      const locked = await sweepOrphanedLocks(backend, resolveForeign, { ...o, prefix });
      const marked = await sweepMarks(marks, resolveForeign, {
        graceMs: o.graceMs ?? 600_000,
        signal: o.signal,
      });
      return {
        ...locked,
        expired: locked.expired + marked.committed + marked.released,
        committed: locked.committed + marked.committed,
        released: locked.released + marked.released,
        left: locked.left + marked.left,
      };
    },

    async readIntent(sliceKey) {
      const [fields, marked] = await Promise.all([
        onRedis(`reading the intent of ${sliceKey}`, () => backend.readIntent(keys.intent(sliceKey))),
        readMarkPages(marks, sliceKey),
      ]);
      return [...fields.map(([seq, value]) => decodeIntentPage(seq, value)), ...marked].sort(
        (a, b) => a.seq - b.seq,
      );
    },

    async settle(sliceKey, allPages, committed) {
      for (const page of allPages) checkPage(sliceKey, page);
      const byMark = allPages.filter((p) => p.run !== undefined);
      if (byMark.length > 0) await settleMarkPages(marks, sliceKey, byMark, committed);
      const pages = allPages.filter((p) => p.run === undefined);
      // The pages are independent (each settles the locks carrying its own page key): issued together, they go to
      // Redis in one write on an auto-pipelined connection.
      await Promise.all(
        pages
          .filter((page) => page.entries.length > 0)
          .map((page) =>
            onRedis(`settling page ${page.pageKey}`, () =>
              backend.settle({
                sets: keys.markSets(page.resource, page.scope),
                versioned: versionedOf(page.resource),
                pageKey: page.pageKey,
                committed,
                versionFromLock: true,
                locks: page.entries.map((e) => keys.lock(page.resource, page.scope, e.id)),
                entries: page.entries,
              }),
            ),
          ),
      );
      if (pages.length > 0)
        await onRedis(`clearing the intent of ${sliceKey}`, () =>
          backend.clearIntent(
            keys.intent(sliceKey),
            pages.map((p) => p.seq),
          ),
        );
    },
  };
}
