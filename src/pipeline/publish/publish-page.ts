/**
 * Publishes one page of records: each record is encoded on its own; good ones go to `<prefix>.<resource>` keyed
 * by `_id` with lineage headers, records that cannot be encoded go to `<topic>.dlq` with the reason. Resolves only
 * after Kafka acknowledged both sends, so the caller may then mark the records seen and checkpoint.
 */
import type { ResourceName } from '../../foundation/models/index.js';
import { EncodingError } from '../../foundation/errors/index.js';
import { buildDeadLetter, lineageHeaders } from './dead-letter.js';
import type { DeadLetterOptions, Lineage, OutgoingMessage } from './dead-letter.js';
import type { RecordEncoder } from '../../output/encoding/index.js';
import type { EncodingFailureReason } from '../../foundation/errors/index.js';
import type { KafkaSink } from '../../output/kafka/index.js';
import { dlqTopicName, RESOURCE_INFO } from '../../foundation/models/index.js';
import { NOT_A_RECORD, NotARecord } from './not-a-record.js';
import { createDriftTracker } from '../drift/drift-tracker.js';
import type { PageDrift } from '../drift/drift-tracker.js';
import { createQuietFields } from '../drift/quiet-fields.js';

export interface PagePublisherOptions {
  /** A connected sink (`createKafkaSink`). Required. */
  sink: KafkaSink;
  /** The registry-backed encoder (`createRecordEncoder`); its topic prefix names the topics. Required. */
  encoder: RecordEncoder;
  /** Options of the dead-letter values. @default DEFAULT_DEAD_LETTER_OPTIONS */
  deadLetter?: DeadLetterOptions;
  /**
   * Told once per page of the page's schema drift (unknown fields, wrong-typed values) when there was some; it must
   * not throw and should not block (the runtime stores it in Redis and counts it, without awaiting). @default none
   */
  onDrift?: (resource: ResourceName, drift: PageDrift) => void;
  /**
   * The `evolve` contract (issue 35, `schema-evolution.ts`): asked when a page's drift has new fields; resolves
   * `true` when the subject now has a version carrying some of them, and the page is then encoded again with it
   * (nothing was sent yet, so nothing is lost or sent twice). Never rejects. @default none
   */
  evolve?: (resource: ResourceName, drift: PageDrift) => Promise<boolean>;
}

export interface PublishPageInput {
  resource: ResourceName;
  /** The page's records as upstream sent them (parsed JSON), in page order. */
  records: readonly unknown[];
  lineage: Lineage;
}

export interface DeadLetteredRecord {
  /** Index of the record in the page. */
  index: number;
  id: string | null;
  reason: EncodingFailureReason;
  path: string;
  message: string;
}

export interface PublishPageResult {
  /** Records acknowledged on the resource topic. */
  published: number;
  /** Records acknowledged on the DLQ topic. `published + deadLettered === records.length`. */
  deadLettered: number;
  /** Why each dead-lettered record was rejected. */
  deadLetters: DeadLetteredRecord[];
}

export interface PagePublisher {
  /**
   * Encodes and publishes one page. Never drops a record: each one is either on the topic or on its DLQ when this
   * resolves.
   * @throws ServiceError when the registry or Kafka fails (retriable per `error.retriable`); nothing is
   *   acknowledged as a whole then, and retrying the page republishes (at-least-once; keys are `_id`).
   */
  publishPage(input: PublishPageInput): Promise<PublishPageResult>;
}

/**
 * The helper the pipeline calls after each page.
 * @example
 * const publisher = createPagePublisher({ sink, encoder });
 * const { published, deadLettered } = await publisher.publishPage({ resource: 'users', records, lineage });
 */
export function createPagePublisher(options: PagePublisherOptions): PagePublisher {
  const { sink } = options;
  const encodePage = createPageEncoder(options);
  return {
    async publishPage(input) {
      const page = await encodePage(input);
      await Promise.all([
        sink.send(page.topic, page.records),
        sink.send(page.dlqTopic, page.deadLetterMessages),
      ]);
      return {
        published: page.records.length,
        deadLettered: page.deadLetterMessages.length,
        deadLetters: page.deadLetters,
      };
    },
  };
}

/** A page encoded for Kafka but not sent: the messages of the resource topic and of its DLQ. */
export interface EncodedPage {
  topic: string;
  dlqTopic: string;
  /** Good records: key `_id`, Avro value, lineage headers. */
  records: OutgoingMessage[];
  /** Dead letters, in page order. `records.length + deadLetterMessages.length === input.records.length`. */
  deadLetterMessages: OutgoingMessage[];
  /** Why each dead-lettered record was rejected. */
  deadLetters: DeadLetteredRecord[];
}

/** Encodes pages without sending them (the exactly-once path sends them inside a Kafka transaction). */
export type PageEncoder = (input: PublishPageInput) => Promise<EncodedPage>;

/** The dead-letter reason of an item that is not a record, naming what it was and where. */
function notARecordError(item: NotARecord): EncodingError {
  const what =
    item.value === null ? 'null' : Array.isArray(item.value) ? 'an array' : `a ${typeof item.value}`;
  return new EncodingError(
    `item ${item.pageIndex} of the page read at cursor ${item.pageCursor || '(the slice end)'} is ${what}, not a record`,
    `$[${item.pageIndex}]`,
    { reason: NOT_A_RECORD },
  );
}

/**
 * The encode half of publishing: each record is encoded on its own; one that cannot be encoded becomes a dead
 * letter with the reason. Never drops a record.
 * @throws ServiceError when the registry fails (retriable per `error.retriable`)
 */
export function createPageEncoder(
  options: Pick<PagePublisherOptions, 'encoder' | 'deadLetter' | 'onDrift' | 'evolve'>,
): PageEncoder {
  const { encoder, onDrift, evolve } = options;
  const quiet = onDrift === undefined ? undefined : createQuietFields();
  const fieldsOf = new Map<ResourceName, string[]>();
  return async ({ resource, records, lineage }) => {
    const headers = lineageHeaders(lineage);
    // One tracker per page: the drift is folded in memory and reported once, never per record.
    const tracker = onDrift === undefined ? undefined : createDriftTracker();
    // Encoding is CPU-bound and the registry lookups are cached: encoding the whole page at once is fine.
    // Items that are not records (issue 48) are never encoded, nor seen by the drift tracker.
    const encode = (record: unknown, t?: ReturnType<typeof createDriftTracker>): Promise<Buffer> =>
      record instanceof NotARecord
        ? Promise.reject(notARecordError(record))
        : encoder.encode(resource, record, t);
    let results = await Promise.allSettled(records.map((record) => encode(record, tracker)));
    if (tracker !== undefined) {
      let fields = fieldsOf.get(resource);
      if (fields === undefined)
        fieldsOf.set(resource, (fields = Object.keys(RESOURCE_INFO[resource].model.fields)));
      const observed = records.filter((r) => !(r instanceof NotARecord));
      quiet?.observe(resource, fields, observed, tracker);
      const drift = tracker.page();
      if (drift.entries.length > 0 || drift.dropped > 0) {
        onDrift?.(resource, drift);
        if (evolve !== undefined && drift.entries.some((e) => e.kind === 'new_field')) {
          if (await evolve(resource, drift)) {
            encoder.refresh(resource);
            results = await Promise.allSettled(records.map((record) => encode(record)));
          }
        }
      }
    }
    const good: OutgoingMessage[] = [];
    const bad: OutgoingMessage[] = [];
    const deadLetters: DeadLetteredRecord[] = [];
    results.forEach((result, index) => {
      const record = records[index];
      if (result.status === 'fulfilled') {
        good.push({ key: (record as { _id: string })._id, value: result.value, headers });
        return;
      }
      if (!(result.reason instanceof EncodingError)) throw result.reason; // registry down: fail the page, retry
      const error = result.reason;
      const message = buildDeadLetter({
        resource,
        record: record instanceof NotARecord ? record.value : record,
        error,
        lineage,
        ...(options.deadLetter === undefined ? {} : { options: options.deadLetter }),
        ...(record instanceof NotARecord
          ? { position: { pageCursor: record.pageCursor, pageIndex: record.pageIndex } }
          : {}),
      });
      bad.push(message);
      deadLetters.push({
        index,
        id: message.key,
        reason: error.reason,
        path: error.path,
        message: error.message,
      });
    });
    const topic = encoder.topic(resource);
    return { topic, dlqTopic: dlqTopicName(topic), records: good, deadLetterMessages: bad, deadLetters };
  };
}
