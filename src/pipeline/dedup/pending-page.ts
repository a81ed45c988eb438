/**
 * What the exactly-once dedup protocol knows of one page (`pending-marks.ts` for pages of locks, `mark-claims.ts` for
 * pages claimed by mark): its key, which names its slice, seq, writer and session; the rule that says whether it
 * committed; how the intents store it; and the protocol's Redis keys.
 */
import { GamedataError } from '../../foundation/errors/index.js';
import type { ResourceName } from '../../foundation/models/index.js';
import type { SeenEntry } from './redis-seen-set.js';

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
  /**
   * The run a page claimed by mark belongs to (`mark-claims.ts`: its ids were marked seen at its claim, no lock taken;
   * settling it uncommitted takes the marks back). Absent: a page of locks.
   */
  run?: string;
}

/**
 * Says whether the page `pageKey` (of another slice, its lease expired) committed: true or false, or `'live'` when the
 * page's session is alive in this process (then it is waited for like a live lease). It must first make sure that
 * nothing of the page's session can commit any more (fence its producer where needed), then read its slice's last
 * committed checkpoint and apply {@link pageCommitted}.
 */
export type ResolveForeignPage = (pageKey: string) => Promise<boolean | 'live'>;

/**
 * The page key of page `seq` of a slice, written through `writer` by the session `session`, whose checkpoints all lie
 * at or after offset `readFrom` of the checkpoint partition.
 */
export function pageKeyOf(
  sliceKey: string,
  seq: number,
  writer?: string,
  session?: string,
  readFrom?: string,
): string {
  const key = writer === undefined ? `${sliceKey}#${seq}` : `${sliceKey}#${seq}@${writer}`;
  if (session === undefined) return key;
  return readFrom === undefined ? `${key}~${session}` : `${key}~${session}.${readFrom}`;
}

const PAGE_KEY = /^(.+)#(0|[1-9]\d{0,14})(?:@([^#@|~]+))?(?:~([\da-z]+)(?:\.(0|[1-9]\d{0,18}))?)?$/;

/** A page key's parts (see {@link parsePageKey}). */
export interface PageKeyParts {
  sliceKey: string;
  seq: number;
  /** The transactional.id of the producer whose transaction the page goes into. */
  writer?: string;
  /** The session (one owner's run of the slice) that wrote the page; absent in keys of an older version. */
  session?: string;
  /**
   * An offset of the slice's checkpoint partition at or before every checkpoint of the page's session (its
   * `readFrom`): resolving the page reads the slice's checkpoint from there, not the whole partition.
   */
  readFrom?: string;
}

/**
 * The slice key, seq, writer and session of a page key `<sliceKey>#<seq>[@<writer>][~<session>[.<readFrom>]]`. The
 * writer lets whoever resolves the page's orphaned locks fence that producer only; the session tells which owner's
 * page it was, and `readFrom` where its checkpoints start.
 * @throws GamedataError when `pageKey` is not of that form or holds a `|` (the locks' separator).
 */
export function parsePageKey(pageKey: string): PageKeyParts {
  const m = PAGE_KEY.exec(pageKey);
  if (m === null || pageKey.includes('|'))
    throw new GamedataError(
      `page key must be "<sliceKey>#<seq>[@<writer>][~<session>[.<offset>]]" without "|", got ${JSON.stringify(pageKey)}`,
    );
  return {
    sliceKey: m[1]!,
    seq: Number(m[2]),
    ...(m[3] === undefined ? {} : { writer: m[3] }),
    ...(m[4] === undefined ? {} : { session: m[4] }),
    ...(m[5] === undefined ? {} : { readFrom: m[5] }),
  };
}

/**
 * Whether a page committed, by its slice's last committed checkpoint (read after nothing of the page's session can
 * commit any more): only the page's own session commits it, so committed iff that checkpoint was written by the
 * page's session at or past its seq. A checkpoint of another session means the page did not commit: a session's
 * successor settles every page in the intent before its own first commit, and a page claimed after that (a zombie's)
 * cannot commit. Keys without a session (an older version) keep the seq rule.
 */
export function pageCommitted(
  page: Pick<PageKeyParts, 'seq' | 'session'>,
  checkpoint: { seq: number; session?: string | undefined } | null,
): boolean {
  if (checkpoint === null) return false;
  if (page.session !== undefined && checkpoint.session !== page.session) return false;
  return checkpoint.seq >= page.seq;
}

/** The Redis keys of the protocol under one prefix. */
export interface PendingKeys {
  /** The lock of one entity; scoped locks are separate (a replay run publishes again what the global set holds). */
  lock(resource: ResourceName, scope: string | undefined, id: string): string;
  /** The seen-set a claim checks: the run-scoped one under `--replay`, else the global one. */
  claimSet(resource: ResourceName, scope: string | undefined): string;
  /**
   * The seen-sets a committed page is marked in: the global one, and the run-scoped one under `--replay`; the last
   * is always {@link claimSet} (settle relies on it).
   */
  markSets(resource: ResourceName, scope: string | undefined): string[];
  /** The intent (pages not settled yet) of one slice. */
  intent(sliceKey: string): string;
  /**
   * The pages of one slice claimed by mark, not settled yet (a hash: page key -> the page), and the slice's current
   * session (field `owner`): `mark-claims.ts`.
   */
  marks(sliceKey: string): string;
  /** The runs of one resource and whether each may claim by mark (`lone-runs.ts`): a hash, run id -> its entry. */
  runs(resource: ResourceName): string;
  /** A run's pages claimed by mark and not settled yet, on one resource: a sorted set, page key -> lease end (ms). */
  marking(run: string, resource: ResourceName): string;
  /** The runs whose pages claimed by mark a run must see settled before its first claim of locks: a set. */
  drain(run: string, resource: ResourceName): string;
}

export function pendingKeysOf(prefix: string): PendingKeys {
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
    marks: (sliceKey) => `${prefix}:marks:${sliceKey}`,
    runs: (r) => `${prefix}:eos:runs:${r}`,
    marking: (run, r) => `${prefix}:eos:marking:${run}:${r}`,
    drain: (run, r) => `${prefix}:eos:drain:${run}:${r}`,
  };
}

/** A page as the intent stores it (its seq is the field). */
export function encodeIntentPage(page: PendingPage): string {
  return JSON.stringify({
    pageKey: page.pageKey,
    resource: page.resource,
    scope: page.scope,
    run: page.run,
    entries: page.entries.map((e) => [e.id, e.version]),
  });
}

export function decodeIntentPage(seq: number, value: string): PendingPage {
  const v = JSON.parse(value) as {
    pageKey: string;
    resource: ResourceName;
    scope?: string;
    run?: string;
    entries: [string, string][];
  };
  return {
    pageKey: v.pageKey,
    seq,
    resource: v.resource,
    ...(v.scope === undefined ? {} : { scope: v.scope }),
    ...(v.run === undefined ? {} : { run: v.run }),
    entries: v.entries.map(([id, version]) => ({ id, version })),
  };
}
