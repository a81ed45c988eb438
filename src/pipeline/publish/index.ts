/**
 * Publish: the path from a page of records to Kafka acks. Owns the one `PagePublisher` contract (and its encode
 * half, `createPageEncoder`, which the exactly-once path sends inside a transaction) and the one
 * `Lineage` type, encode -> produce (`publishPage`: good records to `<prefix>.<resource>`, records that cannot be
 * encoded to `<topic>.dlq` as dead letters with the reason), the dead-letter messages and lineage headers, and the
 * coalescing sink (concurrent sends to a topic share produce requests). Uses `output/encoding/` to encode and
 * `output/kafka/` to produce; the slice walk (`pipeline/slice/`) calls it.
 */
export { createPagePublisher, createPageEncoder } from './publish-page.js';
export type {
  PagePublisher,
  PagePublisherOptions,
  PublishPageInput,
  PublishPageResult,
  DeadLetteredRecord,
  EncodedPage,
  PageEncoder,
} from './publish-page.js';
export { buildDeadLetter, lineageHeaders, HEADER, DEFAULT_DEAD_LETTER_OPTIONS } from './dead-letter.js';
export type { Lineage, OutgoingMessage, DeadLetterOptions } from './dead-letter.js';
export { createCoalescingSink } from './coalescing-sink.js';
export type { CoalescingSinkOptions } from './coalescing-sink.js';
export {
  createSchemaEvolution,
  evolvableKind,
  readEvolvedFields,
  DEFAULT_SCHEMA_EVOLUTION_OPTIONS,
} from './schema-evolution.js';
export type { SchemaEvolutionOptions, EvolvedField, EvolvedKind } from './schema-evolution.js';
export { NotARecord, NOT_A_RECORD, isRecord, wrapNotARecords } from './not-a-record.js';
