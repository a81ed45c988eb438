/**
 * Per-resource schedule state in Redis (`<prefix>:tail:<resource>`, a hash): the watermark, the run in flight and
 * the last outcome; plus a short per-resource lock so two schedule ticks never plan runs of one resource at once.
 */
import type { Redis } from 'ioredis';
import { takeRenewedLock } from './renewed-lock.js';
import { maskWith, ownSecrets, type Secrets } from '../../foundation/config/index.js';
import { RESOURCES, type ResourceName } from '../../foundation/models/index.js';
import type { ScheduleKind } from './schedule-names.js';

/** The run a resource's schedule started and has not seen finish yet. */
export interface ActiveRun {
  runId: string;
  kind: ScheduleKind;
  /** Range the run reads, upstream sort time (epoch ms); `from` undefined = from the earliest record. */
  from: number | undefined;
  to: number;
  /** Local clock (epoch ms) when the run was planned (its head probe). */
  startedAt: number;
}

/** What the schedule remembers about one resource. */
export interface TailState {
  resource: ResourceName;
  /**
   * Upstream sort time (epoch ms) below which every record is on the topic: the `to` of the last run whose every
   * slice completed. Undefined until the first run completes.
   */
  watermark: number | undefined;
  /** Local clock when the run that set the watermark was planned: tail lag is measured from here. */
  watermarkAt: number | undefined;
  active: ActiveRun | undefined;
  lastRunId: string | undefined;
  lastOutcome: 'completed' | 'failed' | undefined;
  lastFinishedAt: number | undefined;
  lastError: string | undefined;
  /** Local clock of the last completed full rescan (resources whose records change). */
  lastRescanAt: number | undefined;
  /** Completed runs, failed runs, ticks skipped because a run was still going. */
  completedRuns: number;
  failedRuns: number;
  skippedTicks: number;
}

export interface TailStateStore {
  get(resource: ResourceName): Promise<TailState>;
  /** Every resource that has schedule state. */
  list(): Promise<TailState[]>;
  /** Records the run just started. */
  setActive(resource: ResourceName, run: ActiveRun): Promise<void>;
  /**
   * Clears the active run. `completed`: the watermark moves to `max(watermark, run.to)` (never back).
   * `failed`: the watermark stays where it was.
   */
  finishActive(
    resource: ResourceName,
    run: ActiveRun,
    outcome: 'completed' | 'failed',
    at: number,
    error?: string,
  ): Promise<void>;
  countSkip(resource: ResourceName): Promise<void>;
  /**
   * Takes the resource's planning lock, renewed while held (a killed holder strands it for at most `ttlMs`); resolves
   * to a release function, or undefined when another holds it.
   */
  lock(resource: ResourceName, ttlMs: number): Promise<(() => Promise<void>) | undefined>;
  /** Forgets a resource's state (operators: start a tail over). */
  reset(resource: ResourceName): Promise<void>;
}

const num = (v: string | undefined): number | undefined =>
  v === undefined || v === '' ? undefined : Number(v);

/**
 * Creates the Redis-backed state store.
 * @param prefix key prefix (`GAMEDATA_REDIS_PREFIX`), default `gamedata`.
 * @param secrets masked in a stored `lastError`; default the secrets of this process's settings (`ownSecrets()`).
 */
export function createTailStateStore(
  redis: Redis,
  prefix = 'gamedata',
  secrets: Secrets = ownSecrets(),
): TailStateStore {
  const key = (r: ResourceName): string => `${prefix}:tail:${r}`;
  const parse = (resource: ResourceName, h: Record<string, string>): TailState => {
    const activeRunId = h['activeRunId'];
    return {
      resource,
      watermark: num(h['watermark']),
      watermarkAt: num(h['watermarkAt']),
      active:
        activeRunId === undefined || activeRunId === ''
          ? undefined
          : {
              runId: activeRunId,
              kind: h['activeKind'] === 'backfill' ? 'backfill' : 'tail',
              from: num(h['activeFrom']),
              to: Number(h['activeTo']),
              startedAt: Number(h['activeStartedAt']),
            },
      lastRunId: h['lastRunId'],
      lastOutcome:
        h['lastOutcome'] === 'completed' || h['lastOutcome'] === 'failed' ? h['lastOutcome'] : undefined,
      lastFinishedAt: num(h['lastFinishedAt']),
      lastError: h['lastError'],
      lastRescanAt: num(h['lastRescanAt']),
      completedRuns: num(h['completedRuns']) ?? 0,
      failedRuns: num(h['failedRuns']) ?? 0,
      skippedTicks: num(h['skippedTicks']) ?? 0,
    };
  };
  const store: TailStateStore = {
    async get(resource) {
      return parse(resource, await redis.hgetall(key(resource)));
    },
    async list() {
      // The six resources' keys, read at once: a SCAN for them walked the whole keyspace (every seen bucket, lock
      // and job) on each gauge refresh, ~3 s of Redis CPU in a medium full history (issue 51).
      const replies = (await redis.pipeline(RESOURCES.map((r) => ['hgetall', key(r)])).exec()) as
        [Error | null, Record<string, string>][] | null;
      const out: TailState[] = [];
      RESOURCES.forEach((resource, i) => {
        const [error, h] = replies?.[i] ?? [new Error('no reply'), {}];
        if (error !== null) throw error;
        if (Object.keys(h).length > 0) out.push(parse(resource, h));
      });
      return out.sort((a, b) => a.resource.localeCompare(b.resource));
    },
    async setActive(resource, run) {
      await redis.hset(key(resource), {
        activeRunId: run.runId,
        activeKind: run.kind,
        activeFrom: run.from === undefined ? '' : String(run.from),
        activeTo: String(run.to),
        activeStartedAt: String(run.startedAt),
      });
    },
    async finishActive(resource, run, outcome, at, error) {
      const current = await store.get(resource);
      const fields: Record<string, string> = {
        activeRunId: '',
        lastRunId: run.runId,
        lastOutcome: outcome,
        lastFinishedAt: String(at),
        // an error's text may quote a URL with credentials or an upstream's answer: masked before it is stored
        lastError: error === undefined ? '' : maskWith(error, secrets),
      };
      const tx = redis.multi();
      if (outcome === 'completed') {
        // A run never moves the watermark back (a cron backfill planned before a newer tail finished).
        if (current.watermark === undefined || run.to >= current.watermark) {
          fields['watermark'] = String(run.to);
          fields['watermarkAt'] = String(run.startedAt);
        }
        if (run.from === undefined) fields['lastRescanAt'] = String(run.startedAt);
        tx.hincrby(key(resource), 'completedRuns', 1);
      } else {
        tx.hincrby(key(resource), 'failedRuns', 1);
      }
      tx.hset(key(resource), fields);
      await tx.exec();
    },
    async countSkip(resource) {
      await redis.hincrby(key(resource), 'skippedTicks', 1);
    },
    lock: (resource, ttlMs) => takeRenewedLock(redis, `${key(resource)}:lock`, ttlMs),
    async reset(resource) {
      await redis.del(key(resource), `${key(resource)}:lock`);
    },
  };
  return store;
}
