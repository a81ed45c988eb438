/**
 * Per-run counters in Redis (`<prefix>:run:<runId>:counters`, a hash): fetched, published, deduplicated and
 * dead-lettered, in total and per resource (`<resource>.<counter>`), for `status` and the demo summary.
 *
 * Retention: every run is indexed in `<prefix>:runs:index` (a sorted set, score = when its state last changed),
 * and rolled up as it goes into `<prefix>:runs:totals` (every counter of every run ever, same fields as a run's
 * hash) and `<prefix>:runs:states` (how many runs are in each state). When a run finishes, finished runs older than
 * `maxAgeMs` or beyond the newest `maxRuns` lose their keys (`<prefix>:run:<id>:*`); the rollups keep their
 * figures, so `status` reads a handful of keys however long the pipeline has run.
 */
import type { Redis } from 'ioredis';
import { scriptRunner } from '../dedup/index.js';
import type { ResourceName } from '../../foundation/models/index.js';
import type { RunCounterValues } from '../contract/job-types.js';

const FIELDS = ['fetched', 'published', 'deduplicated', 'deadLettered'] as const;

/** How long finished runs (their state, counters and BullMQ jobs) are kept. */
export interface RunRetention {
  /** Finished runs older than this are trimmed (`GAMEDATA_RETENTION_AGE`). @default 604800000 (7 days) */
  maxAgeMs: number;
  /**
   * At most this many runs are kept, newest first; older finished ones are trimmed (`GAMEDATA_RETENTION_RUNS`).
   * Also the count of completed and of failed jobs BullMQ keeps per queue. @default 20000
   */
  maxRuns: number;
}

export const DEFAULT_RUN_RETENTION: RunRetention = { maxAgeMs: 7 * 24 * 3600_000, maxRuns: 20_000 };

/** Runs trimmed per finished run at most (the rest go with the next ones), so one trim stays short. */
const TRIM_BATCH = 200;

/** A run's figures: totals and per resource. */
export type RunFigures = RunCounterValues & { byResource: Partial<Record<ResourceName, RunCounterValues>> };

export interface RunCounters {
  /** The retention this deployment applies (also to the BullMQ jobs of the runs it enqueues). */
  readonly retention: RunRetention;
  add(runId: string, delta: Partial<RunCounterValues>, resource?: ResourceName): Promise<void>;
  /**
   * Counts a slice's CUMULATIVE figures: adds only what exceeds what was counted for this slice before (kept per run
   * in `<prefix>:run:<id>:slices`), in one script, so a retry after a crash between counting and saving the job data
   * does not count twice. Resolves to the difference it added.
   */
  addThrough(
    runId: string,
    sliceId: string,
    cumulative: RunCounterValues,
    resource?: ResourceName,
  ): Promise<RunCounterValues>;
  get(runId: string): Promise<RunFigures>;
  /**
   * Records a run's state (`running`, `completed`, `failed`) and when it changed. A finished state also trims
   * the runs past retention.
   */
  setState(runId: string, state: string, extra?: Record<string, string | number>): Promise<void>;
  getState(runId: string): Promise<Record<string, string>>;
  /** The newest `limit` runs (by their state's `at`), newest first. @param limit default: every kept run */
  listRuns(limit?: number): Promise<{ runId: string; state: Record<string, string> }[]>;
  /** Every counter of every run ever recorded, trimmed ones included (the rollup). */
  totals(): Promise<RunFigures>;
  /** How many runs ever recorded are in each state (`running`, `completed`, `failed`), trimmed ones included. */
  stateCounts(): Promise<Record<string, number>>;
  /** Runs still kept (not yet trimmed). */
  keptRuns(): Promise<number>;
  /** Trims finished runs past retention now; resolves to how many were removed. */
  trim(now?: number): Promise<number>;
}

export function emptyCounters(): RunCounterValues {
  return { fetched: 0, published: 0, deduplicated: 0, deadLettered: 0 };
}

/** Parses a counters hash (a run's or the rollup) into totals and per-resource figures. */
function parseFigures(h: Record<string, string>): RunFigures {
  const total = emptyCounters();
  const byResource: Partial<Record<ResourceName, RunCounterValues>> = {};
  for (const [k, v] of Object.entries(h)) {
    const n = Number(v);
    const dot = k.indexOf('.');
    if (dot === -1) {
      if ((FIELDS as readonly string[]).includes(k)) total[k as keyof RunCounterValues] = n;
      continue;
    }
    const f = k.slice(dot + 1);
    if (!(FIELDS as readonly string[]).includes(f)) continue;
    const r = k.slice(0, dot) as ResourceName;
    const c = byResource[r] ?? emptyCounters();
    c[f as keyof RunCounterValues] = n;
    byResource[r] = c;
  }
  return { ...total, byResource };
}

// KEYS: state hash, index, states rollup. ARGV: runId, state, at, then field/value pairs.
const SET_STATE = `
local old = redis.call('HGET', KEYS[1], 'state')
redis.call('HSET', KEYS[1], 'state', ARGV[2], 'at', ARGV[3], unpack(ARGV, 4))
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
if old ~= ARGV[2] then
  redis.call('HINCRBY', KEYS[3], ARGV[2], 1)
  if old then redis.call('HINCRBY', KEYS[3], old, -1) end
end
return 1`;

// KEYS: run counters, totals rollup, the run's per-slice counted figures. ARGV: sliceId, resource ('' = none), then
// the slice's cumulative fetched, published, deduplicated, deadLettered. Returns the four differences added.
const ADD_THROUGH = `
local prev = {0, 0, 0, 0}
local old = redis.call('HGET', KEYS[3], ARGV[1])
if old then
  local i = 1
  for n in string.gmatch(old, '[^,]+') do prev[i] = tonumber(n); i = i + 1 end
end
local fields = {'fetched', 'published', 'deduplicated', 'deadLettered'}
local kept, added = {}, {}
for i = 1, 4 do
  local v = tonumber(ARGV[2 + i])
  local d = v - prev[i]
  if d < 0 then d = 0; v = prev[i] end
  kept[i] = v; added[i] = d
  if d > 0 then
    for _, k in ipairs({KEYS[1], KEYS[2]}) do
      redis.call('HINCRBY', k, fields[i], d)
      if ARGV[2] ~= '' then redis.call('HINCRBY', k, ARGV[2] .. '.' .. fields[i], d) end
    end
  end
end
redis.call('HSET', KEYS[3], ARGV[1], table.concat(kept, ','))
return added`;

// KEYS: index. ARGV: "<prefix>:run:", cutoff (ms), maxRuns, batch. Finished (or stateless) runs only: a running
// run is never trimmed. Returns how many runs were removed.
const TRIM = `
local head, cutoff, maxRuns, batch = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local removed = 0
local function drop(id)
  local st = redis.call('HGET', head .. id .. ':state', 'state')
  if st == 'running' then return end
  redis.call('DEL', head .. id .. ':state', head .. id .. ':counters', head .. id .. ':users', head .. id .. ':slices')
  redis.call('ZREM', KEYS[1], id)
  removed = removed + 1
end
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. cutoff, 'LIMIT', 0, batch)) do drop(id) end
local excess = redis.call('ZCARD', KEYS[1]) - maxRuns
if excess > 0 then
  for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, math.min(excess, batch) - 1)) do drop(id) end
end
return removed`;

export interface RunCountersOptions {
  /** @default DEFAULT_RUN_RETENTION */
  retention?: Partial<RunRetention>;
  now?: () => number;
}

/** Creates the Redis-backed run counters. @param prefix key prefix, default `gamedata`. */
export function createRunCounters(
  redis: Redis,
  prefix = 'gamedata',
  options: RunCountersOptions = {},
): RunCounters {
  const retention: RunRetention = { ...DEFAULT_RUN_RETENTION, ...options.retention };
  const now = options.now ?? Date.now;
  const head = `${prefix}:run:`;
  const key = (runId: string): string => `${head}${runId}:counters`;
  const stateKey = (runId: string): string => `${head}${runId}:state`;
  const indexKey = `${prefix}:runs:index`;
  const totalsKey = `${prefix}:runs:totals`;
  const statesKey = `${prefix}:runs:states`;
  const addThroughScript = scriptRunner(redis, ADD_THROUGH);
  const trim = async (at: number): Promise<number> =>
    Number(await redis.eval(TRIM, 1, indexKey, head, at - retention.maxAgeMs, retention.maxRuns, TRIM_BATCH));
  return {
    retention,
    async add(runId, delta, resource) {
      const tx = redis.multi();
      for (const f of FIELDS) {
        const v = delta[f] ?? 0;
        if (v === 0) continue;
        for (const k of [key(runId), totalsKey]) {
          tx.hincrby(k, f, v);
          if (resource !== undefined) tx.hincrby(k, `${resource}.${f}`, v);
        }
      }
      await tx.exec();
    },
    async addThrough(runId, sliceId, cumulative, resource) {
      const added = (await addThroughScript(3, [
        key(runId),
        totalsKey,
        `${head}${runId}:slices`,
        sliceId,
        resource ?? '',
        ...FIELDS.map((f) => String(cumulative[f])),
      ])) as number[];
      return {
        fetched: Number(added[0] ?? 0),
        published: Number(added[1] ?? 0),
        deduplicated: Number(added[2] ?? 0),
        deadLettered: Number(added[3] ?? 0),
      };
    },
    async get(runId) {
      return parseFigures(await redis.hgetall(key(runId)));
    },
    async setState(runId, state, extra = {}) {
      const at = now();
      const pairs = Object.entries(extra).flatMap(([k, v]) => [k, String(v)]);
      await redis.eval(SET_STATE, 3, stateKey(runId), indexKey, statesKey, runId, state, at, ...pairs);
      if (state !== 'running') await trim(at);
    },
    async getState(runId) {
      return redis.hgetall(stateKey(runId));
    },
    async listRuns(limit) {
      const ids = await redis.zrevrange(indexKey, 0, limit === undefined ? -1 : Math.max(0, limit - 1));
      const states = await Promise.all(ids.map((id) => redis.hgetall(stateKey(id))));
      return ids.map((runId, i) => ({ runId, state: states[i] ?? {} }));
    },
    async totals() {
      return parseFigures(await redis.hgetall(totalsKey));
    },
    async stateCounts() {
      const h = await redis.hgetall(statesKey);
      return Object.fromEntries(Object.entries(h).map(([k, v]) => [k, Number(v)]));
    },
    keptRuns: () => redis.zcard(indexKey),
    trim: (at = now()) => trim(at),
  };
}
