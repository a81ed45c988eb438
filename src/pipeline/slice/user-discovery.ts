/**
 * Transitive user discovery for full-history transaction walks. The per-user walk starts from the users the
 * per-country listings show; a listing item served without `_id` hides its user from that list. Every trade names
 * its buyer and seller, so each page of a per-user walk reveals counterparties: those not yet known in the run get a
 * walk of their own (same range and filters as a planned user walk, so the same deterministic slice id). A hidden
 * user is thereby walked as soon as any walked user traded with them.
 *
 * Crash safety: for each page, the unknown counterparties are looked up (read-only), their walks are added to the
 * run, and only then are they remembered in the run's set. The page is checkpointed after all of this (the source
 * wrapper runs it before the page reaches `processSlice`), so a crash anywhere re-reads the page and spawns again;
 * re-adding a slice with an existing job id is a no-op.
 */
import type { Redis } from 'ioredis';
import type { DedupRecord } from '../dedup/index.js';
import type { RunJobData, SliceJobData, WalkFilters } from '../contract/job-types.js';
import type { SliceSource } from './slice-contract.js';
import { sliceJobId } from '../contract/queue-names.js';
import { tradeUsers } from '../../foundation/models/index.js';

export { COUNTERPARTY_FIELDS } from '../../foundation/models/index.js';

/** The users a run knows (listed at planning or discovered since), kept in Redis per run. */
export interface UserDirectory {
  /**
   * Records a run's whole user listing: the users listed and how many listing items had no `_id` (before the walks
   * of the users not yet added are enqueued).
   */
  seed(runId: string, listed: readonly string[], unlisted: number): Promise<void>;
  /** Adds users whose walks the planner enqueues before its listing ends (`early-slices.ts`). */
  add(runId: string, ids: readonly string[]): Promise<void>;
  /** Of `ids`, those the run does not know yet (one round trip; no write). */
  unknown(runId: string, ids: readonly string[]): Promise<string[]>;
  /** Remembers discovered users (after their walks were added); counts the ones that were new. */
  remember(runId: string, ids: readonly string[]): Promise<number>;
  /**
   * The run's figures: listing items without `_id`, and users walked that the listing does not show (a trade
   * revealed them: to a walk's discovery, or on the feed's head page the planner starts with).
   */
  stats(runId: string): Promise<{ unlistedUsers: number; discoveredUsers: number }>;
}

/** Redis keys: `<prefix>:run:<runId>:users` (a set) and two fields of the run's counters hash. */
export function createRedisUserDirectory(redis: Redis, prefix = 'gamedata'): UserDirectory {
  const setKey = (runId: string): string => `${prefix}:run:${runId}:users`;
  // The run counters hash: `RunCounters.get` ignores fields it does not know, so these ride along.
  const countersKey = (runId: string): string => `${prefix}:run:${runId}:counters`;
  return {
    async seed(runId, listed, unlisted) {
      await this.add(runId, listed);
      const distinct = new Set(listed).size;
      await redis.hset(countersKey(runId), 'unlistedUsers', unlisted, 'listedUsers', distinct);
    },
    async add(runId, ids) {
      for (let i = 0; i < ids.length; i += 5000) await redis.sadd(setKey(runId), ...ids.slice(i, i + 5000));
    },
    async unknown(runId, ids) {
      if (ids.length === 0) return [];
      const known = await redis.smismember(setKey(runId), ...ids);
      return ids.filter((_, i) => known[i] !== 1);
    },
    async remember(runId, ids) {
      if (ids.length === 0) return 0;
      const n = await redis.sadd(setKey(runId), ...ids);
      if (n > 0) await redis.hincrby(countersKey(runId), 'discoveredUsers', n);
      return n;
    },
    async stats(runId) {
      const [u, l, d] = await redis.hmget(
        countersKey(runId),
        'unlistedUsers',
        'listedUsers',
        'discoveredUsers',
      );
      // Every user walked is in the set, the whole listing included: the rest were not listed. A listed user a trade
      // revealed before its listing page came (the planner starts walks while it lists) is not counted. Runs seeded
      // without `listedUsers` (an older planner): discovery's own count.
      const discovered =
        l === null ? Number(d ?? 0) : Math.max(0, (await redis.scard(setKey(runId))) - Number(l));
      return { unlistedUsers: Number(u ?? 0), discoveredUsers: discovered };
    },
  };
}

/** The distinct, well-formed user ids a page of transactions names (buyer, seller, single-party user). */
export function counterparties(items: readonly DedupRecord[]): string[] {
  const out = new Set<string>();
  for (const item of items) for (const id of tradeUsers(item)) out.add(id);
  return [...out];
}

/**
 * Whether a run walks transactions per user (full history, no operator `userId`): then its slices discover. A run
 * planned from a partition proof that proved every type has no per-user walk (its partition walks read every row).
 */
export function discoversUsers(
  run: Pick<RunJobData, 'resources' | 'fullHistory' | 'filters'> & Partial<Pick<RunJobData, 'partition'>>,
): boolean {
  const p = run.partition;
  if (p !== undefined && p.used !== false && p.provenTypes.length > 0 && p.unprovenTypes.length === 0)
    return false;
  return run.resources.includes('transactions') && run.fullHistory && run.filters['userId'] === undefined;
}

/**
 * The types a run's per-user walks read: undefined (every type) unless the run was planned from a partition proof
 * that proved some types, then the others (the partition walks read the proven ones).
 */
export function perUserTypes(run: Partial<Pick<RunJobData, 'partition'>>): string[] | undefined {
  const p = run.partition;
  return p === undefined || p.used === false || p.provenTypes.length === 0 ? undefined : p.unprovenTypes;
}

/**
 * The walk of a discovered user: the run's range, the operator's filters plus `userId`, and the types the run walks
 * per user when a partition proof left some (`perUserTypes`) (the slice the planner makes
 * for a listed user when it plans for requests, so a user both listed and discovered has one slice id). Planned for
 * rounds, a busy listed user's walk is several page-sized slices with other ids: the run's user set (seeded with
 * every listed user before the run starts) is what keeps such a user from being walked again when a trade names
 * them; without it the walk would be read twice and dedup would keep one copy of each row.
 */
export function userWalk(
  run: Pick<RunJobData, 'runId' | 'since' | 'until' | 'filters' | 'replay'> &
    Partial<Pick<RunJobData, 'partition' | 'gapOnFailure'>>,
  userId: string,
): SliceJobData {
  const types = perUserTypes(run);
  const filters: WalkFilters = {
    ...run.filters,
    userId,
    ...(types === undefined ? {} : { transactionType: types.length === 1 ? (types[0] as string) : types }),
  };
  return {
    runId: run.runId,
    sliceId: sliceJobId(run.runId, { r: 'transactions', ...filters }, run.since, run.until),
    resource: 'transactions',
    filters,
    start: run.since,
    end: run.until,
    replay: run.replay,
    depth: 0,
    ...(run.gapOnFailure === true ? { gapOnFailure: true } : {}),
  };
}

/**
 * Wraps a slice source so each page of a per-user transaction slice first spawns the walks of the counterparties
 * the run does not know yet. The page is handed on (to publish, mark seen and checkpoint) only after the spawn and
 * the remembering succeeded, with its walk's user (`SlicePage.walker`): every party it names is walked by then, so
 * the rows the other party owns are left to that party's walk (`row-owner.ts`).
 */
export function withUserDiscovery(
  source: SliceSource,
  run: Pick<RunJobData, 'runId' | 'since' | 'until' | 'filters' | 'replay'> &
    Partial<Pick<RunJobData, 'partition' | 'gapOnFailure'>>,
  deps: {
    users: Pick<UserDirectory, 'unknown' | 'remember'>;
    spawn(children: SliceJobData[]): Promise<void>;
  },
): SliceSource {
  const enrich = source.enrich?.bind(source);
  return {
    operation: (resource) => source.operation(resource),
    ...(enrich === undefined ? {} : { enrich }),
    async *readPages(slice, options) {
      for await (const page of source.readPages(slice, options)) {
        if (slice.resource !== 'transactions') {
          yield page;
          continue;
        }
        const fresh = await deps.users.unknown(run.runId, counterparties(page.items));
        if (fresh.length > 0) {
          await deps.spawn(fresh.map((id) => userWalk(run, id)));
          await deps.users.remember(run.runId, fresh);
        }
        // Every party this page names is walked now, so each trade has one owner walk (row-owner.ts).
        const walker = slice.filters['userId'];
        yield typeof walker === 'string' ? { ...page, walker } : page;
      }
    },
  };
}
