/**
 * Dead-letter messages: a record that cannot be encoded goes to `<topic>.dlq` with its original JSON as the value,
 * `_id` (when it has one) as the key, and why in headers. Nothing is silently dropped.
 */
import { EncodingError, GamedataError } from '../../foundation/errors/index.js';
import { maskWith, ownSecrets, type Secrets } from '../../foundation/config/index.js';

/** Where a page of records came from; the same values go in the lineage headers of published records. */
export interface Lineage {
  /** The run (backfill or tail) that fetched the records. */
  runId: string;
  /** The slice of the run. */
  sliceId: string;
  /** The upstream procedure the records came from, e.g. `transaction.getPaginatedTransactions`. */
  sourceOperation: string;
  /** When the page was fetched (ISO-8601 string or epoch ms). */
  fetchedAt: string | number | Date;
}

/** Header names, shared by published records (lineage) and dead letters (lineage + error). */
export const HEADER = {
  runId: 'gamedata.run.id',
  sliceId: 'gamedata.slice.id',
  sourceOperation: 'gamedata.source.operation',
  fetchedAt: 'gamedata.fetched.at',
  errorClass: 'gamedata.error.class',
  errorReason: 'gamedata.error.reason',
  errorMessage: 'gamedata.error.message',
  errorPath: 'gamedata.error.path',
  resource: 'gamedata.resource',
  truncated: 'gamedata.dlq.truncated',
  /** Where a dead letter sat (items that are not records, issue 48): the cursor its page was read at. */
  pageCursor: 'gamedata.page.cursor',
  /** ... and its index among that page's items in the slice. */
  pageIndex: 'gamedata.page.index',
  originalBytes: 'gamedata.dlq.original.bytes',
} as const;

/** A message for the sink: string key (UTF-8), bytes or text value, string headers. */
export interface OutgoingMessage {
  key: string | null;
  value: Buffer | string;
  headers: Record<string, string>;
}

export interface DeadLetterOptions {
  /**
   * Largest dead-letter value; a longer original JSON is cut there and flagged with `gamedata.dlq.truncated`
   * (the DLQ topics are created with a larger `max.message.bytes` so this only bites on absurd records).
   * @default 8_000_000
   */
  maxValueBytes?: number;
  /**
   * Masked in the error message header (Kafka keeps it). @default the secrets of this process's settings
   * (`ownSecrets()`)
   */
  secrets?: Secrets;
}

export const DEFAULT_DEAD_LETTER_OPTIONS = { maxValueBytes: 8_000_000 } as const;

/** The lineage headers of a page (string values). */
export function lineageHeaders(lineage: Lineage): Record<string, string> {
  const fetchedAt =
    lineage.fetchedAt instanceof Date
      ? lineage.fetchedAt.toISOString()
      : typeof lineage.fetchedAt === 'number'
        ? new Date(lineage.fetchedAt).toISOString()
        : lineage.fetchedAt;
  return {
    [HEADER.runId]: lineage.runId,
    [HEADER.sliceId]: lineage.sliceId,
    [HEADER.sourceOperation]: lineage.sourceOperation,
    [HEADER.fetchedAt]: fetchedAt,
  };
}

function originalJson(record: unknown): string {
  try {
    return JSON.stringify(record) ?? String(record);
  } catch {
    return String(record); // cycles / BigInt: still say something rather than drop
  }
}

/**
 * The dead-letter message of `record`, which failed with `error` (normally an {@link EncodingError}).
 * @example
 * const dlq = buildDeadLetter({ resource: 'transactions', record, error, lineage });
 * await sink.send(dlqTopicName(topic), [dlq]);
 */
export function buildDeadLetter(input: {
  resource: string;
  record: unknown;
  error: unknown;
  lineage: Lineage;
  options?: DeadLetterOptions;
  /** Where in its page the record sat (items that are not records). @default none */
  position?: { pageCursor: string; pageIndex: number };
}): OutgoingMessage {
  const maxValueBytes = input.options?.maxValueBytes ?? DEFAULT_DEAD_LETTER_OPTIONS.maxValueBytes;
  const error = GamedataError.from(input.error);
  const id = (input.record as { _id?: unknown } | null)?._id;
  let value = Buffer.from(originalJson(input.record), 'utf8');
  const headers: Record<string, string> = {
    ...lineageHeaders(input.lineage),
    [HEADER.resource]: input.resource,
    [HEADER.errorClass]: error.name,
    [HEADER.errorReason]: error instanceof EncodingError ? error.reason : 'not-encodable',
    [HEADER.errorMessage]: maskWith(error.message, input.options?.secrets ?? ownSecrets()).slice(0, 4_000),
    [HEADER.errorPath]: error instanceof EncodingError ? error.path : '',
  };
  if (input.position !== undefined) {
    headers[HEADER.pageCursor] = input.position.pageCursor;
    headers[HEADER.pageIndex] = String(input.position.pageIndex);
  }
  if (value.length > maxValueBytes) {
    headers[HEADER.truncated] = 'true';
    headers[HEADER.originalBytes] = String(value.length);
    value = value.subarray(0, maxValueBytes);
  }
  return { key: typeof id === 'string' && id !== '' ? id : null, value, headers };
}
