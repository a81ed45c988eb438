/**
 * A short Redis lock kept alive while its holder works: `SET NX PX ttlMs` with a token, renewed every third of
 * `ttlMs` while held (PEXPIRE only while the token is still ours), released by token. A holder killed with SIGKILL
 * strands the lock for at most `ttlMs`, not for the longest time a holder might need (the tail chaos run found a
 * killed tick's 120 s planning lock stopping its tail for 122-126 s). A renewal that finds the lock gone stops
 * renewing; the holder's work is guarded elsewhere (a run's id, the watermark's compare-and-set), so a lost lock
 * costs at most one tick planned twice, which the run ids dedupe.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';

const RELEASE =
  "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";
const RENEW =
  "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end";

/** Takes `lockKey` for `ttlMs`, renewed while held; resolves to its release, or undefined when another holds it. */
export async function takeRenewedLock(
  redis: Redis,
  lockKey: string,
  ttlMs: number,
): Promise<(() => Promise<void>) | undefined> {
  const token = randomUUID();
  if ((await redis.set(lockKey, token, 'PX', ttlMs, 'NX')) !== 'OK') return undefined;
  let held = true;
  const timer = setInterval(
    () => {
      redis.eval(RENEW, 1, lockKey, token, String(ttlMs)).then(
        (renewed) => {
          if (Number(renewed) !== 1) {
            held = false;
            clearInterval(timer);
          }
        },
        // Redis away for a moment: the next renewal tries again; past ttlMs the lock lapses, as it would for a
        // dead holder.
        () => undefined,
      );
    },
    Math.max(1, Math.floor(ttlMs / 3)),
  );
  timer.unref();
  return async () => {
    clearInterval(timer);
    if (held) await redis.eval(RELEASE, 1, lockKey, token);
  };
}
