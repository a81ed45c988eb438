/**
 * Encodes one record of a resource to a Kafka value: checked against the catalogue, mapped to its Avro value
 * (`avro-mapping.ts`) and serialized by `@confluentinc/schemaregistry`'s AvroSerializer (through
 * `DirectAvroSerializer`: the library resolves the subject's latest registered schema and id once per topic per
 * second and each record is then written as the library would write it, without its per-message overhead; see
 * `cached-avro-serde.ts`) with the subject's latest registered schema (`useLatestVersion`, never
 * auto-registration, never a schema inferred from the value), in the Confluent wire format (0x00 + 4-byte schema id
 * + Avro binary).
 *
 * Two kinds of failure, kept apart on purpose: {@link EncodingError} is the record's fault (dead-letter it, go on);
 * {@link ServiceError} is the registry's (retry the page; dead-lettering would wrongly blame good records).
 */
import { DirectAvroSerializer } from './cached-avro-serde.js';
import { SerdeType, type Client } from './schema-registry-library.js';
import {
  checkRecord,
  RESOURCE_INFO,
  DEFAULT_TOPIC_PREFIX,
  topicName,
  valueSubjectName,
} from '../../foundation/models/index.js';
import type { RecordIssue, ResourceName } from '../../foundation/models/index.js';
import { ConfigError, EncodingError, GamedataError, ServiceError } from '../../foundation/errors/index.js';
import { toAvroValue } from './avro-mapping.js';
import type { ToAvroOptions, UnknownFieldSink } from './avro-mapping.js';
import { AVRO_TYPE_OPTIONS } from './avro-types.js';
import type { WritePlan } from './cached-avro-serde.js';
import type { AvroRecordSchema } from './avro-schema.js';
import { NO_EXTENSIONS, schemaExtensions } from './schema-extensions.js';
import type { SchemaExtensions } from './schema-extensions.js';
import { isRegistryFailure, isSubjectNotFound, toRegistryError } from './registry-client.js';

export interface RecordEncoderOptions {
  /** The registry client (`createRegistryClient`). Required. */
  registry: Client;
  /** Topic prefix: values of resource R are written to `<prefix>.R` with subject `<prefix>.R-value`. @default 'gamedata' */
  topicPrefix?: string;
  /**
   * Largest encoded value accepted, in bytes; larger records are dead-lettered (`too-large`). The default stays
   * under Kafka's default `message.max.bytes` (1 048 588) with room for the key and headers. @default 1_000_000
   */
  maxRecordBytes?: number;
  /**
   * Resources whose unknown fields are dropped instead of kept in `_extra` (the `discard` schema contract,
   * `GAMEDATA_SCHEMA_CONTRACT`); a drift sink is still told of them. @default [] (keep them all)
   */
  discardUnknown?: readonly ResourceName[];
}

/**
 * Told of a record's drift while it is encoded (`drift/`'s tracker is one): each unknown field, and each value of
 * the wrong type (`checkRecord`'s `wrong-type` issues) with the value found.
 */
export interface DriftSink extends UnknownFieldSink {
  /** `recordMs`: the record's sort time (`createdAt`/`publishedAt`), for the replay that repairs the range. */
  wrongType(path: string, value: unknown, recordMs?: number): void;
}

export const DEFAULT_RECORD_ENCODER_OPTIONS = {
  topicPrefix: DEFAULT_TOPIC_PREFIX,
  maxRecordBytes: 1_000_000,
  discardUnknown: [] as readonly ResourceName[],
} as const;

export interface RecordEncoder {
  /**
   * The Confluent-framed Avro value of `record` for `resource`'s topic.
   * @throws EncodingError (with `path` and `reason`) when the record cannot be encoded: dead-letter it.
   * @throws ServiceError when the registry fails or the subject is not registered: retry later.
   * @param drift told of the record's unknown fields and wrong-typed values (schema drift). @default none
   */
  encode(resource: ResourceName, record: unknown, drift?: DriftSink): Promise<Buffer>;
  /** The topic `resource` is written to. */
  topic(resource: ResourceName): string;
  /**
   * Forgets the cached latest schema of `resource`'s subject: the next record is written with the version
   * registered now (after an `evolve`, issue 35). Records already encoded are not touched.
   */
  refresh(resource: ResourceName): void;
}

/** One {@link EncodingError} for every issue of a record: the first names the path and reason, all are listed. */
export function issuesToError(issues: readonly RecordIssue[]): EncodingError {
  const first = issues[0];
  if (first === undefined) throw new GamedataError('issuesToError needs at least one issue');
  const all = issues
    .slice(0, 5)
    .map((i) => `${i.path === '' ? '(record)' : i.path}: ${i.message}`)
    .join('; ');
  const more = issues.length > 5 ? ` (+${issues.length - 5} more)` : '';
  return new EncodingError(`${all}${more}`, first.path, { reason: first.kind ?? 'wrong-type' });
}

const NO_OPTIONS: ToAvroOptions = {};

/** Tells `drift` of each wrong-typed value (the record is dead-lettered; its unknown fields are not looked at). */
function reportWrongTypes(
  issues: readonly RecordIssue[],
  record: unknown,
  drift: DriftSink,
  resource: ResourceName,
): void {
  let recordMs: number | undefined;
  for (const issue of issues) {
    if ((issue.kind ?? 'wrong-type') !== 'wrong-type') continue;
    recordMs ??= sortTimeOf(record, resource);
    drift.wrongType(issue.path, valueAt(record, issue.path), recordMs);
  }
}

/** The record's sort time in epoch ms, or undefined (no valid one). */
function sortTimeOf(record: unknown, resource: ResourceName): number | undefined {
  const value = valueAt(record, RESOURCE_INFO[resource].sortField);
  const ms = typeof value === 'string' ? Date.parse(value) : NaN;
  return Number.isFinite(ms) ? ms : undefined;
}

/** The value at a checkRecord issue path (`a.b[2].c`), or undefined. */
function valueAt(record: unknown, path: string): unknown {
  let current: unknown = record;
  if (path === '') return current;
  for (const part of path.split(/\.|(?=\[)/)) {
    if (current === null || typeof current !== 'object') return undefined;
    const index = /^\[(\d+)\]$/.exec(part);
    if (index !== null) current = (current as unknown[])[Number(index[1])];
    else current = Object.hasOwn(current, part) ? (current as Record<string, unknown>)[part] : undefined;
  }
  return current;
}

/** @throws ConfigError naming the option when a value is invalid. */
function resolve(options: RecordEncoderOptions): Required<RecordEncoderOptions> {
  const resolved = { ...DEFAULT_RECORD_ENCODER_OPTIONS, ...options };
  if (!Number.isSafeInteger(resolved.maxRecordBytes) || resolved.maxRecordBytes < 64) {
    throw new ConfigError(`maxRecordBytes must be an integer >= 64, got ${String(resolved.maxRecordBytes)}`);
  }
  return resolved;
}

/** The ServiceError for a registry failure fetching the latest schema of `topic`'s subject at `url`. */
function registryError(error: unknown, topic: string, url: string): Error {
  const subject = valueSubjectName(topic);
  if (isSubjectNotFound(error)) {
    return new ServiceError(
      `subject ${subject} is not registered at ${url} (run \`gamedata schemas register\`)`,
      'schema-registry',
      { cause: error },
    );
  }
  return toRegistryError(error, url, `fetching the latest schema of ${subject}`);
}

/** avsc's rejection of a value (`Invalid message at a.b ...`) as the record's EncodingError, at the path it names. */
function notEncodable(error: unknown): EncodingError {
  const message = error instanceof Error ? error.message : String(error);
  const path = /Invalid message at ([^,]*),/.exec(message)?.[1] ?? '';
  return new EncodingError(`not encodable with the registered schema: ${message}`, path, {
    reason: 'not-encodable',
    cause: error,
  });
}

/** A registry-backed record encoder. Serializer state (latest schema, compiled avsc types) is cached per subject. */
export function createRecordEncoder(options: RecordEncoderOptions): RecordEncoder {
  const { registry, topicPrefix, maxRecordBytes, discardUnknown } = resolve(options);
  const discard = new Set(discardUnknown);
  const serializer = new DirectAvroSerializer(registry, SerdeType.VALUE, {
    useLatestVersion: true,
    autoRegisterSchemas: false,
    ...AVRO_TYPE_OPTIONS,
  });
  const url = registry.config().baseURLs[0] ?? '(no url)';
  const topics = new Map<ResourceName, string>();
  const topic = (resource: ResourceName): string => {
    let name = topics.get(resource);
    if (name === undefined) topics.set(resource, (name = topicName(topicPrefix, resource)));
    return name;
  };
  // The fields each plan's schema has beyond the catalogue, computed once per resolved plan (once a second at most).
  const extensions = new WeakMap<WritePlan, SchemaExtensions>();
  const extensionsOf = (resource: ResourceName, plan: WritePlan): SchemaExtensions => {
    let ext = extensions.get(plan);
    if (ext === undefined) {
      try {
        ext = schemaExtensions(JSON.parse(plan.schema) as AvroRecordSchema, RESOURCE_INFO[resource].model);
      } catch {
        ext = NO_EXTENSIONS; // not a JSON record schema: write the catalogue's fields only
      }
      extensions.set(plan, ext);
    }
    return ext;
  };

  let last: {
    drift: DriftSink | undefined;
    ext: SchemaExtensions;
    dropUnknown: boolean;
    options: ToAvroOptions;
  } = { drift: undefined, ext: NO_EXTENSIONS, dropUnknown: false, options: NO_OPTIONS };

  return {
    topic,
    refresh(resource) {
      registry.clearLatestCaches();
      serializer.invalidate(topic(resource));
    },
    async encode(resource, record, drift) {
      const issues = checkRecord(RESOURCE_INFO[resource].model, record);
      if (issues.length > 0) {
        if (drift !== undefined) reportWrongTypes(issues, record, drift, resource);
        throw issuesToError(issues);
      }
      const name = topic(resource);
      let plan: WritePlan;
      try {
        const planned = serializer.planFor(name);
        plan = planned instanceof Promise ? await planned : planned;
      } catch (error) {
        if (isRegistryFailure(error)) throw registryError(error, name, url);
        throw error;
      }
      const ext = extensionsOf(resource, plan);
      const dropUnknown = discard.has(resource);
      let mapping: ToAvroOptions = NO_OPTIONS;
      if (drift !== undefined || dropUnknown || ext.size > 0) {
        // One options object per page's tracker, not one per record (the hot path).
        if (last.drift !== drift || last.ext !== ext || last.dropUnknown !== dropUnknown)
          last = {
            drift,
            ext,
            dropUnknown,
            options: { sink: drift, discardUnknown: dropUnknown, extensions: ext },
          };
        mapping = last.options;
      }
      const value = toAvroValue(RESOURCE_INFO[resource].model, record, mapping);
      let bytes: Buffer;
      try {
        bytes = await serializer.serializeWith(name, plan, value);
      } catch (error) {
        if (isRegistryFailure(error)) throw registryError(error, name, url);
        if (error instanceof ServiceError) throw error;
        // What is left is avsc rejecting the value against the registered schema ("Invalid message at a.b ...").
        throw notEncodable(error);
      }
      if (bytes.length > maxRecordBytes) {
        throw new EncodingError(
          `encoded record is ${bytes.length} bytes, over the limit of ${maxRecordBytes}`,
          '',
          {
            reason: 'too-large',
          },
        );
      }
      return bytes;
    },
  };
}
