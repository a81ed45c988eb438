/**
 * What the fetcher saw at its last batch ({@link BudgetDemand}), published to Redis for the workers' slots
 * (`decideConcurrency`); it expires `demandTtlMs` after the last batch, so idle workers go back to their configured
 * concurrency. `keep` extends it while the fetcher waits for a reset (at most every quarter of the TTL).
 */
import type { Redis } from 'ioredis';
import type { BudgetKeys } from './budget-keys.js';
import type { ReportError } from './budget-errors.js';
import { encodeBudgetDemand, type BudgetDemand } from './concurrency-decision.js';

export interface DemandPublisher {
  /** Writes `demand` (fire and forget). */
  publish(demand: BudgetDemand): void;
  /** Extends the demand last written, unless that was within a quarter of its TTL. */
  keep(): void;
  /** When the demand was last written or extended (0: never). */
  keptAt(): number;
}

export function createDemandPublisher(
  redis: Redis,
  keys: BudgetKeys,
  demandTtlMs: number,
  now: () => number,
  report: ReportError,
): DemandPublisher {
  let keptAt = 0;
  return {
    publish(demand) {
      keptAt = now();
      redis
        .set(keys.demand, encodeBudgetDemand(demand), 'PX', demandTtlMs)
        .catch((e: unknown) => report(e, 'publishing the demand'));
    },
    keep() {
      if (now() - keptAt < demandTtlMs / 4) return;
      keptAt = now();
      redis.pexpire(keys.demand, demandTtlMs).catch((e: unknown) => report(e, 'keeping the demand'));
    },
    keptAt: () => keptAt,
  };
}
