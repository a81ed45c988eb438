import { malformedKind, type MalformedKind } from './faults.js';
import type { FaultSettings } from './options.js';
import type { SimulatorResource, World } from './world.js';

/** The records of `resource` served corrupted under `faults` (newest first), so tests can expect them in the DLQ. */
export function listMalformed(
  world: World,
  resource: SimulatorResource,
  faults: Pick<FaultSettings, 'malformed' | 'seed'>,
): { _id: string; kind: MalformedKind }[] {
  const { malformed, seed } = faults;
  const out: { _id: string; kind: MalformedKind }[] = [];
  if (malformed <= 0) return out;
  const { table } = world.store(resource);
  for (let row = table.length - 1; row >= 0; row--) {
    const kind = malformedKind(resource, table.ident(row), malformed, seed);
    if (kind !== undefined) out.push({ _id: table.oid(row), kind });
  }
  return out;
}
