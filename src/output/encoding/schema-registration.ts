/**
 * Registering the committed schemas and checking local changes against the registry (the `schemas register` and
 * `schemas check` commands). Subjects are `<prefix>.<resource>-value` (TopicNameStrategy), each set to
 * BACKWARD_TRANSITIVE so no future version can break a consumer of any earlier one.
 */
import { Compatibility, type Client } from './schema-registry-library.js';
import {
  RESOURCES,
  DEFAULT_TOPIC_PREFIX,
  topicName,
  valueSubjectName,
} from '../../foundation/models/index.js';
import type { ResourceName } from '../../foundation/models/index.js';
import { FieldExistsError, ServiceError } from '../../foundation/errors/index.js';
import type { AvroRecordSchema } from './avro-schema.js';
import { diffSchemas } from './schema-diff.js';
import type { SchemaChange } from './schema-diff.js';
import { isSubjectNotFound, toRegistryError } from './registry-client.js';
import { withOptionalField, type CandidateFieldKind } from './schema-candidate.js';

export interface SchemaSetOptions {
  /** The registry client (`createRegistryClient`). Required. */
  registry: Client;
  /** The schema of each resource (normally `readSchemaFiles()`); resources left out are skipped. Required. */
  schemas: Partial<Record<ResourceName, AvroRecordSchema>>;
  /** Topic prefix of the subjects. @default 'gamedata' */
  topicPrefix?: string;
}

export interface RegisteredSubject {
  resource: ResourceName;
  subject: string;
  /** The registry's schema id (the one in every message's frame). */
  id: number;
}

export interface SubjectCheck {
  resource: ResourceName;
  subject: string;
  /** `new`: not registered yet; `compatible`: registrable without breaking consumers; `incompatible`: it would break. */
  status: 'new' | 'compatible' | 'incompatible';
  /** The breaking changes against the latest registered version (for `incompatible`). */
  changes: SchemaChange[];
  /** The registry's own verdict under the subject's compatibility level (`undefined` for new subjects). */
  registryCompatible?: boolean;
}

function url(registry: Client): string {
  return registry.config().baseURLs[0] ?? '(no url)';
}

function subjects(
  options: SchemaSetOptions,
): { resource: ResourceName; subject: string; schema: AvroRecordSchema }[] {
  const prefix = options.topicPrefix ?? DEFAULT_TOPIC_PREFIX;
  return RESOURCES.flatMap((resource) => {
    const schema = options.schemas[resource];
    return schema === undefined
      ? []
      : [{ resource, subject: valueSubjectName(topicName(prefix, resource)), schema }];
  });
}

/**
 * Registers each schema under its subject (an identical schema returns its existing id) and sets the subject's
 * compatibility to BACKWARD_TRANSITIVE.
 * @throws ServiceError naming the subject when the registry refuses a schema (e.g. 409 incompatible) or is down.
 */
export async function registerSchemas(options: SchemaSetOptions): Promise<RegisteredSubject[]> {
  const out: RegisteredSubject[] = [];
  for (const { resource, subject, schema } of subjects(options)) {
    let id: number;
    try {
      // Compact JSON: the same text every time, so re-registering is a no-op rather than a new version.
      id = await options.registry.register(
        subject,
        { schemaType: 'AVRO', schema: JSON.stringify(schema) },
        false,
      );
      await options.registry.updateCompatibility(subject, Compatibility.BACKWARD_TRANSITIVE);
    } catch (error) {
      throw toRegistryError(error, url(options.registry), `registering ${subject}`);
    }
    out.push({ resource, subject, id });
  }
  return out;
}

/**
 * Tests each local schema against the subject's latest registered version: the registry's compatibility endpoint
 * (under the subject's level) and {@link diffSchemas} (removed, retyped or default-less fields, which also name the
 * change). A schema is `incompatible` when either finds a break.
 * @throws ServiceError when the registry cannot be reached.
 */
export async function checkSchemas(options: SchemaSetOptions): Promise<SubjectCheck[]> {
  const out: SubjectCheck[] = [];
  for (const { resource, subject, schema } of subjects(options)) {
    let registered: AvroRecordSchema;
    try {
      const latest = await options.registry.getLatestSchemaMetadata(subject);
      registered = JSON.parse(latest.schema) as AvroRecordSchema;
    } catch (error) {
      if (isSubjectNotFound(error)) {
        out.push({ resource, subject, status: 'new', changes: [] });
        continue;
      }
      throw toRegistryError(error, url(options.registry), `reading the latest schema of ${subject}`);
    }
    let registryCompatible: boolean;
    try {
      registryCompatible = await options.registry.testSubjectCompatibility(subject, {
        schemaType: 'AVRO',
        schema: JSON.stringify(schema),
      });
    } catch (error) {
      throw toRegistryError(error, url(options.registry), `testing compatibility of ${subject}`);
    }
    const changes = diffSchemas(registered, schema);
    if (!registryCompatible && changes.length === 0) {
      changes.push({
        path: '',
        kind: 'retyped',
        message:
          'the registry reports the schema incompatible with an earlier version under its compatibility level',
      });
    }
    out.push({
      resource,
      subject,
      status: changes.length === 0 ? 'compatible' : 'incompatible',
      changes,
      registryCompatible,
    });
  }
  return out;
}

/** Deletes every subject of a prefix (soft, then permanent). For tests with a throwaway prefix. */
export async function deleteSubjects(registry: Client, topicPrefix: string): Promise<void> {
  for (const resource of RESOURCES) {
    const subject = valueSubjectName(topicName(topicPrefix, resource));
    for (const permanent of [false, true]) {
      try {
        await registry.deleteSubject(subject, permanent);
      } catch (error) {
        if (!isSubjectNotFound(error)) {
          throw new ServiceError(`cannot delete ${subject}: ${(error as Error).message}`, 'schema-registry', {
            cause: error,
          });
        }
      }
    }
  }
}

/** What the registry says of adding one optional field to a subject's latest schema. */
export interface OptionalFieldCheck {
  subject: string;
  /** `true`/`false`: the registry's verdict under the subject's level; `undefined`: the subject is not registered. */
  compatible: boolean | undefined;
  /** The latest version has the field already (the `evolve` contract registered it): nothing left to absorb. */
  registered?: boolean;
}

/**
 * Asks the registry (its compatibility endpoint, under the subject's level: BACKWARD_TRANSITIVE once registered by
 * `gamedata schemas register`) whether the latest schema of `resource` with `name` added as an optional field at
 * `parentPath` would be accepted. Registers nothing.
 * @throws ServiceError when the registry cannot be reached; ValidationError when the path names no record.
 */
export async function testOptionalField(options: {
  registry: Client;
  topicPrefix?: string;
  resource: ResourceName;
  parentPath: string;
  name: string;
  kind: CandidateFieldKind;
}): Promise<OptionalFieldCheck> {
  const { registry } = options;
  const subject = valueSubjectName(topicName(options.topicPrefix ?? DEFAULT_TOPIC_PREFIX, options.resource));
  let registered: AvroRecordSchema;
  try {
    registered = JSON.parse((await registry.getLatestSchemaMetadata(subject)).schema) as AvroRecordSchema;
  } catch (error) {
    if (isSubjectNotFound(error)) return { subject, compatible: undefined };
    throw toRegistryError(error, url(registry), `reading the latest schema of ${subject}`);
  }
  let candidate: AvroRecordSchema;
  try {
    candidate = withOptionalField(registered, options.parentPath, options.name, options.kind);
  } catch (error) {
    if (error instanceof FieldExistsError) return { subject, compatible: true, registered: true };
    throw error;
  }
  try {
    const compatible = await registry.testSubjectCompatibility(subject, {
      schemaType: 'AVRO',
      schema: JSON.stringify(candidate),
    });
    return { subject, compatible };
  } catch (error) {
    throw toRegistryError(error, url(registry), `testing compatibility of ${subject}`);
  }
}
