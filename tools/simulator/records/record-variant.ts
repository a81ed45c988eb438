/** The shapes a record is served in, and the small helpers every record builder shares. */

/** `full`: a single read; `lite`: the lite read; `feed`: the article feed (lite + content); `thin`: `_id` + `createdAt`. */
export type RecordVariant = 'full' | 'lite' | 'feed' | 'thin';

/** A record as the API returns it (plain JSON). */
export type ApiRecord = Record<string, unknown>;

/** Builds one row of a resource as the API returns it. */
export type RecordBuilder = (row: number, variant?: RecordVariant) => ApiRecord;

/** The fields of `rec` named in `keys`, in that order (a fresh object). */
export function pickFields(rec: ApiRecord, keys: readonly string[]): ApiRecord {
  const out: ApiRecord = {};
  for (const key of keys) if (key in rec) out[key] = rec[key];
  return out;
}
