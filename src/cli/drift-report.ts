/**
 * `gamedata schemas drift`: each drifted path of the store with the catalogue change that would absorb it and the
 * registry's verdict on that change. The report is built here from injected parts (store, registry check), so it is
 * tested with fakes; the command wires the real ones.
 */
import type { DriftRecord, DriftStore } from '../drift/index.js';
import { formatDriftRecord, proposeAbsorption } from '../drift/index.js';
import type { ResourceName } from '../models/resources.js';
import type { OptionalFieldCheck, CandidateFieldKind } from '../encoding/index.js';

export interface DriftReportEntry extends DriftRecord {
  resource: ResourceName;
  /** The catalogue change that would absorb it (`undefined`: none would, e.g. a type change). */
  absorb?: string;
  /** More than one non-null JSON type was seen. */
  mixedTypes?: boolean;
  /** The registry's verdict on that change (`undefined`: not asked, or the subject is not registered). */
  compatible?: boolean;
  subject?: string;
}

export type OptionalFieldTester = (o: {
  resource: ResourceName;
  parentPath: string;
  name: string;
  kind: CandidateFieldKind;
}) => Promise<OptionalFieldCheck>;

/** Reads the drift of `resource` (or all) and asks `test` about each absorbable path. */
export async function buildDriftReport(
  store: DriftStore,
  test: OptionalFieldTester,
  resource?: ResourceName,
): Promise<DriftReportEntry[]> {
  const out: DriftReportEntry[] = [];
  for (const d of await store.read(resource)) {
    for (const record of d.records) {
      const entry: DriftReportEntry = { ...record, resource: d.resource };
      const proposal = proposeAbsorption(d.resource, record);
      if (proposal !== undefined) {
        entry.absorb = proposal.text;
        entry.mixedTypes = proposal.mixedTypes;
        const check = await test({
          resource: d.resource,
          parentPath: proposal.parentPath,
          name: proposal.field,
          kind: proposal.kind,
        });
        entry.subject = check.subject;
        if (check.compatible !== undefined) entry.compatible = check.compatible;
      }
      out.push(entry);
    }
  }
  return out;
}

/** The plain-text report: one block per path. */
export function formatDriftReport(entries: readonly DriftReportEntry[]): string {
  if (entries.length === 0) return 'no schema drift recorded';
  const lines: string[] = [];
  for (const e of entries) {
    lines.push(`${e.resource}: ${formatDriftRecord(e)}`);
    if (e.absorb === undefined) {
      lines.push(
        e.kind === 'type_changed'
          ? '  absorb: no compatible catalogue change (retyping a field breaks BACKWARD_TRANSITIVE); these records are dead-lettered with reason wrong-type'
          : '  absorb: no proposal (only null values seen)',
      );
      continue;
    }
    const verdict =
      e.compatible === undefined
        ? `${e.subject ?? 'the subject'} is not registered: nothing to check`
        : e.compatible
          ? `the registry (${e.subject ?? '?'}) would accept it`
          : `the registry (${e.subject ?? '?'}) would REJECT it`;
    lines.push(
      `  absorb: ${e.absorb}${e.mixedTypes === true ? ' (several types seen: check upstream first)' : ''}; ${verdict}`,
    );
  }
  return lines.join('\n');
}
