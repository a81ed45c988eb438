/**
 * `field_gone_quiet` (issue 35): a catalogued top-level field this process has seen upstream send, then missing (the
 * key absent, not null) from the next `afterRecords` records of the resource in a row. Optional fields are often
 * sparse (a transaction's `partyId` is on ~1 % of them), and some are never in listings at all (an article's
 * `comments`), so "absent from a page" says nothing; absent for a long run after having been sent does.
 *
 * Per process, in memory, at page granularity: a field present anywhere in a page ends its run; a page without it
 * adds its length. Once the run reaches `afterRecords`, the whole run is reported once and every further record
 * without the field is reported as it comes (so the metric keeps rising while the field stays away). Cost per page:
 * O(fields) for fields the first record carries, O(records) only for fields it lacks; nothing per record.
 */
import type { DriftTracker } from './drift-tracker.js';

export interface QuietFieldsOptions {
  /** Records in a row without a field seen before, before it counts as gone quiet. @default 1000 */
  afterRecords?: number;
}

export const DEFAULT_QUIET_FIELDS_OPTIONS = { afterRecords: 1000 } as const;

export interface QuietFields {
  /** Looks at one page of `resource` (records as upstream sent them) and tells `tracker` of fields gone quiet. */
  observe(
    resource: string,
    fields: readonly string[],
    records: readonly unknown[],
    tracker: DriftTracker,
  ): void;
}

interface FieldRun {
  /** Records in a row without the field since it was last present (undefined: never seen by this process). */
  absent: number | undefined;
  reported: boolean;
}

function carries(record: unknown, field: string): boolean {
  return (
    typeof record === 'object' && record !== null && (record as Record<string, unknown>)[field] !== undefined
  );
}

export function createQuietFields(options: QuietFieldsOptions = {}): QuietFields {
  const after = options.afterRecords ?? DEFAULT_QUIET_FIELDS_OPTIONS.afterRecords;
  const runs = new Map<string, Map<string, FieldRun>>();
  return {
    observe(resource, fields, records, tracker) {
      if (records.length === 0) return;
      let byField = runs.get(resource);
      if (byField === undefined) runs.set(resource, (byField = new Map<string, FieldRun>()));
      for (const field of fields) {
        let run = byField.get(field);
        if (run === undefined) byField.set(field, (run = { absent: undefined, reported: false }));
        let lastWith = -1;
        for (let i = records.length - 1; i >= 0; i--) {
          if (carries(records[i], field)) {
            lastWith = i;
            break;
          }
        }
        if (lastWith >= 0) {
          run.absent = records.length - 1 - lastWith;
          run.reported = false;
          continue;
        }
        if (run.absent === undefined) continue; // never seen: an unused or listing-less field, not a quiet one
        run.absent += records.length;
        if (run.absent < after) continue;
        tracker.goneQuiet(field, run.reported ? records.length : run.absent);
        run.reported = true;
      }
    },
  };
}
