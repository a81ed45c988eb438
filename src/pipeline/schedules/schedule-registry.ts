/**
 * Registers schedules as BullMQ job schedulers (persisted in Redis, so they survive every process): one per
 * resource and kind. A tail fires every N ms; a full backfill on a cron pattern. Any process running the schedule
 * worker (every `gamedata worker`) processes the ticks.
 */
import { Queue, type ConnectionOptions } from 'bullmq';
import { ConfigError } from '../../foundation/errors/index.js';
import type { ResourceName } from '../../foundation/models/index.js';
import { DEFAULT_QUEUE_PREFIX } from '../contract/queue-names.js';
import { checkTickData, type ScheduleTickData } from './process-tick.js';
import { SCHEDULE_QUEUE, schedulerId, type ScheduleKind } from './schedule-names.js';

export interface ScheduleRegistryOptions {
  connection: ConnectionOptions;
  /** BullMQ key prefix (`GAMEDATA_QUEUE_PREFIX`). @default 'gamedata-bull' */
  prefix?: string;
  /**
   * Finished tick jobs are kept at most `maxTicks` (per outcome) and `maxAgeMs` (`GAMEDATA_RETENTION_AGE`); set
   * when the schedule is registered. @default { maxAgeMs: 7 days, maxTicks: 50 }
   */
  retention?: { maxAgeMs?: number; maxTicks?: number };
}

/** A registered schedule, as `tail --list` and `status` show it. */
export interface ScheduleInfo {
  id: string;
  kind: ScheduleKind;
  resource: ResourceName;
  every?: number;
  pattern?: string;
  /** When the next tick is due (epoch ms). */
  next?: number;
  data?: ScheduleTickData;
}

export interface ScheduleRegistry {
  /** Creates or updates the tail of a resource (ticks every `everyMs`). */
  upsertTail(data: ScheduleTickData & { kind: 'tail' }, everyMs: number): Promise<ScheduleInfo>;
  /** Creates or updates the cron full backfill of a resource. */
  upsertBackfill(
    data: ScheduleTickData & { kind: 'backfill' },
    pattern: string,
    tz?: string,
  ): Promise<ScheduleInfo>;
  list(): Promise<ScheduleInfo[]>;
  /** Removes a schedule; resolves false when there was none. */
  remove(kind: ScheduleKind, resource: ResourceName): Promise<boolean>;
  close(): Promise<void>;
}

/** Default retention of finished tick jobs: a short history of ticks for debugging. */
export const DEFAULT_TICK_RETENTION = { maxAgeMs: 7 * 86_400_000, maxTicks: 50 } as const;

/** Tick job options: one attempt, finished ticks trimmed by count and age as BullMQ finishes them. */
export function tickJobOptions(retention: ScheduleRegistryOptions['retention'] = {}): {
  attempts: 1;
  removeOnComplete: { age: number; count: number };
  removeOnFail: { age: number; count: number };
} {
  const r = { ...DEFAULT_TICK_RETENTION, ...retention };
  const keep = { age: Math.max(1, Math.ceil(r.maxAgeMs / 1000)), count: r.maxTicks };
  return { attempts: 1, removeOnComplete: keep, removeOnFail: keep };
}

/** Minimum tail interval: BullMQ schedulers below a second only add Redis churn. */
export const MIN_TAIL_EVERY_MS = 1000;

export function createScheduleRegistry(options: ScheduleRegistryOptions): ScheduleRegistry {
  const queue = new Queue<ScheduleTickData>(SCHEDULE_QUEUE, {
    connection: options.connection,
    prefix: options.prefix ?? DEFAULT_QUEUE_PREFIX,
  });
  // Connection errors are the caller's client's to report (the CLI says them once per change of state).
  queue.on('error', () => undefined);
  const TICK_JOB_OPTS = tickJobOptions(options.retention);
  const toInfo = (s: {
    key: string;
    name: string;
    every?: number;
    pattern?: string;
    next?: number;
    template?: { data?: ScheduleTickData };
  }): ScheduleInfo | undefined => {
    const data = s.template?.data;
    const kind: ScheduleKind = s.name === 'backfill' ? 'backfill' : 'tail';
    const resource = data?.resource ?? (s.key.slice(kind.length + 1) as ResourceName);
    return {
      id: s.key,
      kind,
      resource,
      ...(s.every === undefined ? {} : { every: s.every }),
      ...(s.pattern === undefined ? {} : { pattern: s.pattern }),
      ...(s.next === undefined ? {} : { next: s.next }),
      ...(data === undefined ? {} : { data }),
    };
  };
  return {
    async upsertTail(data, everyMs) {
      checkTickData(data);
      if (!Number.isSafeInteger(everyMs) || everyMs < MIN_TAIL_EVERY_MS) {
        throw new ConfigError(`--every must be at least ${MIN_TAIL_EVERY_MS} ms, got ${String(everyMs)}`);
      }
      const id = schedulerId('tail', data.resource);
      // Each tick follows its run for up to one interval, so the watermark moves as soon as the run ends.
      data = { ...data, settleWithinMs: data.settleWithinMs ?? everyMs };
      // With `every`, BullMQ runs the first tick at once, then one per interval.
      await queue.upsertJobScheduler(id, { every: everyMs }, { name: 'tail', data, opts: TICK_JOB_OPTS });
      return { id, kind: 'tail', resource: data.resource, every: everyMs, data };
    },
    async upsertBackfill(data, pattern, tz) {
      checkTickData(data);
      if (pattern.trim().split(/\s+/).length < 5)
        throw new ConfigError(
          `--cron must be a cron pattern like "0 3 * * *", got ${JSON.stringify(pattern)}`,
        );
      const id = schedulerId('backfill', data.resource);
      await queue.upsertJobScheduler(
        id,
        { pattern, ...(tz === undefined ? {} : { tz }) },
        { name: 'backfill', data, opts: TICK_JOB_OPTS },
      );
      return { id, kind: 'backfill', resource: data.resource, pattern, data };
    },
    async list() {
      const all = await queue.getJobSchedulers(0, -1, true);
      return all
        .map((s) => toInfo(s as Parameters<typeof toInfo>[0]))
        .filter((s): s is ScheduleInfo => s !== undefined);
    },
    async remove(kind, resource) {
      const id = schedulerId(kind, resource);
      const removed = await queue.removeJobScheduler(id);
      // A tick already due (waiting) would still fire once: remove it too, so `--remove` means no more runs.
      const due = await queue.getJobs(['waiting', 'delayed', 'prioritized'], 0, -1);
      await Promise.all(
        due
          .filter((j) => j.id?.startsWith(`repeat:${id}:`) === true)
          .map((j) => j.remove().catch(() => undefined)),
      );
      return removed;
    },
    close: () => queue.close(),
  };
}
