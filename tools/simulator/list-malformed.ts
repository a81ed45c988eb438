import { badItemKind, malformedKind, type MalformedKind } from './faults.js';
import type { FaultSettings } from './options.js';
import type { SimulatorResource, World } from './world.js';

/**
 * The records of `resource` served corrupted under `faults` (newest first), so tests can expect them in the DLQ; the
 * ones fixed since (`world.fixes`) are served clean and left out.
 */
export function listMalformed(
  world: World,
  resource: SimulatorResource,
  faults: Pick<FaultSettings, 'malformed' | 'seed'> & Partial<Pick<FaultSettings, 'badItems'>>,
): { _id: string; kind: MalformedKind }[] {
  const { malformed, seed } = faults;
  const badItems = faults.badItems ?? 0;
  const out: { _id: string; kind: MalformedKind }[] = [];
  if (malformed <= 0 && badItems <= 0) return out;
  const { table } = world.store(resource);
  for (let row = table.length - 1; row >= 0; row--) {
    // A bad item is served as no record at all, whatever `malformed` would have done to it.
    const kind =
      badItemKind(resource, table.ident(row), badItems, seed) ??
      malformedKind(resource, table.ident(row), malformed, seed);
    if (kind !== undefined && !world.fixes.has(resource, table.oid(row)))
      out.push({ _id: table.oid(row), kind });
  }
  return out;
}
