/**
 * Gaps (issue 48): the ranges a tail's run could not read. A tail's slice that fails for good does not fail its run
 * (`RunJobData.gapOnFailure`); when the run completes, each such slice's range is recorded here with its reason, so
 * the tail moves on and the gap stays visible (`status`, `gamedata_tail_gaps`, the `GamedataTailGap` alert) until a
 * later run reads the range whole: any run of the resource that completes with no gap of its own and whose range
 * covers the gap's closes it (a tail's next runs when the gap lies in their lookback, or `gamedata backfill <resource>
 * --since <gap start> --until <gap end>`).
 *
 * In Redis: `<redisPrefix>:gaps:<resource>`, a hash from the failed slice's id to the gap's JSON. Never more than the
 * slices that failed for good, and each is removed when closed.
 */
import type { Redis } from 'ioredis';
import { maskWith, ownSecrets, type Secrets } from '../../foundation/config/index.js';
import { RESOURCES, type ResourceName } from '../../foundation/models/index.js';
import type { RunJobData, WalkFilters } from '../contract/job-types.js';
import { UNFILTERED_TRANSACTION_WINDOW_MS } from '../planner/plan-backfill.js';

/** A range of a resource a tail's run could not read. */
export interface RangeGap {
  resource: ResourceName;
  /** The run and the slice that failed. */
  runId: string;
  sliceId: string;
  /** The walk's filters (a per-user or per-country walk's own; `{}` for the resource's listing). */
  filters: WalkFilters;
  /** The slice's range when it failed, upstream sort time (epoch ms), half-open. */
  start: number;
  end: number;
  /** Why its last attempt failed (masked). */
  reason: string;
  /** When the gap was recorded (local clock, ms). */
  recordedAt: number;
}

export interface RangeGaps {
  /** Records gaps (a failed slice recorded twice is one gap). */
  record(gaps: readonly RangeGap[]): Promise<void>;
  /** The resource's gaps, oldest range first; every resource's when `resource` is undefined. */
  list(resource?: ResourceName): Promise<RangeGap[]>;
  /** How many gaps each resource has (resources without any left out). */
  counts(): Promise<Partial<Record<ResourceName, number>>>;
  /** Closes the gaps `run` read whole (it completed without gaps of its own); resolves to how many. */
  close(
    run: Pick<RunJobData, 'resources' | 'since' | 'until' | 'filters' | 'fullHistory' | 'createdAt'>,
  ): Promise<number>;
}

/**
 * Whether a run that completed without gaps read the gap's range whole: the same resource, no operator filter (every
 * walk of the resource), the gap's range inside the run's; for transactions, a gap older than the unfiltered feed's
 * 72 h only by a full-history run (the feed is empty there).
 */
export function runCoversGap(
  run: Pick<RunJobData, 'resources' | 'since' | 'until' | 'filters' | 'fullHistory' | 'createdAt'>,
  gap: Pick<RangeGap, 'resource' | 'start' | 'end'>,
): boolean {
  if (!run.resources.includes(gap.resource) || Object.keys(run.filters).length > 0) return false;
  if (gap.start < run.since || gap.end > run.until) return false;
  if (gap.resource !== 'transactions' || run.fullHistory) return true;
  return gap.start >= run.createdAt - UNFILTERED_TRANSACTION_WINDOW_MS;
}

/**
 * The Redis store of gaps.
 * @param prefix `GAMEDATA_REDIS_PREFIX`. @default 'gamedata'
 * @param secrets masked in a stored reason. @default the secrets of this process's settings
 */
export function createRangeGaps(
  redis: Redis,
  prefix = 'gamedata',
  secrets: Secrets = ownSecrets(),
): RangeGaps {
  const key = (resource: string): string => `${prefix}:gaps:${resource}`;
  const parse = (text: string): RangeGap | undefined => {
    try {
      return JSON.parse(text) as RangeGap;
    } catch {
      return undefined;
    }
  };
  /** The resources with a gap, by the six keys' sizes (a SCAN for them walked the whole keyspace; issue 51). */
  async function gapCounts(): Promise<[ResourceName, number][]> {
    const replies = await redis.pipeline(RESOURCES.map((r) => ['hlen', key(r)])).exec();
    const found: [ResourceName, number][] = [];
    RESOURCES.forEach((resource, i) => {
      const [error, n] = replies?.[i] ?? [new Error('no reply'), 0];
      if (error !== null) throw error;
      if (Number(n) > 0) found.push([resource, Number(n)]);
    });
    return found.sort((a, b) => a[0].localeCompare(b[0]));
  }
  async function resourcesWithGaps(): Promise<ResourceName[]> {
    return (await gapCounts()).map(([resource]) => resource);
  }
  const store: RangeGaps = {
    async record(gaps) {
      if (gaps.length === 0) return;
      const tx = redis.multi();
      for (const g of gaps)
        tx.hset(key(g.resource), g.sliceId, JSON.stringify({ ...g, reason: maskWith(g.reason, secrets) }));
      await tx.exec();
    },
    async list(resource) {
      const resources = resource === undefined ? await resourcesWithGaps() : [resource];
      const out: RangeGap[] = [];
      for (const r of resources)
        for (const text of Object.values(await redis.hgetall(key(r)))) {
          const gap = parse(text);
          if (gap !== undefined) out.push(gap);
        }
      return out.sort((a, b) => a.resource.localeCompare(b.resource) || a.start - b.start || a.end - b.end);
    },
    async counts() {
      const out: Partial<Record<ResourceName, number>> = {};
      for (const [r, n] of await gapCounts()) out[r] = n;
      return out;
    },
    async close(run) {
      let closed = 0;
      for (const resource of run.resources) {
        const covered = (await store.list(resource)).filter((g) => runCoversGap(run, g));
        if (covered.length === 0) continue;
        closed += await redis.hdel(key(resource), ...covered.map((g) => g.sliceId));
      }
      return closed;
    },
  };
  return store;
}
