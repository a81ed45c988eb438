/**
 * Decodes a Kafka value written by the record encoder: the writer schema is fetched from the registry by the id in
 * the frame (AvroDeserializer, no reader schema), then mapped back to the upstream record shape
 * (`fromAvroValue`). Used by tests and `verify`.
 */
import { CachedAvroDeserializer } from './cached-avro-serde.js';
import { SerdeType, type Client } from './schema-registry-library.js';
import { RESOURCE_INFO, DEFAULT_TOPIC_PREFIX, topicName } from '../../foundation/models/index.js';
import type { ResourceName } from '../../foundation/models/index.js';
import { EncodingError } from '../../foundation/errors/index.js';
import { fromAvroValue } from './avro-mapping.js';
import { parseConfluentFrame } from './confluent-frame.js';
import { AVRO_TYPE_OPTIONS } from './avro-types.js';
import { isRegistryFailure, toRegistryError } from './registry-client.js';

export interface RecordDecoderOptions {
  /** The registry client (`createRegistryClient`). Required. */
  registry: Client;
  /** Topic prefix the values were written under. @default 'gamedata' */
  topicPrefix?: string;
}

export interface DecodedRecord {
  /** The writer schema's registry id, read from the frame. */
  schemaId: number;
  /** The record in upstream shape (see docs/schemas.md for the exact mapping). */
  record: Record<string, unknown>;
}

export interface RecordDecoder {
  /**
   * Decodes one framed value of `resource`'s topic.
   * @throws EncodingError when the value is not a Confluent-framed Avro value; ServiceError when the registry fails.
   */
  decode(resource: ResourceName, value: Buffer): Promise<DecodedRecord>;
}

export function createRecordDecoder(options: RecordDecoderOptions): RecordDecoder {
  const prefix = options.topicPrefix ?? DEFAULT_TOPIC_PREFIX;
  const deserializer = new CachedAvroDeserializer(options.registry, SerdeType.VALUE, {
    ...AVRO_TYPE_OPTIONS,
  });
  const url = options.registry.config().baseURLs[0] ?? '(no url)';
  return {
    async decode(resource, value) {
      const { schemaId } = parseConfluentFrame(value);
      let avro: Record<string, unknown>;
      try {
        avro = (await deserializer.deserialize(topicName(prefix, resource), value)) as Record<
          string,
          unknown
        >;
      } catch (error) {
        if (isRegistryFailure(error))
          throw toRegistryError(error, url, `fetching writer schema id ${schemaId}`);
        throw new EncodingError(`cannot decode value: ${(error as Error).message}`, '', { cause: error });
      }
      return { schemaId, record: fromAvroValue(RESOURCE_INFO[resource].model, avro) };
    },
  };
}
