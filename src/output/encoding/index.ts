/**
 * Encoding: Avro schemas generated from the catalogue (and their files), record <-> Avro mapping, the schema
 * registry client, schema registration and diffs, the record encoder (typed `EncodingError.reason`) and decoder.
 * Publishing the encoded records is `publish/`; topic names are `models/`.
 */
export {
  generateAvroSchema,
  generateResourceSchemas,
  formatSchemaFile,
  AVRO_NAMESPACE,
  EXTRA_FIELD,
} from './avro-schema.js';
export type { AvroSchema, AvroRecordSchema, AvroField } from './avro-schema.js';
export { readSchemaFiles, writeSchemaFiles, schemaFilePath, DEFAULT_SCHEMAS_DIR } from './schema-files.js';
export { toAvroValue, fromAvroValue, canonicalRecord } from './avro-mapping.js';
export type { ToAvroOptions, UnknownFieldSink } from './avro-mapping.js';
export { createRecordEncoder, issuesToError, DEFAULT_RECORD_ENCODER_OPTIONS } from './record-encoder.js';
export type { RecordEncoder, RecordEncoderOptions, DriftSink } from './record-encoder.js';
export { createRecordDecoder } from './record-decoder.js';
export type { RecordDecoder, RecordDecoderOptions, DecodedRecord } from './record-decoder.js';
export { parseConfluentFrame, frameConfluent, CONFLUENT_MAGIC_BYTE } from './confluent-frame.js';
export { createRegistryClient, toRegistryError, DEFAULT_REGISTRY_CLIENT_OPTIONS } from './registry-client.js';
export type { RegistryClientOptions } from './registry-client.js';
export { registerSchemas, checkSchemas, deleteSubjects, testOptionalField } from './schema-registration.js';
export type {
  RegisteredSubject,
  SubjectCheck,
  SchemaSetOptions,
  OptionalFieldCheck,
} from './schema-registration.js';
export { withOptionalField } from './schema-candidate.js';
export type { CandidateFieldKind } from './schema-candidate.js';
export { diffSchemas } from './schema-diff.js';
export type { SchemaChange } from './schema-diff.js';
export { TimestampMillisType, SAFE_LONG_TYPE, AVRO_TYPE_OPTIONS } from './avro-types.js';
// The registry library's client type (the object createRegistryClient returns), named apart from upstream/'s Client.
export type { Client as RegistryClient } from './schema-registry-library.js';
