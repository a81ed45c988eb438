/**
 * Records the upstream has fixed (issue 48, `gamedata dlq replay`): a record named here is served clean from then on,
 * whatever the `malformed` and `badItems` faults pick for it, and `malformed(resource)` no longer lists it. What a
 * test tells the simulator when it plays "upstream repaired that record" (`Simulator.fix`, `POST /__sim/fix`).
 */
import type { SimulatorResource } from './world.js';

export interface FixedRecords {
  /** Marks the records with these `_id`s as fixed; returns how many are fixed in all for the resource. */
  fix(resource: SimulatorResource, ids: readonly string[]): number;
  /** Whether the record with this `_id` was fixed. */
  has(resource: SimulatorResource, id: string): boolean;
  /** How many records of the resource were fixed (0: the serving path skips building the `_id` to look it up). */
  count(resource: SimulatorResource): number;
}

export function createFixedRecords(): FixedRecords {
  const fixed = new Map<SimulatorResource, Set<string>>();
  return {
    fix(resource, ids) {
      const set = fixed.get(resource) ?? new Set<string>();
      fixed.set(resource, set);
      for (const id of ids) set.add(id);
      return set.size;
    },
    has: (resource, id) => fixed.get(resource)?.has(id) ?? false,
    count: (resource) => fixed.get(resource)?.size ?? 0,
  };
}
