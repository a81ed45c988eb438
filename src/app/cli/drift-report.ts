/**
 * `gamedata schemas drift`: each drifted path of the store with the catalogue change that would absorb it and the
 * registry's verdict on that change. The report is built here from injected parts (store, registry check), so it is
 * tested with fakes; the command wires the real ones.
 */
import type { DriftRecord, DriftStore } from '../../pipeline/drift/index.js';
import { formatDriftRecord, proposeAbsorption } from '../../pipeline/drift/index.js';
import type { ResourceName } from '../../foundation/models/index.js';
import type { OptionalFieldCheck, CandidateFieldKind } from '../../output/encoding/index.js';

export interface DriftReportEntry extends DriftRecord {
  resource: ResourceName;
  /** The catalogue change that would absorb it (`undefined`: none would, e.g. a type change). */
  absorb?: string;
  /** More than one non-null JSON type was seen. */
  mixedTypes?: boolean;
  /** The registry's verdict on that change (`undefined`: not asked, or the subject is not registered). */
  compatible?: boolean;
  subject?: string;
  /** The subject's latest version has the field already (the `evolve` contract registered it). */
  registered?: boolean;
  /** `type_changed`: the command that repairs the affected range once the catalogue (or upstream) is fixed. */
  replay?: string;
}

/**
 * `gamedata backfill <resource> --replay --since <oldest affected> --until <newest affected + 1 ms>`: the half-open
 * range of the records' sort times that held a value of the wrong type (dead-lettered), replayed once the catalogue
 * or upstream is fixed. `--replay` publishes them although they were seen (each once within the run).
 */
export function replayCommand(resource: ResourceName, r: DriftRecord): string | undefined {
  if (r.kind !== 'type_changed' || r.firstRecordMs === undefined || r.lastRecordMs === undefined)
    return undefined;
  const since = new Date(r.firstRecordMs).toISOString();
  const until = new Date(r.lastRecordMs + 1).toISOString();
  return `gamedata backfill ${resource} --replay --since ${since} --until ${until}`;
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
      const replay = replayCommand(d.resource, record);
      if (replay !== undefined) entry.replay = replay;
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
        if (check.registered === true) entry.registered = true;
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
      if (e.kind === 'type_changed') {
        lines.push(
          '  absorb: no compatible catalogue change (retyping a field breaks BACKWARD_TRANSITIVE); these records are dead-lettered with reason wrong-type',
        );
        lines.push(
          e.replay === undefined
            ? '  repair: once the catalogue or upstream is fixed, replay the affected range (`gamedata backfill <resource> --replay --since <time>`)'
            : `  repair: once the catalogue or upstream is fixed: ${e.replay}`,
        );
      } else if (e.kind === 'field_gone_quiet') {
        lines.push(
          "  absorb: nothing to register (the field stays in the schema and reads null); check upstream's changelog",
        );
      } else lines.push('  absorb: no proposal (only null values seen)');
      continue;
    }
    if (e.registered === true) {
      lines.push(`  absorbed: ${e.subject ?? 'the subject'} has it (registered by the evolve contract)`);
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
