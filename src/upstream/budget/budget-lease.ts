/**
 * The fetcher lease: every third of `leaseMs` this process marks itself alive, and (once a transport is attached and
 * it takes part in the election) renews the lease it holds (`RENEW`) or tries to take it (`SET NX PX`); on winning it
 * calls `onWon` (adopt the persisted pacing, start the fetch loop). The holder also puts back batches taken by
 * processes that died (`RECOVER`). Any live participant takes over within about `leaseMs` of the holder's death.
 */
import type { Redis } from 'ioredis';
import type { BudgetKeys } from './budget-keys.js';
import type { ReportError } from './budget-errors.js';
import { RECOVER, RELEASE, RENEW } from './budget-scripts.js';

export interface BudgetLeaseOptions {
  redis: Redis;
  keys: BudgetKeys;
  /** This process's id (the lease's value). */
  id: string;
  leaseMs: number;
  tickMs: number;
  /** Whether this process may fetch now (a transport is attached and it takes part in the election). */
  canFetch: () => boolean;
  isClosed: () => boolean;
  /** Called on winning the lease, before the next tick. */
  onWon: () => Promise<void>;
  report: ReportError;
  /** The clock the lease's validity is read on (tests inject one). */
  now?: () => number;
}

export interface BudgetLease {
  /** Ticks now and every `tickMs`. */
  start(): void;
  /**
   * Whether this process leads now: it won or renewed the lease, and `leaseMs` from the moment it asked have not
   * passed. A tick delayed past the lease (a busy event loop) therefore stops leading by itself, before the next
   * tick finds another holder: two processes never both believe they fetch for the key.
   */
  isLeader(): boolean;
  /** Stops ticking and gives up leading (after the tick running); whether this process led. */
  resign(): Promise<boolean>;
  /** Releases the lease in Redis (when it is still ours). */
  release(): Promise<void>;
  /**
   * Stops leading now and releases the lease, but keeps ticking (alive, recovering nothing, taking the lease again
   * once `canFetch` says so): the fetcher reached no upstream (issue 48).
   */
  stepDown(): Promise<void>;
}

export function createBudgetLease(options: BudgetLeaseOptions): BudgetLease {
  const { redis, keys, id, leaseMs } = options;
  const now = options.now ?? Date.now;
  let leading = false;
  /** When the lease held lapses at the latest: `leaseMs` after the request that took or renewed it was sent. */
  let validUntil = 0;
  let timer: NodeJS.Timeout | undefined;
  let ticking: Promise<void> = Promise.resolve();

  /** Renews the lease held, else tries to take it; whether this process leads after. */
  async function hold(): Promise<boolean> {
    const asked = now();
    if (leading) {
      // Lapsed here (isLeader() went false and the fetch loop stopped) but still ours in Redis: leading again.
      const lapsed = asked >= validUntil;
      if (Number(await redis.eval(RENEW, 1, keys.leader, id, String(leaseMs))) === 1) {
        validUntil = asked + leaseMs;
        if (lapsed) await options.onWon();
        return true;
      }
      leading = false;
      return false;
    }
    if ((await redis.set(keys.leader, id, 'PX', leaseMs, 'NX')) !== 'OK') return false;
    leading = true;
    validUntil = asked + leaseMs;
    await options.onWon();
    return true;
  }

  async function tick(): Promise<void> {
    if (options.isClosed()) return;
    try {
      await redis.set(keys.alive(id), '1', 'PX', leaseMs * 2);
      if (!options.canFetch()) return;
      if (!(await hold())) return;
      await redis.eval(RECOVER, 5, ...keys.queues, keys.batches, keys.alivePrefix, id);
    } catch (error) {
      options.report(error, 'lease');
    }
  }

  return {
    start() {
      const run = (): void => {
        ticking = tick();
      };
      run();
      timer = setInterval(run, options.tickMs);
      timer.unref();
    },
    isLeader: () => leading && now() < validUntil,
    async resign() {
      if (timer) clearInterval(timer);
      await ticking;
      const was = leading;
      leading = false;
      return was;
    },
    async release() {
      await redis.eval(RELEASE, 1, keys.leader, id);
    },
    async stepDown() {
      if (!leading) return;
      leading = false;
      try {
        await redis.eval(RELEASE, 1, keys.leader, id);
      } catch (error) {
        options.report(error, 'lease');
      }
    },
  };
}
