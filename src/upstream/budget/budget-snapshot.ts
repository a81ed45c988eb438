/**
 * `readBudgetSnapshot(redis, keys)`: one API key's shared budget as Redis holds it, for `status`, `/metrics` and
 * `budget.snapshot()`. A light module (no client code), so `gamedata status` stays quick to start.
 */
import type { Redis } from 'ioredis';
import type { BudgetKeys } from './budget-keys.js';
import { CALL_PRIORITIES, type CallPriority } from './priority.js';

/** The budget of one key as Redis holds it. */
export interface BudgetSnapshot {
  /** Calls waiting, per priority. */
  waiting: Record<CallPriority, number>;
  /** Id of the process holding the fetcher lease, if any. */
  leader: string | null;
  /** Epoch ms of a 429 pause still running, else 0. */
  pauseUntil: number;
  /** The last `ratelimit-limit` / `-remaining` / reset (epoch ms) the fetcher saw. */
  limit: number | undefined;
  remaining: number | undefined;
  resetAt: number | undefined;
  /** Counters since the keys were created (every process of the deployment): HTTP requests, procedures (slots). */
  requests: number;
  slots: number;
  /** Calls carried (identical calls share a slot). */
  calls: number;
  /** Requests answered 429. */
  status429: number;
  /** Serialised feed work the requests carried, estimated when sent (ms; `models/call-cost.ts`). */
  serialMs: number;
  /** Request-equivalents per priority (each request split by its calls' priorities). */
  requestsByPriority: Record<CallPriority, number>;
}

/** Reads the snapshot in one round trip. `now` decides whether a recorded pause still runs. */
export async function readBudgetSnapshot(
  redis: Redis,
  keys: BudgetKeys,
  now: number = Date.now(),
): Promise<BudgetSnapshot> {
  const pipe = redis.pipeline();
  for (const q of keys.queues) pipe.llen(q);
  pipe.get(keys.leader).get(keys.pause).hgetall(keys.state).hgetall(keys.stats);
  const res = (await pipe.exec()) ?? [];
  const failed = res.find(([e]) => e !== null)?.[0];
  if (failed) throw failed;
  const value = (i: number): unknown => res[i]?.[1];
  const waiting = Object.fromEntries(CALL_PRIORITIES.map((p, i) => [p, Number(value(i) ?? 0)])) as Record<
    CallPriority,
    number
  >;
  const n = CALL_PRIORITIES.length;
  const state = (value(n + 2) ?? {}) as Record<string, string>;
  const stats = (value(n + 3) ?? {}) as Record<string, string>;
  const opt = (v: string | undefined): number | undefined => (v === undefined ? undefined : Number(v));
  const pauseUntil = Number(value(n + 1) ?? 0);
  return {
    waiting,
    leader: (value(n) as string | null) ?? null,
    pauseUntil: pauseUntil > now ? pauseUntil : 0,
    limit: opt(state['limit']),
    remaining: opt(state['remaining']),
    resetAt: opt(state['resetAt']),
    requests: Number(stats['requests'] ?? 0),
    slots: Number(stats['slots'] ?? 0),
    calls: Number(stats['calls'] ?? 0),
    status429: Number(stats['status429'] ?? 0),
    serialMs: Number(stats['serialMs'] ?? 0),
    requestsByPriority: Object.fromEntries(
      CALL_PRIORITIES.map((p) => [p, Number(stats[`requests:${p}`] ?? 0)]),
    ) as Record<CallPriority, number>,
  };
}

/** Procedures per request so far (0 before the first request). */
export function proceduresPerRequest(s: Pick<BudgetSnapshot, 'requests' | 'slots'>): number {
  return s.requests === 0 ? 0 : s.slots / s.requests;
}

/**
 * The budgets under a prefix (one per API key the deployment used): their key bases, found by their stats hash.
 * `status` uses it, so it needs no API key.
 */
export async function findBudgetBases(redis: Redis, prefix: string): Promise<string[]> {
  const bases = new Set<string>();
  let cursor = '0';
  do {
    const [next, found] = await redis.scan(cursor, 'MATCH', `${prefix}*:stats`, 'COUNT', 1000);
    cursor = next;
    for (const k of found) bases.add(k.slice(0, -':stats'.length));
  } while (cursor !== '0');
  return [...bases].sort();
}
