/**
 * Cross-slice dedup that stays exact across the crash window between a Kafka transaction's commit and the seen mark
 * (exactly-once delivery, issue 17; the protocol of the EOS design note, sections 2.4-2.6).
 *
 * A page is identified by its page key `<sliceKey>#<seq>` ({@link pageKeyOf}). Per page, in this order:
 * 1. {@link PendingMarks.claim}: one script call checks the seen-set and takes a lock per entity
 *    (`<prefix>:lock:<resource>/<_id>` = `<pageKey>|<leaseUntil>|<version>`), with NO Redis TTL: once a page may
 *    have committed, its lock is the only trace tying the id to that page, so it disappears only when the page's
 *    fate is known. The lease only says when others may resolve it. A lock held by a live foreign page is waited
 *    for; one whose lease expired is resolved: `resolveForeign(pageKey)` fences that page's slice and says whether
 *    the page committed, then its locks are settled (committed: the versions they hold are marked seen).
 * 2. {@link PendingMarks.writeIntent}: the page joins the slice's intent (every page of the open transaction),
 *    before the transaction commits: the slice's next owner settles it at recovery.
 * 3. The caller publishes the page(s) and the checkpoint in one Kafka transaction and commits.
 * 4. {@link PendingMarks.settle}: committed -> the ids are marked seen (a changing entity at its latest version) and
 *    the locks still carrying the page key are deleted, in one script call; not committed -> compare-and-delete
 *    only. Then the pages leave the intent.
 *
 * Unlocks compare the page key, so a zombie can never delete a lock another page took over. A page key is reused
 * by the slice's next owner when it re-runs a page that did not commit: a slice that was fenced (SliceFencedError)
 * must therefore not settle anything; its next owner settles its intent.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { ConfigError, GamedataError, ServiceError } from '../../foundation/errors.js';
import { RESOURCE_INFO, type ResourceName } from '../../foundation/models/resources.js';
import { hasDedupId, seenEntry, type DedupRecord } from './dedup-store.js';
import type { SeenEntry } from './redis-seen-set.js';
import { encodeVersion, versionReplaces } from './seen-encoding.js';

/** One page of a slice whose fate (committed or not) settles its ids. */
export interface PendingPage {
  /** `<sliceKey>#<seq>` (see {@link pageKeyOf}). */
  pageKey: string;
  /** The page's sequence number in its slice (the checkpoint's `seq` once it committed). */
  seq: number;
  resource: ResourceName;
  /** The `--replay` scope the page was claimed in (its ids are marked in the scoped set too). */
  scope?: string;
  /** The ids (and versions) the page publishes: one per entity, as the seen-set stores them. */
  entries: SeenEntry[];
}

/**
 * Says whether the page `pageKey` (of another slice, its lease expired) committed. It must first make sure that
 * nothing of that slice can commit any more (fence its transactional.id), then read its last committed checkpoint:
 * committed iff the checkpoint's seq >= the page's seq.
 */
export type ResolveForeignPage = (pageKey: string) => Promise<boolean>;

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
}

export interface PageClaim<T> {
  /** The records to publish: not seen, not superseded in this page, locked for this page. Records without `_id` always. */
  fresh: T[];
  /** Records dropped: seen, covered by a newer version, or repeated in the page. */
  repeats: number;
  /** What to pass to writeIntent and settle. */
  page: PendingPage;
}

export interface PendingMarks {
  /**
   * Claims a page's records for `pageKey`: returns the ones to publish. Waits (polling) for ids a live page of
   * another slice holds, holding none of its own meanwhile (released, taken again: no wait cycle between slices);
   * resolves the pages whose lease expired.
   */
  claim<T extends DedupRecord>(
    pageKey: string,
    resource: ResourceName,
    records: readonly T[],
    resolveForeign: ResolveForeignPage,
    options?: PageClaimOptions,
  ): Promise<PageClaim<T>>;
  /** Adds the page to the slice's intent (call before the transaction holding it commits). */
  writeIntent(sliceKey: string, page: PendingPage): Promise<void>;
  /** The slice's pages whose fate was not settled yet, by seq ([] when none). */
  readIntent(sliceKey: string): Promise<PendingPage[]>;
  /**
   * Settles pages of the slice once their fate is known: committed -> mark their ids seen, then delete the locks that
   * still carry their page keys; not committed -> delete those locks only. Then removes them from the intent.
   * Idempotent.
   */
  settle(sliceKey: string, pages: readonly PendingPage[], committed: boolean): Promise<void>;
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

/** A lock's state as one claim step found it. */
export type LockState =
  { state: 'seen' } | { state: 'mine' } | { state: 'wait' } | { state: 'expired'; owner: string };

/** The atomic steps of the protocol: Redis in production (`redis-pending-marks.ts`), memory in unit tests. */
export interface PendingMarksBackend {
  /**
   * Atomically, per entry: covered by `set` -> seen; else the lock `locks[i]` is free or `pageKey`'s -> taken as
   * `<pageKey>|<now + leaseMs>|<version>` (mine); else its lease is alive -> wait, or expired -> its owner.
   */
  claim(request: {
    set: string;
    versioned: boolean;
    pageKey: string;
    leaseMs: number;
    locks: readonly string[];
    entries: readonly SeenEntry[];
  }): Promise<LockState[]>;
  /**
   * Atomically: if `committed`, marks the entries in every set of `sets` (with `versionFromLock`, only the entries
   * whose lock `pageKey` still holds, at the version the lock holds); then deletes each lock `pageKey` still holds.
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
}

/** The page key of page `seq` of a slice. */
export function pageKeyOf(sliceKey: string, seq: number, writer?: string): string {
  return writer === undefined ? `${sliceKey}#${seq}` : `${sliceKey}#${seq}@${writer}`;
}

const PAGE_KEY = /^(.+)#(0|[1-9]\d{0,14})(?:@([^#@|]+))?$/;

/**
 * The slice key, seq and writer of a page key `<sliceKey>#<seq>[@<writer>]` (the writer: the transactional.id of the
 * producer whose transaction the page goes into, so that whoever resolves the page's orphaned locks fences that
 * producer only, and only while it is still recorded as an owner of the slice).
 * @throws GamedataError when `pageKey` is not of that form or holds a `|` (the locks' separator).
 */
export function parsePageKey(pageKey: string): { sliceKey: string; seq: number; writer?: string } {
  const m = PAGE_KEY.exec(pageKey);
  if (m === null || pageKey.includes('|'))
    throw new GamedataError(
      `page key must be "<sliceKey>#<seq>[@<writer>]" without "|", got ${JSON.stringify(pageKey)}`,
    );
  return m[3] === undefined
    ? { sliceKey: m[1]!, seq: Number(m[2]) }
    : { sliceKey: m[1]!, seq: Number(m[2]), writer: m[3] };
}

/** Whether a later occurrence of an entity in one page replaces the earlier one (the latest version wins). */
function laterWins(current: string, incoming: string): boolean {
  const [c, i] = [encodeVersion(current), encodeVersion(incoming)];
  return c !== undefined && i !== undefined ? versionReplaces(c, i) : incoming !== current;
}

async function onRedis<T>(what: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof GamedataError) throw error;
    throw new ServiceError(`Redis failed while ${what}: ${(error as Error).message}`, 'redis', {
      cause: error,
      retriable: true,
    });
  }
}

function positiveInteger(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1)
    throw new ConfigError(`option ${name} must be an integer >= 1, got ${String(value)}`);
  return value;
}

/** The Redis keys of the protocol under one prefix. */
interface PendingKeys {
  /** The lock of one entity; scoped locks are separate (a replay run publishes again what the global set holds). */
  lock(resource: ResourceName, scope: string | undefined, id: string): string;
  /** The seen-set a claim checks: the run-scoped one under `--replay`, else the global one. */
  claimSet(resource: ResourceName, scope: string | undefined): string;
  /** The seen-sets a committed page is marked in: the global one, and the run-scoped one under `--replay`. */
  markSets(resource: ResourceName, scope: string | undefined): string[];
  /** The intent (pages not settled yet) of one slice. */
  intent(sliceKey: string): string;
}

function pendingKeysOf(prefix: string): PendingKeys {
  const globalSet = (r: ResourceName): string => `${prefix}:seen:${r}`;
  const scopedSet = (r: ResourceName, scope: string): string => `${prefix}:seen:${r}:run:${scope}`;
  return {
    lock: (resource, scope, id) =>
      scope === undefined
        ? `${prefix}:lock:${resource}/${id}`
        : `${prefix}:lock:${resource}:run:${scope}/${id}`,
    claimSet: (r, scope) => (scope === undefined ? globalSet(r) : scopedSet(r, scope)),
    markSets: (r, scope) => (scope === undefined ? [globalSet(r)] : [globalSet(r), scopedSet(r, scope)]),
    intent: (sliceKey) => `${prefix}:intent:${sliceKey}`,
  };
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

/** Sorts one claim step's items by the state the backend found their locks in ('seen' ones are repeats: dropped). */
function sortByLockState(
  batch: readonly ClaimItem[],
  states: readonly LockState[],
): { mine: ClaimItem[]; retry: ClaimItem[]; expired: Map<string, ClaimItem[]> } {
  const mine: ClaimItem[] = [];
  const retry: ClaimItem[] = [];
  const expired = new Map<string, ClaimItem[]>();
  batch.forEach((it, i) => {
    const s = states[i];
    if (s?.state === 'mine') mine.push(it);
    else if (s?.state === 'wait') retry.push(it);
    else if (s?.state === 'expired') {
      expired.set(s.owner, [...(expired.get(s.owner) ?? []), it]);
      retry.push(it);
    }
  });
  return { mine, retry, expired };
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
}

/** Settles `items`'s locks held by `pageKey` (committed: marks them seen first). */
function settleItems(
  c: ClaimContext,
  what: string,
  pageKey: string,
  committed: boolean,
  versionFromLock: boolean,
  items: readonly ClaimItem[],
): Promise<void> {
  return onRedis(what, () =>
    c.backend.settle({
      sets: c.keys.markSets(c.resource, c.options.scope),
      versioned: versionedOf(c.resource),
      pageKey,
      committed,
      versionFromLock,
      locks: items.map((it) => it.lock),
      entries: items.map((it) => it.entry),
    }),
  );
}

/** Resolves the pages whose lease expired (fence, ask whether they committed) and settles their locks. */
async function settleExpired(
  c: ClaimContext,
  expired: ReadonlyMap<string, readonly ClaimItem[]>,
  resolveForeign: ResolveForeignPage,
): Promise<void> {
  for (const [owner, items] of expired) {
    parsePageKey(owner);
    const committed = await resolveForeign(owner);
    await settleItems(c, `settling page ${owner}`, owner, committed, true, items);
  }
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

/** Takes the locks of `items` for the page, waiting for live foreign pages and resolving expired ones. */
async function takeLocks(
  c: ClaimContext,
  items: readonly ClaimItem[],
  resolveForeign: ResolveForeignPage,
): Promise<ClaimItem[]> {
  let todo = [...items];
  const mine: ClaimItem[] = [];
  let waited = false;
  while (todo.length > 0) {
    const batch = todo;
    const states = await onRedis(`claiming page ${c.pageKey}`, () =>
      c.backend.claim({
        set: c.keys.claimSet(c.resource, c.options.scope),
        versioned: versionedOf(c.resource),
        pageKey: c.pageKey,
        leaseMs: c.leaseMs,
        locks: batch.map((it) => it.lock),
        entries: batch.map((it) => it.entry),
      }),
    );
    const step = sortByLockState(batch, states);
    mine.push(...step.mine);
    await settleExpired(c, step.expired, resolveForeign);
    todo = step.retry;
    if (todo.length > 0 && step.expired.size === 0) {
      if (!waited && c.options.onWait !== undefined) await c.options.onWait();
      waited = true;
      // Never hold while waiting: a page that kept the locks it got while it waits for another page's can close
      // a cycle (walk A holds trade 1 and waits for trade 2, walk B holds 2 and waits for 1; the buyer's and
      // the seller's walks read the same trades), and leases renewed by the waiters never expire. So this
      // page's locks are released (compare-and-delete: only the ones still carrying this page key) and taken
      // again with the rest; the poll is jittered so two pages that collide do not retry in step.
      if (mine.length > 0) {
        const held = mine.splice(0);
        await settleItems(c, `releasing page ${c.pageKey} while it waits`, c.pageKey, false, false, held);
        todo = [...todo, ...held];
      }
      await pollAgain(c.pollMs, c.options.signal);
    }
  }
  return mine;
}

/** {@link PendingMarks.claim} of one page. */
async function claimPage<T extends DedupRecord>(
  c: ClaimContext,
  records: readonly T[],
  resolveForeign: ResolveForeignPage,
): Promise<PageClaim<T>> {
  const { seq } = parsePageKey(c.pageKey);
  checkScope(c.options.scope);
  const { scope } = c.options;
  const { items, fresh } = pickClaimItems(c.resource, records, (id) => c.keys.lock(c.resource, scope, id));
  const mine = await takeLocks(c, items, resolveForeign);
  for (const it of mine) fresh.add(it.index);
  const page: PendingPage = {
    pageKey: c.pageKey,
    seq,
    resource: c.resource,
    ...(scope === undefined ? {} : { scope }),
    entries: mine.map((it) => it.entry),
  };
  return {
    fresh: records.filter((_, i) => fresh.has(i)),
    repeats: records.length - fresh.size,
    page,
  };
}

/** A page as the intent stores it (its seq is the field). */
function encodeIntentPage(page: PendingPage): string {
  return JSON.stringify({
    pageKey: page.pageKey,
    resource: page.resource,
    scope: page.scope,
    entries: page.entries.map((e) => [e.id, e.version]),
  });
}

function decodeIntentPage(seq: number, value: string): PendingPage {
  const v = JSON.parse(value) as {
    pageKey: string;
    resource: ResourceName;
    scope?: string;
    entries: [string, string][];
  };
  return {
    pageKey: v.pageKey,
    seq,
    resource: v.resource,
    ...(v.scope === undefined ? {} : { scope: v.scope }),
    entries: v.entries.map(([id, version]) => ({ id, version })),
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

  return {
    claim: (pageKey, resource, records, resolveForeign, o = {}) =>
      claimPage({ backend, keys, leaseMs, pollMs, pageKey, resource, options: o }, records, resolveForeign),

    async writeIntent(sliceKey, page) {
      checkPage(sliceKey, page);
      checkScope(page.scope);
      const value = encodeIntentPage(page);
      await onRedis(`writing the intent of ${sliceKey}`, () =>
        backend.writeIntent(keys.intent(sliceKey), page.seq, value),
      );
    },

    async readIntent(sliceKey) {
      const fields = await onRedis(`reading the intent of ${sliceKey}`, () =>
        backend.readIntent(keys.intent(sliceKey)),
      );
      return fields.map(([seq, value]) => decodeIntentPage(seq, value)).sort((a, b) => a.seq - b.seq);
    },

    async settle(sliceKey, pages, committed) {
      for (const page of pages) checkPage(sliceKey, page);
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
                versionFromLock: false,
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
