/**
 * The project's one door to `@confluentinc/schemaregistry` (1.10.1, pinned exactly while this stands): every value
 * and type the project takes from it, by deep path into `dist/`. The library's index loads every KMS SDK (AWS, Azure,
 * GCP, Vault): ~1 s of start-up the project never uses. Deep paths are the library's internals (not in its
 * `exports`), so they may move in any release: the unit test checks the pin, the installed release, that each deep
 * export is the very class or enum the index exports, and that these paths load no KMS SDK;
 * {@link requireSchemaRegistryLibrary} (called by `createRegistryClient`) refuses another release with one line.
 * An eslint rule keeps every other file of `src/` off the deep paths.
 */
import { requireLibraryVersion } from '../../foundation/library-version/index.js';

export { AvroDeserializer, AvroSerializer } from '@confluentinc/schemaregistry/dist/serde/avro.js';
export type {
  AvroDeserializerConfig,
  AvroSerializerConfig,
} from '@confluentinc/schemaregistry/dist/serde/avro.js';
export { SerdeType, SubjectNameStrategyType } from '@confluentinc/schemaregistry/dist/serde/serde.js';
export type { RuleRegistry } from '@confluentinc/schemaregistry/dist/serde/rule-registry.js';
export { RestError } from '@confluentinc/schemaregistry/dist/rest-error.js';
export {
  Compatibility,
  SchemaRegistryClient,
} from '@confluentinc/schemaregistry/dist/schemaregistry-client.js';
export type { Client, SchemaInfo } from '@confluentinc/schemaregistry/dist/schemaregistry-client.js';

/** The release whose `dist/` layout the deep paths above were written for (package.json pins it exactly). */
export const SCHEMA_REGISTRY_LIBRARY_VERSION = '1.10.1';

/**
 * @throws LibraryPatchError when the installed `@confluentinc/schemaregistry` is not 1.10.1
 */
export function requireSchemaRegistryLibrary(): void {
  requireLibraryVersion(
    '@confluentinc/schemaregistry',
    SCHEMA_REGISTRY_LIBRARY_VERSION,
    "the project's deep imports into its dist/ (output/encoding/schema-registry-library.ts)",
  );
}
