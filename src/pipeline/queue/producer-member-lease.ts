/**
 * A process's member label for its pooled transactional producers (`output/kafka/transactions/producer-pool.ts`): the lowest free slot
 * `m<n>` under `<prefix>:eos:member:<n>`, leased in Redis (`SET NX PX`, renewed every third of `leaseMs`). A slot
 * freed by a dead process is taken again by the next one, so the transactional.ids a deployment leaves on the brokers
 * (`<topicPrefix>.tx.m<n>.<i>`) are bounded by the processes running at once x the pool size.
 *
 * A process that loses its slot (stalled past the lease) takes another one at its next renewal: its producers made
 * from then on carry the new label. Correctness never rests on the lease (a slice's owners are fenced by id whatever
 * process holds it); it only keeps two live processes from sharing ids, which would fence each other's producers.
 */
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { ServiceError } from '../../foundation/errors/index.js';

const RENEW = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
`;

export interface ProducerMemberLease {
  /** The label in force (`m<n>`). */
  current(): string;
  /** Stops renewing and frees the slot. */
  close(): Promise<void>;
}

export interface ProducerMemberLeaseOptions {
  /** Key prefix (the deployment's `GAMEDATA_REDIS_PREFIX`). @default 'gamedata' */
  prefix?: string;
  /** @default 30_000 */
  leaseMs?: number;
  /** Slots tried before giving up (a deployment larger than this is refused). @default 4096 */
  maxSlots?: number;
}

export async function leaseProducerMember(
  redis: Redis,
  options: ProducerMemberLeaseOptions = {},
): Promise<ProducerMemberLease> {
  const prefix = options.prefix ?? 'gamedata';
  const leaseMs = options.leaseMs ?? 30_000;
  const maxSlots = options.maxSlots ?? 4096;
  const token = randomBytes(8).toString('hex');
  const key = (n: number): string => `${prefix}:eos:member:${n}`;

  const take = async (): Promise<number> => {
    for (let n = 0; n < maxSlots; n++) {
      if ((await redis.set(key(n), token, 'PX', leaseMs, 'NX')) === 'OK') return n;
    }
    throw new ServiceError(
      `no free producer member slot among ${maxSlots} under ${prefix}:eos:member:`,
      'redis',
    );
  };
  let slot = await take();
  let closed = false;
  const timer = setInterval(
    () => {
      void (async () => {
        if (closed) return;
        const kept = (await redis.eval(RENEW, 1, key(slot), token, String(leaseMs))) as number;
        if (kept !== 1 && !closed) slot = await take();
      })().catch(() => undefined); // Redis away: the next tick tries again
    },
    Math.max(1, Math.floor(leaseMs / 3)),
  );
  timer.unref();
  return {
    current: () => `m${slot}`,
    async close() {
      closed = true;
      clearInterval(timer);
      await redis
        .eval(
          `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`,
          1,
          key(slot),
          token,
        )
        .catch(() => undefined);
    },
  };
}
