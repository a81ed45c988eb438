/**
 * What a run's plan was estimated to cost the key when it started (issue 32: requests and serialised feed seconds are
 * the currency of production): `estimatePlanCost`'s totals, kept as JSON in the run's state hash (field `keyTime`)
 * by `startBackfill`, read by `status`.
 */
import type { PlanCost } from './plan-cost.js';

/** A run's plan estimate as its state hash keeps it. */
export interface RunKeyTime {
  requests: number;
  feedSeconds: number;
  minutesOnOneKey: number;
}

/** The state hash's field for a plan's estimate. */
export function keyTimeField(cost: PlanCost): { keyTime: string } {
  const t: RunKeyTime = {
    requests: cost.requests,
    feedSeconds: Math.round(cost.feedSeconds),
    minutesOnOneKey: Number(cost.minutesOnOneKey.toFixed(2)),
  };
  return { keyTime: JSON.stringify(t) };
}

/** The estimate a run's state holds, or undefined (none, or unreadable). */
export function parseKeyTime(state: Record<string, string>): RunKeyTime | undefined {
  const raw = state['keyTime'];
  if (raw === undefined) return undefined;
  try {
    const t = JSON.parse(raw) as Partial<RunKeyTime>;
    return [t.requests, t.feedSeconds, t.minutesOnOneKey].every((x) => typeof x === 'number' && x >= 0)
      ? (t as RunKeyTime)
      : undefined;
  } catch {
    return undefined;
  }
}
