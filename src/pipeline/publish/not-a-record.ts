/**
 * An item of a page that is not a record at all (issue 48): `null`, a string, a number or an array where the page
 * promises objects. It passed the envelope check and used to fail its slice with a TypeError on `record._id`, eight
 * attempts in a row, and a tail over its range failed on every tick. The slice source wraps each one, where the page
 * is read, with its position (the cursor the page was read at and its index among the page's items); the wrapper is an
 * object without `_id`, which dedup passes (and exactly-once claims under a digest of it, so a retried page
 * dead-letters it once), and the page encoder dead-letters it with reason `not-a-record` and the position headers.
 */

/** The reason header of such a dead letter. */
export const NOT_A_RECORD = 'not-a-record';

/** A page item that is not an object, with where it was. */
export class NotARecord {
  constructor(
    /** The item as upstream sent it (the dead letter's value). */
    readonly value: unknown,
    /** The cursor the page was read at ('' for the slice's first page, read from its end bound). */
    readonly pageCursor: string,
    /** Its index among the page's items in the slice. */
    readonly pageIndex: number,
  ) {}
}

/** Whether a page item is a record (a plain JSON object). */
export function isRecord(item: unknown): item is Record<string, unknown> {
  return typeof item === 'object' && item !== null && !Array.isArray(item);
}

/** The page's items with each one that is not a record wrapped in a {@link NotARecord} (records as they are). */
export function wrapNotARecords<T>(items: readonly unknown[], pageCursor: string): (T | NotARecord)[] {
  return items.map((item, index) => (isRecord(item) ? (item as T) : new NotARecord(item, pageCursor, index)));
}
