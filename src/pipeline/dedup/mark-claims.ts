/**
 * Claims by mark (issue 47: exactly-once by construction, no lock where nothing contends). A page of a run that is
 * alone on its resource's range (`lone-runs.ts`) claims its records in one atomic step that checks the seen-set and
 * marks the unseen ones seen at once: no lock is taken, and nothing is left to do per record once the page commits.
 * Per page, in this order:
 * 1. {@link tryMarkClaim}: atomically, the run is still alone (else: locks from now on), the slice's current session is
 *    the page's (`openMarks`, set by each new owner before it reads the intent: a zombie marks nothing after it), no
 *    lock is held on an unseen id (an older page of locks may have committed it: the page takes locks instead), then
 *    the unseen ids are marked, and the page goes into the slice's marks (`<prefix>:marks:<sliceKey>`, a hash by page
 *    key, so a zombie never overwrites a page of its successor) and into its run's marking set (by lease end).
 * 2. The caller publishes the page(s) and the checkpoint in one Kafka transaction and commits.
 * 3. Settle: committed -> the page leaves the marks and the marking set (no per-record work); not committed -> the
 *    same, and if the page was still in the marks, its marks are taken back, in the same step. Whoever settles a page
 *    first does its work: its owner, the slice's next owner (by the checkpoint, as for pages of locks), a run that
 *    drains it, the sweep.
 *
 * Why it is exact. No duplicate: a record is published only by the page whose atomic step took its id from unseen to
 * seen, and the id goes back to unseen only once that page is known never to commit (its transaction aborted, or its
 * session fenced and the checkpoint read). No loss: a reader that skips an id another page marked relies on that page
 * committing, or on its slice reading the id again after the marks are taken back (the page's slice resumes from its
 * checkpoint, which lies before the page); within one run that holds (a slice that fails for good fails its run, or
 * leaves its range as a tail's gap, and its marks are taken back by its next owner or the sweep). Across runs it holds
 * because a run marks only while no other run overlaps its range: a second run makes the first share (it then takes
 * locks) and, before its own first claim, waits until every page the first marked has settled ({@link drainBefore}).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { GamedataError, SliceFencedError } from '../../foundation/errors/index.js';
import { RESOURCE_INFO, RESOURCES, type ResourceName } from '../../foundation/models/index.js';
import { onRedis } from './internal/on-redis.js';
import {
  decodeIntentPage,
  parsePageKey,
  type PendingKeys,
  type PendingPage,
  type ResolveForeignPage,
} from './pending-page.js';
import type { SeenEntry } from './redis-seen-set.js';

/** What a claim by mark sends (see {@link MarkClaimsBackend.markClaim}). */
export interface MarkClaimRequest {
  /** The seen-set checked and marked (the resource's global one). */
  set: string;
  /** The resource's runs (`PendingKeys.runs`) and this page's run: the step marks only while the run is alone. */
  registry: string;
  run: string;
  /** The slice's marks (`PendingKeys.marks`) and the page's session, which must be the slice's current one. */
  marks: string;
  session: string;
  pageKey: string;
  leaseMs: number;
  /** The run's marking set on the resource (`PendingKeys.marking`). */
  marking: string;
  /** Per entry its lock key (an older page of locks may hold one): then nothing is marked. */
  locks: readonly string[];
  entries: readonly SeenEntry[];
  /** The page as the intent stores it, every entry listed; the backend prefixes which ones it marked. */
  value: string;
}

/**
 * A claim by mark's answer: `ok` with, per entry, whether this page marked it (false: it was seen); else nothing was
 * changed and the page takes locks: `shared` (the run is not alone, or not registered), `locked` (an unseen id has a
 * lock), `unowned` (no owner opened the slice's marks); or `fenced` (the slice has a newer session).
 */
export type MarkClaimAnswer =
  { status: 'ok'; marked: boolean[] } | { status: 'shared' | 'locked' | 'unowned' | 'fenced' };

/** The registry's answer to a run's registration on one resource. */
export interface RegisterAnswer {
  /** The run may claim by mark (no other registered run overlaps it, and it asked to). */
  lone: boolean;
  /** The overlapping runs, whose pages claimed by mark it must see settled before its first claim of locks. */
  drain: string[];
}

/** The atomic steps of claims by mark: Redis in production (`redis-pending-marks.ts`), memory in unit tests. */
export interface MarkClaimsBackend {
  /** See {@link MarkClaimRequest} and {@link MarkClaimAnswer}; the marks stored are `<marked indexes>\n<value>`. */
  markClaim(request: MarkClaimRequest): Promise<MarkClaimAnswer>;
  /**
   * Atomically: removes the page from `marks` and `marking`; when it was in `marks` and did not commit, removes
   * `entries` from `set` (the ids it marked). Returns whether it was in `marks`.
   */
  markSettle(request: {
    set: string;
    marks: string;
    marking: string;
    pageKey: string;
    committed: boolean;
    entries: readonly SeenEntry[];
  }): Promise<boolean>;
  /**
   * Pages that committed leave `marks` and `marking` (two commands, no script: a page found in one and not the other
   * is settled by whoever meets it, see `resolveMarkPage`).
   */
  markCommitted(marks: string, marking: string, pageKeys: readonly string[]): Promise<void>;
  /** Makes `session` the slice's current one: a claim by mark of any other session is `fenced` from now on. */
  openMarks(marks: string, session: string): Promise<void>;
  /**
   * When `session` owns `marks` and no page is left in them, lets them expire soon (`CLOSED_MARKS_TTL_MS`): a slice
   * that ended leaves nothing behind for long, and a zombie that wakes meanwhile is still refused.
   */
  closeMarks(marks: string, session: string): Promise<void>;
  /** The pages in `marks` (not the owner), as stored: [page key, `<marked indexes>\n<value>`]. */
  readMarks(marks: string): Promise<[string, string][]>;
  /** One page of `marks`, as stored, or undefined. */
  readMark(marks: string, pageKey: string): Promise<string | undefined>;
  /** A marking set's pages with their lease ends (ms), and the lease clock's time now. */
  marking(key: string): Promise<{ pages: [string, number][]; now: number }>;
  /**
   * Atomically: drops the registry's entries of retired runs whose marking set is empty (`markingHead` + run +
   * `markingTail` is a run's set); every other entry overlapping `[since, until)` (half-open) is made to share and
   * listed in `drain`; then the run's entry is set, lone when it asked to be and nothing overlaps (an entry that
   * shares stays so).
   */
  register(request: {
    registry: string;
    drain: string;
    run: string;
    since: number;
    until: number;
    lone: boolean;
    markingHead: string;
    markingTail: string;
  }): Promise<RegisterAnswer>;
  /** The run is over: its entry shares and is retired; it goes when its marking set is empty (now or later). */
  retire(request: { registry: string; marking: string; run: string }): Promise<void>;
  /** The runs of a registry and whether each was retired (for the sweep). */
  registered(registry: string): Promise<{ run: string; retired: boolean }[]>;
  /** The runs listed in a drain set; {@link clearDrain} deletes the set. */
  drainList(drain: string): Promise<string[]>;
  clearDrain(drain: string): Promise<void>;
}

/** What claims by mark work with (one per `createPendingMarks`). */
export interface MarkContext {
  backend: MarkClaimsBackend;
  keys: PendingKeys;
  leaseMs: number;
  pollMs: number;
  /** `<run> <resource>` pairs this process saw share: their pages take locks without asking again. */
  shared: Set<string>;
  /** Drains under way or done in this process, by `<run> <resource>`. */
  drained: Map<string, Promise<void>>;
}

export function createMarkContext(
  backend: MarkClaimsBackend,
  keys: PendingKeys,
  leaseMs: number,
  pollMs: number,
): MarkContext {
  return { backend, keys, leaseMs, pollMs, shared: new Set(), drained: new Map() };
}

const pairKey = (run: string, resource: ResourceName): string => `${run} ${resource}`;

/** Whether a resource's pages may be claimed by mark: its records never change (a repeat is a repeat by `_id`). */
export const markable = (resource: ResourceName): boolean => RESOURCE_INFO[resource].dedup === 'id';

/** A page claimed by mark as its slice's marks store it (`<marked indexes>\n<value>`): only the ids it marked. */
export function decodeMarkPage(pageKey: string, stored: string): PendingPage {
  const nl = stored.indexOf('\n');
  const marked = new Set(
    stored
      .slice(0, Math.max(0, nl))
      .split(',')
      .filter((x) => x !== '')
      .map((x) => Number(x) - 1),
  );
  const page = decodeIntentPage(parsePageKey(pageKey).seq, stored.slice(nl + 1));
  return { ...page, entries: page.entries.filter((_, i) => marked.has(i)) };
}

/**
 * Claims a page by mark when its run may: per entry whether the page marked it (false: seen), or undefined when the
 * page must take locks instead (the run shares, an unseen id is locked, the slice's marks have no owner).
 * @throws SliceFencedError when the slice has a newer session (this one may commit nothing more).
 */
export async function tryMarkClaim(
  m: MarkContext,
  claim: {
    pageKey: string;
    resource: ResourceName;
    run: string;
    locks: readonly string[];
    entries: readonly SeenEntry[];
    value: string;
  },
): Promise<boolean[] | undefined> {
  const { pageKey, resource, run } = claim;
  if (m.shared.has(pairKey(run, resource))) return undefined;
  const { sliceKey, session } = parsePageKey(pageKey);
  if (session === undefined) return undefined;
  const answer = await onRedis(`claiming page ${pageKey} by mark`, () =>
    m.backend.markClaim({
      set: m.keys.claimSet(resource, undefined),
      registry: m.keys.runs(resource),
      run,
      marks: m.keys.marks(sliceKey),
      session,
      pageKey,
      leaseMs: m.leaseMs,
      marking: m.keys.marking(run, resource),
      locks: claim.locks,
      entries: claim.entries,
      value: claim.value,
    }),
  );
  if (answer.status === 'ok') return answer.marked;
  if (answer.status === 'fenced')
    throw new SliceFencedError(
      `slice ${sliceKey} has a newer session than the one of page ${pageKey}: it may claim and commit nothing more`,
      sliceKey,
    );
  if (answer.status === 'shared') m.shared.add(pairKey(run, resource));
  return undefined;
}

/** Settles pages claimed by mark (see the header, step 3), side by side. */
export async function settleMarkPages(
  m: MarkContext,
  sliceKey: string,
  pages: readonly PendingPage[],
  committed: boolean,
): Promise<void> {
  if (committed) {
    // The pages of one commit are of one slice, so of one run and resource: one marking set, in the common case.
    const byMarking = new Map<string, string[]>();
    for (const page of pages) {
      const key = m.keys.marking(page.run ?? '', page.resource);
      byMarking.set(key, [...(byMarking.get(key) ?? []), page.pageKey]);
    }
    await Promise.all(
      [...byMarking].map(([marking, keys]) =>
        onRedis(`settling ${keys.length} page(s) of ${sliceKey}`, () =>
          m.backend.markCommitted(m.keys.marks(sliceKey), marking, keys),
        ),
      ),
    );
    return;
  }
  await Promise.all(
    pages.map((page) =>
      onRedis(`settling page ${page.pageKey}`, () =>
        m.backend.markSettle({
          set: m.keys.claimSet(page.resource, undefined),
          marks: m.keys.marks(sliceKey),
          marking: m.keys.marking(page.run ?? '', page.resource),
          pageKey: page.pageKey,
          committed: false,
          entries: page.entries,
        }),
      ),
    ),
  );
}

/** The slice's pages claimed by mark, not settled yet. */
export async function readMarkPages(m: MarkContext, sliceKey: string): Promise<PendingPage[]> {
  const stored = await onRedis(`reading the marks of ${sliceKey}`, () =>
    m.backend.readMarks(m.keys.marks(sliceKey)),
  );
  return stored.map(([pageKey, value]) => decodeMarkPage(pageKey, value));
}

/** Makes `session` the slice's current one for claims by mark (before its owner reads the slice's intent). */
export function openMarks(m: MarkContext, sliceKey: string, session: string): Promise<void> {
  return onRedis(`opening the marks of ${sliceKey}`, () =>
    m.backend.openMarks(m.keys.marks(sliceKey), session),
  );
}

/** How long a slice's marks outlive its end: a zombie waking within it is refused, a later one takes locks. */
export const CLOSED_MARKS_TTL_MS = 600_000;

/**
 * The slice ended (its last page committed and settled) in `session`: its marks expire in {@link CLOSED_MARKS_TTL_MS}.
 * A zombie's claim by mark until then is refused; after it, finding no owner, it takes locks, which it cannot commit.
 */
export function closeMarks(m: MarkContext, sliceKey: string, session: string): Promise<void> {
  return onRedis(`closing the marks of ${sliceKey}`, () =>
    m.backend.closeMarks(m.keys.marks(sliceKey), session),
  );
}

/** How a page claimed by mark of another session was resolved. */
type MarkFate = boolean | 'live' | 'gone';

/** Resolves a page claimed by mark (its lease ended): fences its session, reads its fate, settles it. */
async function resolveMarkPage(
  m: MarkContext,
  pageKey: string,
  run: string,
  resource: ResourceName,
  resolveForeign: ResolveForeignPage,
): Promise<MarkFate> {
  const { sliceKey } = parsePageKey(pageKey);
  const settle = (committed: boolean, entries: readonly SeenEntry[]): Promise<boolean> =>
    onRedis(`settling page ${pageKey}`, () =>
      m.backend.markSettle({
        set: m.keys.claimSet(resource, undefined),
        marks: m.keys.marks(sliceKey),
        marking: m.keys.marking(run, resource),
        pageKey,
        committed,
        entries,
      }),
    );
  const stored = await onRedis(`reading page ${pageKey}`, () =>
    m.backend.readMark(m.keys.marks(sliceKey), pageKey),
  );
  // Settled already (its marks went with it): only its place in the marking set is left.
  if (stored === undefined) return (await settle(true, [])) ? true : 'gone';
  const fate = await resolveForeign(pageKey);
  if (fate === 'live') return 'live';
  await settle(fate, fate ? [] : decodeMarkPage(pageKey, stored).entries);
  return fate;
}

/** What settling a run's marking set did. */
export interface MarkingReport {
  /** Pages resolved as committed, and as not committed (their marks taken back). */
  committed: number;
  released: number;
  /** Pages whose lease (plus the grace) had not ended, or live in this process. */
  left: number;
}

/**
 * Resolves the pages of a run's marking set whose lease ended `graceMs` ago; with `wait`, polls until the set is empty.
 */
async function settleMarking(
  m: MarkContext,
  run: string,
  resource: ResourceName,
  resolveForeign: ResolveForeignPage,
  o: { graceMs: number; wait: boolean; signal?: AbortSignal | undefined },
): Promise<MarkingReport> {
  const report: MarkingReport = { committed: 0, released: 0, left: 0 };
  for (;;) {
    const key = m.keys.marking(run, resource);
    const { pages, now } = await onRedis(`reading the pages run ${run} marks`, () => m.backend.marking(key));
    let left = 0;
    for (const [pageKey, until] of pages) {
      if (until + o.graceMs >= now) {
        left += 1;
        continue;
      }
      const fate = await resolveMarkPage(m, pageKey, run, resource, resolveForeign);
      if (fate === 'live') left += 1;
      else if (fate === true) report.committed += 1;
      else if (fate === false) report.released += 1;
    }
    if (!o.wait || left === 0) return { ...report, left };
    await pollAgain(m.pollMs, o.signal);
  }
}

/**
 * Before a run's first claim of locks on `resource` in this process: waits until the pages every overlapping run
 * (listed at its registration) claimed by mark have settled, resolving those whose lease ended. Once per run and
 * resource and process; then the drain set is deleted, so later processes have nothing left to wait for.
 */
export function drainBefore(
  m: MarkContext,
  run: string,
  resource: ResourceName,
  resolveForeign: ResolveForeignPage,
  signal?: AbortSignal,
): Promise<void> {
  const key = pairKey(run, resource);
  let done = m.drained.get(key);
  if (done === undefined) {
    done = (async () => {
      const drainKey = m.keys.drain(run, resource);
      const others = await onRedis(`reading the runs ${run} waits for`, () => m.backend.drainList(drainKey));
      for (const other of others)
        await settleMarking(m, other, resource, resolveForeign, { graceMs: 0, wait: true, signal });
      if (others.length > 0) await onRedis(`clearing ${drainKey}`, () => m.backend.clearDrain(drainKey));
    })();
    m.drained.set(key, done);
    // A drain that failed (Redis, an abort) is tried again by the next claim.
    done.catch(() => m.drained.delete(key));
  }
  return done;
}

/**
 * The sweep of pages claimed by mark (months of tails; slices abandoned for good): every registered run's pages whose
 * lease ended more than `graceMs` ago are resolved and settled, their marks taken back where they did not commit.
 */
export async function sweepMarks(
  m: MarkContext,
  resolveForeign: ResolveForeignPage,
  o: { graceMs: number; signal?: AbortSignal | undefined },
): Promise<MarkingReport> {
  const total: MarkingReport = { committed: 0, released: 0, left: 0 };
  for (const resource of RESOURCES.filter(markable)) {
    const runs = await onRedis(`reading the runs of ${resource}`, () =>
      m.backend.registered(m.keys.runs(resource)),
    );
    for (const { run, retired } of runs) {
      if (o.signal?.aborted === true) throw GamedataError.from(o.signal.reason);
      const r = await settleMarking(m, run, resource, resolveForeign, { ...o, wait: false });
      total.committed += r.committed;
      total.released += r.released;
      total.left += r.left;
      // A retired run's entry goes once its marking set is empty.
      if (retired && r.left === 0)
        await onRedis(`retiring run ${run}`, () =>
          m.backend.retire({ registry: m.keys.runs(resource), marking: m.keys.marking(run, resource), run }),
        );
    }
  }
  return total;
}

/** Waits one jittered poll. */
async function pollAgain(pollMs: number, signal: AbortSignal | undefined): Promise<void> {
  try {
    await sleep(
      Math.round(pollMs * (0.5 + Math.random())),
      undefined,
      signal === undefined ? undefined : { signal },
    );
  } catch (error) {
    throw GamedataError.from(error);
  }
}
