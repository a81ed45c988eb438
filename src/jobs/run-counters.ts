/**
 * Per-run counters in Redis (`<prefix>:run:<runId>:counters`, a hash): fetched, published, deduplicated and
 * dead-lettered, in total and per resource (`<resource>.<counter>`), for `status` and the demo summary.
 */
import type { Redis } from 'ioredis';
import type { ResourceName } from '../models/resources.js';
import type { RunCounterValues } from '../planner/job-types.js';

const FIELDS = ['fetched', 'published', 'deduplicated', 'deadLettered'] as const;

export interface RunCounters {
  add(runId: string, delta: Partial<RunCounterValues>, resource?: ResourceName): Promise<void>;
  get(
    runId: string,
  ): Promise<RunCounterValues & { byResource: Partial<Record<ResourceName, RunCounterValues>> }>;
  /** Records a run's state (`running`, `completed`, `failed`) and when it changed. */
  setState(runId: string, state: string, extra?: Record<string, string | number>): Promise<void>;
  getState(runId: string): Promise<Record<string, string>>;
  /** Every run with a recorded state, newest first (by the state's `at`), for `status`. */
  listRuns(): Promise<{ runId: string; state: Record<string, string> }[]>;
}

export function emptyCounters(): RunCounterValues {
  return { fetched: 0, published: 0, deduplicated: 0, deadLettered: 0 };
}

/** Creates the Redis-backed run counters. @param prefix key prefix, default `gamedata`. */
export function createRunCounters(redis: Redis, prefix = 'gamedata'): RunCounters {
  const key = (runId: string): string => `${prefix}:run:${runId}:counters`;
  const stateKey = (runId: string): string => `${prefix}:run:${runId}:state`;
  return {
    async add(runId, delta, resource) {
      const tx = redis.multi();
      for (const f of FIELDS) {
        const v = delta[f] ?? 0;
        if (v === 0) continue;
        tx.hincrby(key(runId), f, v);
        if (resource !== undefined) tx.hincrby(key(runId), `${resource}.${f}`, v);
      }
      await tx.exec();
    },
    async get(runId) {
      const h = await redis.hgetall(key(runId));
      const total = emptyCounters();
      const byResource: Partial<Record<ResourceName, RunCounterValues>> = {};
      for (const [k, v] of Object.entries(h)) {
        const n = Number(v);
        const dot = k.indexOf('.');
        if (dot === -1) {
          if ((FIELDS as readonly string[]).includes(k)) total[k as keyof RunCounterValues] = n;
          continue;
        }
        const r = k.slice(0, dot) as ResourceName;
        const f = k.slice(dot + 1) as keyof RunCounterValues;
        const c = byResource[r] ?? emptyCounters();
        c[f] = n;
        byResource[r] = c;
      }
      return { ...total, byResource };
    },
    async setState(runId, state, extra = {}) {
      await redis.hset(stateKey(runId), { state, at: Date.now(), ...extra });
    },
    async getState(runId) {
      return redis.hgetall(stateKey(runId));
    },
    async listRuns() {
      const head = `${prefix}:run:`;
      const runs: { runId: string; state: Record<string, string> }[] = [];
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${head}*:state`, 'COUNT', 500);
        cursor = next;
        for (const k of keys) {
          const runId = k.slice(head.length, -':state'.length);
          runs.push({ runId, state: await redis.hgetall(k) });
        }
      } while (cursor !== '0');
      return runs.sort((a, b) => Number(b.state['at'] ?? 0) - Number(a.state['at'] ?? 0));
    },
  };
}
