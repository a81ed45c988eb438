/**
 * Worker liveness: a killed worker's slices go to the others within seconds, not after their locks expire.
 *
 * BullMQ frees a slice of a dead worker only when the slice's lock expires (`lockDuration`, 30 s by default: long,
 * so that a busy event loop never loses its locks) and a stalled check then finds it (`stalledInterval`). Here each
 * slice worker also beats every `beatMs` into one sorted set per queue (`<prefix>:<queue>:liveness`: the BullMQ
 * worker's id, scored with the time its beat runs out, Redis' clock), and every worker sweeps the queue's active
 * slices as often: a slice whose lock belongs to a worker whose last beat is more than `timeoutMs` old goes back to
 * wait at once, through BullMQ's own `moveToWait` with the dead worker's lock token (which fails harmlessly if that worker
 * renewed the lock in between). A BullMQ lock token is `<worker id>:<n>`, so the lock says whose the slice is.
 *
 * A worker sweeps only after a whole timeout of beats without a failure (at start, and after Redis was away: every
 * worker's beat may have run out meanwhile, and the others must beat again before anyone sweeps).
 *
 * What it does not change: a worker that never beat (another version, a tool) is never swept; a stalled worker woken
 * after its slices moved is the same zombie as after a lock expiry (exactly-once fences it, docs/guarantees.md). The
 * sweep counts each takeover as a stall (`stc`, what `maxStalledCount` limits): a slice that kills its workers
 * fails after that many, as before.
 */
import type { Job, Worker } from 'bullmq';
import { GamedataError } from '../../foundation/errors/index.js';

/** The Redis calls liveness needs (an ioredis client: BullMQ's own). */
export interface LivenessRedis {
  eval(script: string, numKeys: number, ...args: Array<string | number>): Promise<unknown>;
}

export interface WorkerLivenessOptions {
  /** The BullMQ key prefix and queue name (`<prefix>:<queue>:...`). */
  prefix: string;
  queue: string;
  /** A worker whose beat ran out this long ago is dead, ms. */
  timeoutMs: number;
  /** How often to beat and sweep, ms. @default timeoutMs / 4 */
  beatMs?: number;
  /** Takeovers of one slice after which the sweep leaves it to BullMQ (which fails it). */
  maxStalledCount: number;
  /** How long a dead worker's entry is kept (it may still hold locks), ms. */
  forgetAfterMs: number;
  /** Slices moved back to wait by this worker's sweep. */
  onTakeover?: (jobIds: readonly string[], deadWorkers: readonly string[]) => void;
  /**
   * Runs when a sweep found slices of dead workers, before they go back to wait (still locked by the dead worker, so
   * no new owner has them yet): exactly-once fences their owners here. Awaited at most one beat interval (the beats
   * go on); past that it goes on beside the moves. Its failure goes to `onError` and the slices move all the same.
   */
  beforeTakeover?: (jobIds: readonly string[]) => Promise<unknown>;
  onError?: (error: Error) => void;
}

export interface WorkerLiveness {
  /**
   * One beat and sweep now, without waiting a timeout after a failed beat (still none when this worker's own previous
   * beat had run out): the slices moved back to wait.
   */
  sweep(): Promise<string[]>;
  /** Stops beating and sweeping, and removes this worker's entry (call it once its slices are closed). */
  stop(): Promise<void>;
}

/**
 * One beat, and a sweep when asked, in one script (no gap between them: the sweeper's own entry is fresh while it
 * sweeps, and it never sweeps its own slices).
 * KEYS: liveness, active list. ARGV: worker id, timeout ms, forget ms, job key prefix (`<prefix>:<queue>:`), max
 * stalled count, sweep (1 / 0).
 * Returns {swept (1 / 0), jobId, token, ...}: the active jobs locked by another worker whose beat ran out, each counted
 * as a stall (a job past the count is left to BullMQ's stalled check). No sweep (0) when this worker's own beat had
 * run out before this one: it was stalled itself, or Redis was away or restarted (its entries are old), and the
 * others' beats may have run out for the same reason.
 */
const BEAT_AND_SWEEP = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local previous = redis.call('ZSCORE', KEYS[1], ARGV[1])
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[3]))
if ARGV[6] ~= '1' or not previous or tonumber(previous) < now then
  return {0}
end
local out = {1}
local ids = redis.call('LRANGE', KEYS[2], 0, -1)
for _, id in ipairs(ids) do
  local jobKey = ARGV[4] .. id
  local token = redis.call('GET', jobKey .. ':lock')
  if token then
    local owner = string.match(token, '^(.*):%d+$')
    if owner and owner ~= ARGV[1] then
      local expires = redis.call('ZSCORE', KEYS[1], owner)
      if expires and tonumber(expires) < now then
        local stalls = redis.call('HINCRBY', jobKey, 'stc', 1)
        if stalls <= tonumber(ARGV[5]) then
          table.insert(out, id)
          table.insert(out, token)
        end
      end
    end
  end
end
return out
`;

/**
 * Runs `hook` on the slices a sweep found (`{1, jobId, token, ...}`), awaited at most `ms` (past that it goes on
 * beside the moves); its failure goes to `onError`.
 */
async function beforeMoves(
  hook: (jobIds: readonly string[]) => Promise<unknown>,
  found: Array<string | number>,
  ms: number,
  onError: (error: Error) => void,
): Promise<void> {
  if (found.length < 3) return;
  const ids = found
    .slice(1)
    .filter((_, i) => i % 2 === 0)
    .map(String);
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    hook(ids).catch((error: unknown) => onError(error instanceof Error ? error : GamedataError.from(error))),
    new Promise<void>((resolve) => (timer = setTimeout(resolve, ms))),
  ]);
  clearTimeout(timer);
}

/**
 * Starts beating for `worker` and sweeping its queue. `redis` is a non-blocking client (a BullMQ queue's `client`);
 * `getJob` loads a job of the queue (for BullMQ's `moveToWait`).
 */
export function startWorkerLiveness(
  worker: Pick<Worker, 'id'>,
  redis: LivenessRedis,
  getJob: (id: string) => Promise<Pick<Job, 'moveToWait'> | undefined>,
  o: WorkerLivenessOptions,
): WorkerLiveness {
  const key = `${o.prefix}:${o.queue}:liveness`;
  const active = `${o.prefix}:${o.queue}:active`;
  const jobPrefix = `${o.prefix}:${o.queue}:`;
  const beatMs = o.beatMs ?? Math.max(100, Math.floor(o.timeoutMs / 4));
  const onError = o.onError ?? (() => undefined);
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  // This worker sweeps only after it has beaten without a failure for a whole timeout: after Redis was away (or at
  // start), every live worker's beat may have run out meanwhile, and a sweep before they beat again would move live
  // workers' slices. One timeout of beats is four beats of every live worker.
  let sweepFrom = Date.now() + o.timeoutMs;

  /** One beat (and a sweep when `sweep`): the slices moved back to wait, or undefined when no sweep was made. */
  const beatAndSweep = async (sweep: boolean): Promise<string[] | undefined> => {
    const found = (await redis.eval(
      BEAT_AND_SWEEP,
      2,
      key,
      active,
      worker.id,
      o.timeoutMs,
      o.forgetAfterMs,
      jobPrefix,
      o.maxStalledCount,
      sweep ? 1 : 0,
    )) as Array<string | number>;
    if (found[0] !== 1) return undefined;
    if (o.beforeTakeover !== undefined) await beforeMoves(o.beforeTakeover, found, beatMs, onError);
    const moved: string[] = [];
    const dead = new Set<string>();
    for (let i = 1; i + 1 < found.length; i += 2) {
      const id = String(found[i]);
      const token = String(found[i + 1]);
      const job = await getJob(id);
      if (job === undefined) continue;
      // Fails (the lock is not that token any more) when the owner renewed it or the job moved on: fine.
      const ok = await job.moveToWait(token).then(
        () => true,
        () => false,
      );
      if (!ok) continue;
      moved.push(id);
      dead.add(token.slice(0, token.lastIndexOf(':')));
    }
    if (moved.length > 0) o.onTakeover?.(moved, [...dead]);
    return moved;
  };

  const tick = (): void => {
    if (stopped) return;
    running = (async () => {
      try {
        const sweep = Date.now() >= sweepFrom;
        const moved = await beatAndSweep(sweep);
        // Our own beat had run out: wait a whole timeout of beats again before sweeping.
        if (sweep && moved === undefined) sweepFrom = Date.now() + o.timeoutMs;
      } catch (error) {
        sweepFrom = Date.now() + o.timeoutMs;
        onError(error instanceof Error ? error : GamedataError.from(error));
      }
    })().finally(() => {
      running = undefined;
      if (!stopped) timer = setTimeout(tick, beatMs);
    });
  };
  tick();

  return {
    async sweep() {
      return (await beatAndSweep(true)) ?? [];
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
      await redis
        .eval(`return redis.call('ZREM', KEYS[1], ARGV[1])`, 1, key, worker.id)
        .catch((error: unknown) => onError(error instanceof Error ? error : GamedataError.from(error)));
    },
  };
}
