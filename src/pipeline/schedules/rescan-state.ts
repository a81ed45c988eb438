/**
 * Where a resource's spread rescan stands (Redis hash `<prefix>:tail:<resource>:rescan`): the pass in progress
 * (its top, its start, the budget counters when it started), the next part's upper bound, and the part running.
 */
import type { Redis } from 'ioredis';
import { takeRenewedLock } from './renewed-lock.js';
import type { ResourceName } from '../../foundation/models/index.js';

export interface RescanState {
  /** Upper bound (sort time, epoch ms) of the next part; undefined = a new pass starts at the watermark. */
  cursor: number | undefined;
  /** The pass's top (the watermark when it started): parts are `(top - floor) / parts` wide. */
  passTop: number | undefined;
  passStartedAt: number | undefined;
  /** The key's budget counters when the pass started: request-equivalents spent in all, and on rescans. */
  passRequests: number | undefined;
  passRescanRequests: number | undefined;
  /** The part running: its run id and range. */
  runId: string | undefined;
  from: number | undefined;
  to: number | undefined;
  /** Local clock of the last completed pass. */
  lastPassAt: number | undefined;
  completedParts: number;
  cappedTicks: number;
}

export interface RescanStateStore {
  get(resource: ResourceName): Promise<RescanState>;
  /** Sets fields; `undefined` clears one. */
  set(
    resource: ResourceName,
    fields: Partial<Record<keyof RescanState, number | string | undefined>>,
  ): Promise<void>;
  incr(resource: ResourceName, field: 'completedParts' | 'cappedTicks'): Promise<void>;
  lock(resource: ResourceName, ttlMs: number): Promise<(() => Promise<void>) | undefined>;
}

const num = (v: string | undefined): number | undefined =>
  v === undefined || v === '' ? undefined : Number(v);

export function createRescanStateStore(redis: Redis, prefix = 'gamedata'): RescanStateStore {
  const key = (r: ResourceName): string => `${prefix}:tail:${r}:rescan`;
  return {
    async get(resource) {
      const h = await redis.hgetall(key(resource));
      const runId = h['runId'];
      return {
        cursor: num(h['cursor']),
        passTop: num(h['passTop']),
        passStartedAt: num(h['passStartedAt']),
        passRequests: num(h['passRequests']),
        passRescanRequests: num(h['passRescanRequests']),
        runId: runId === undefined || runId === '' ? undefined : runId,
        from: num(h['from']),
        to: num(h['to']),
        lastPassAt: num(h['lastPassAt']),
        completedParts: num(h['completedParts']) ?? 0,
        cappedTicks: num(h['cappedTicks']) ?? 0,
      };
    },
    async set(resource, fields) {
      const values: Record<string, string> = {};
      for (const [k, v] of Object.entries(fields)) values[k] = v === undefined ? '' : String(v);
      if (Object.keys(values).length > 0) await redis.hset(key(resource), values);
    },
    async incr(resource, field) {
      await redis.hincrby(key(resource), field, 1);
    },
    lock: (resource, ttlMs) => takeRenewedLock(redis, `${key(resource)}:lock`, ttlMs),
  };
}
