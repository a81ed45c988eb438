/**
 * The sweep of orphaned locks (issue 47, months of tails): a lock whose lease expired long ago and that no claim met
 * since (its slice was never run again: its run failed or was cancelled, and nothing else read its ids) would stay in
 * Redis forever, since locks have no TTL (pending-marks.ts: once a page may have committed, its lock is the only
 * trace tying the id to it). The sweep resolves each such lock as a claim would: `resolveForeign(pageKey)` makes sure
 * the page's session commits nothing more and says whether it committed; then the lock is settled (committed: its id
 * marked seen at the version it holds; else deleted). Compare-and-delete by page key: a lock a page took over
 * meanwhile is left alone, and two workers sweeping at once do each lock's work once.
 */
import { RESOURCE_INFO, isResourceName, type ResourceName } from '../../foundation/models/index.js';
import type { PendingMarksBackend } from './pending-marks.js';
import type { ResolveForeignPage } from './pending-page.js';
import { onRedis } from './internal/on-redis.js';

/** What one sweep did. */
export interface LockSweepReport {
  /** Lock keys looked at. */
  scanned: number;
  /** Locks past their lease plus the grace. */
  expired: number;
  /** Expired locks whose page committed: marked seen, deleted. */
  committed: number;
  /** Expired locks whose page did not commit: deleted. */
  released: number;
  /** Expired locks of a page still live in this process, or not of a known form: left. */
  left: number;
}

export interface LockSweepOptions {
  /** Key prefix (the pending marks'). @default 'gamedata' */
  prefix?: string;
  /**
   * How long past its lease a lock must be before the sweep resolves it: well above a claim's wait, so the sweep
   * only meets locks no claim is about to resolve. @default 600000 (10 min)
   */
  graceMs?: number;
  /** Lock keys per SCAN step. @default 500 */
  count?: number;
  signal?: AbortSignal;
}

/** A lock key's parts: `<prefix>:lock:<resource>[:run:<scope>]/<id>`. */
function parseLockKey(
  prefix: string,
  key: string,
): { resource: ResourceName; scope?: string; id: string } | undefined {
  const head = `${prefix}:lock:`;
  if (!key.startsWith(head)) return undefined;
  const rest = key.slice(head.length);
  const slash = rest.indexOf('/');
  if (slash < 0) return undefined;
  const [resource, run, ...scope] = rest.slice(0, slash).split(':');
  const id = rest.slice(slash + 1);
  if (resource === undefined || !isResourceName(resource) || id === '') return undefined;
  if (run === undefined) return { resource, id };
  if (run !== 'run' || scope.length === 0) return undefined;
  return { resource, scope: scope.join(':'), id };
}

/** Whether a lock's owner is a page key (`pending-marks.ts` `parsePageKey`'s form, checked loosely: `#<seq>`). */
const isPageKey = (owner: string): boolean => /^.+#(0|[1-9]\d{0,14})(?:[@~].*)?$/.test(owner);

/** A lock value's page key and lease end: `<pageKey>|<leaseUntil>|...`. */
function parseLockValue(value: string): { owner: string; until: number } | undefined {
  const a = value.indexOf('|');
  const b = value.indexOf('|', a + 1);
  if (a < 0 || b < 0) return undefined;
  const until = Number(value.slice(a + 1, b));
  return Number.isFinite(until) ? { owner: value.slice(0, a), until } : undefined;
}

/** Resolves and settles the expired lock `key` held by `owner` (fates cached per page key for this sweep). */
async function sweepOne(
  backend: PendingMarksBackend,
  prefix: string,
  key: string,
  owner: string,
  fates: Map<string, Promise<boolean | 'live'>>,
  resolveForeign: ResolveForeignPage,
): Promise<'committed' | 'released' | 'left'> {
  const parts = parseLockKey(prefix, key);
  if (parts === undefined || !isPageKey(owner)) return 'left';
  let fate = fates.get(owner);
  if (fate === undefined) {
    fate = resolveForeign(owner);
    fates.set(owner, fate);
  }
  const committed = await fate;
  if (committed === 'live') return 'left';
  const global = `${prefix}:seen:${parts.resource}`;
  const sets = parts.scope === undefined ? [global] : [global, `${global}:run:${parts.scope}`];
  await backend.settle({
    sets,
    versioned: RESOURCE_INFO[parts.resource].dedup === 'version',
    pageKey: owner,
    committed,
    versionFromLock: true,
    locks: [key],
    entries: [{ id: parts.id, version: '' }],
  });
  return committed ? 'committed' : 'released';
}

/**
 * One sweep over every lock under the prefix (see the file comment); `PendingMarks.sweep` runs it on its backend.
 * @example await sweepOrphanedLocks(backend, foreignPageResolver(eos), { prefix: 'gamedata' })
 */
export async function sweepOrphanedLocks(
  backend: PendingMarksBackend,
  resolveForeign: ResolveForeignPage,
  options: LockSweepOptions = {},
): Promise<LockSweepReport> {
  const prefix = options.prefix ?? 'gamedata';
  const graceMs = options.graceMs ?? 600_000;
  const report: LockSweepReport = { scanned: 0, expired: 0, committed: 0, released: 0, left: 0 };
  const fates = new Map<string, Promise<boolean | 'live'>>();
  let cursor = '0';
  do {
    options.signal?.throwIfAborted();
    const step = await onRedis('sweeping orphaned locks', () =>
      backend.scanLocks(`${prefix}:lock:`, cursor, options.count ?? 500),
    );
    cursor = step.cursor;
    report.scanned += step.locks.length;
    for (const [key, value] of step.locks) {
      const lock = parseLockValue(value);
      if (lock === undefined || lock.until + graceMs >= step.now) continue;
      report.expired += 1;
      const done = await onRedis(`settling the orphaned lock ${key}`, () =>
        sweepOne(backend, prefix, key, lock.owner, fates, resolveForeign),
      );
      report[done] += 1;
    }
  } while (cursor !== '0');
  return report;
}
