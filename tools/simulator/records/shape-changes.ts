/**
 * Upstream shape changes at a point in time (issue 35's drift switch): from a sort time on, a resource's records
 * carry a field the catalogue does not know, or serve a known field with another JSON type, as a beta API's
 * records do after a deploy. Applied on top of a record builder, so `truth()` and every read agree.
 */
import type { ApiRecord, RecordBuilder } from './record-variant.js';

/** One change of a resource's records whose sort time is at or after `from`. */
export interface ShapeChange {
  /** ISO date-time: records sorted at or after it change; older ones keep their shape. */
  from: string;
  /** A new field: its name; each record gets a string derived from its `_id` (stable across reads). */
  addField?: string;
  /** An existing field served as a string from then on (e.g. `money` as `"12.50"`): its name. */
  retypeField?: string;
}

/** `build` with the changes applied to rows whose `time(row)` is at or after each change's `from`. */
export function withShapeChanges(
  build: RecordBuilder,
  time: (row: number) => number,
  changes: readonly ShapeChange[],
): RecordBuilder {
  if (changes.length === 0) return build;
  const resolved = changes.map((c) => ({ ...c, fromMs: Date.parse(c.from) }));
  return (row, variant) => {
    const rec: ApiRecord = build(row, variant);
    const t = time(row);
    for (const c of resolved) {
      if (t < c.fromMs) continue;
      if (c.addField !== undefined) rec[c.addField] = `x-${String(rec['_id']).slice(-6)}`;
      if (c.retypeField !== undefined && rec[c.retypeField] !== undefined && rec[c.retypeField] !== null)
        rec[c.retypeField] = String(rec[c.retypeField]);
    }
    return rec;
  };
}
