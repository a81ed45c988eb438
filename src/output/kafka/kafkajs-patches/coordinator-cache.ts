/**
 * kafkajs 2.2.4 asks the cluster for the transaction coordinator (FindCoordinator) before EVERY transactional request:
 * each AddPartitionsToTxn and each EndTxn. With one partition per produce request (`transaction-requests.ts`) that was
 * a FindCoordinator per partition of every transaction: 1,340 of the ~5,000 Kafka requests of a full-history backfill
 * at scale small (strace of the worker). This keeps the coordinator's node id per kafkajs cluster and
 * transactional.id for `ttlMs` (the broker itself is still looked up each time, so a broker that went away is found
 * by kafkajs as before). A coordinator that moved is learnt again after `ttlMs`; kafkajs's transactional requests
 * retry NOT_COORDINATOR for longer than that (10 ms doubling, 15 times).
 */
import { patchKafkajsMethod } from './patch-kafkajs.js';

interface CoordinatorMetadata {
  coordinator: { nodeId: number };
}
export type FindMetadata = (
  this: object,
  args: { groupId: string; coordinatorType?: number },
) => Promise<CoordinatorMetadata>;

/** kafkajs' coordinator type of transactions (protocol/coordinatorTypes.js). */
const TRANSACTION = 1;

/** Installs the cache in this process's kafkajs (idempotent). Group coordinators are not cached. */
export function installTransactionCoordinatorCache(ttlMs = 1_000): void {
  patchKafkajsMethod<FindMetadata>(
    'kafkajs/src/cluster/index.js',
    'findGroupCoordinatorMetadata',
    'gamedata.transactionCoordinatorCache',
    'the transaction coordinator cache',
    (original) => cachingCoordinators(original, ttlMs),
  );
}

/**
 * `original` (kafkajs' findGroupCoordinatorMetadata) with transaction coordinators kept `ttlMs` per cluster and id.
 * @param now the clock (tests pass their own) @default Date.now
 */
export function cachingCoordinators(
  original: FindMetadata,
  ttlMs: number,
  now: () => number = Date.now,
): FindMetadata {
  const caches = new WeakMap<object, Map<string, { at: number; value: Promise<CoordinatorMetadata> }>>();
  const cached = function (
    this: object,
    args: { groupId: string; coordinatorType?: number },
  ): Promise<CoordinatorMetadata> {
    if (args.coordinatorType !== TRANSACTION) return original.call(this, args);
    let cache = caches.get(this);
    if (cache === undefined) {
      cache = new Map();
      caches.set(this, cache);
    }
    const at = now();
    const hit = cache.get(args.groupId);
    if (hit !== undefined && at - hit.at < ttlMs) return hit.value;
    const value = original.call(this, args);
    const entry = { at, value };
    cache.set(args.groupId, entry);
    // A failed look-up is not kept.
    value.catch(() => {
      if (cache.get(args.groupId) === entry) cache.delete(args.groupId);
    });
    return value;
  };
  return cached;
}
