/**
 * Pure comparison of what a topic holds with the upstream's truth, by `(_id, version)`: the version is
 * `updatedAt` for resources whose records change (normalised to epoch ms, since Avro carries timestamps as
 * millis) and nothing for immutable ones.
 */
import { recordVersion, type ResourceName } from '../../foundation/models/index.js';

/** `_id` or `_id@<version ms>`. */
export function versionKey(resource: ResourceName, record: Record<string, unknown>): string {
  const raw = record['_id'];
  const id = typeof raw === 'string' ? raw : typeof raw === 'number' ? String(raw) : '';
  const v = recordVersion(resource, record);
  if (v === '') return id;
  const ms = Date.parse(v);
  return `${id}@${Number.isNaN(ms) ? v : String(ms)}`;
}

export interface CompareReport {
  /** Distinct truth keys found on the topic. */
  matched: number;
  /** Truth keys not on the topic (excluding records expected in the DLQ). */
  missing: number;
  /** Topic keys the truth does not hold (e.g. an older version of a changed record). */
  unexpected: number;
  /** Extra copies: messages beyond the first of each key. */
  duplicates: number;
  /** Messages read. */
  consumed: number;
  /** Truth size (excluding records expected in the DLQ). */
  expected: number;
  missingSample: string[];
  unexpectedSample: string[];
  duplicateSample: string[];
}

/**
 * Compares topic keys with the truth.
 * @param excludedIds `_id`s the truth holds but that must not be on the topic (malformed: expected in the DLQ).
 */
export function compareRecords(
  topicKeys: Iterable<string>,
  truthKeys: Iterable<string>,
  excludedIds: ReadonlySet<string> = new Set(),
  sampleSize = 10,
): CompareReport {
  const counts = new Map<string, number>();
  let consumed = 0;
  for (const k of topicKeys) {
    consumed += 1;
    counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  return compareCounts(counts, consumed, truthKeys, excludedIds, sampleSize);
}

/**
 * {@link compareRecords} on the topic's keys already counted (key -> times read; `consumed` records in all): what a
 * reader that counts as it reads passes, so that it never holds the topic's keys in a list as well (10 M records at
 * scale large).
 */
export function compareCounts(
  counts: ReadonlyMap<string, number>,
  consumed: number,
  truthKeys: Iterable<string>,
  excludedIds: ReadonlySet<string> = new Set(),
  sampleSize = 10,
): CompareReport {
  const truth = new Set<string>();
  for (const k of truthKeys) {
    const id = k.includes('@') ? k.slice(0, k.indexOf('@')) : k;
    if (!excludedIds.has(id)) truth.add(k);
  }
  const r: CompareReport = {
    matched: 0,
    missing: 0,
    unexpected: 0,
    duplicates: 0,
    consumed,
    expected: truth.size,
    missingSample: [],
    unexpectedSample: [],
    duplicateSample: [],
  };
  for (const k of truth) {
    if (counts.has(k)) r.matched += 1;
    else {
      r.missing += 1;
      if (r.missingSample.length < sampleSize) r.missingSample.push(k);
    }
  }
  for (const [k, n] of counts) {
    if (!truth.has(k)) {
      r.unexpected += 1;
      if (r.unexpectedSample.length < sampleSize) r.unexpectedSample.push(k);
    }
    if (n > 1) {
      r.duplicates += n - 1;
      if (r.duplicateSample.length < sampleSize) r.duplicateSample.push(`${k} x${n}`);
    }
  }
  return r;
}
