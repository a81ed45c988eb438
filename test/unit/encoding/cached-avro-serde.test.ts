import { AvroSerializer, MockClient, SerdeType } from '@confluentinc/schemaregistry';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CachedAvroDeserializer, CachedAvroSerializer } from '../../../src/encoding/cached-avro-serde.js';
import { AVRO_TYPE_OPTIONS } from '../../../src/encoding/avro-types.js';
import { generateResourceSchemas } from '../../../src/encoding/avro-schema.js';
import { registerSchemas } from '../../../src/encoding/schema-registration.js';
import { toAvroValue } from '../../../src/encoding/avro-mapping.js';
import { User } from '../../../src/models/catalogue.js';
import { modelArb } from './record-arbitrary.js';

describe('CachedAvroSerializer', () => {
  it('writes exactly the bytes the library serializer writes, and compiles each schema once', async () => {
    const registry = new MockClient({ baseURLs: ['mock://'] });
    await registerSchemas({ registry, topicPrefix: 'c', schemas: generateResourceSchemas() });
    const conf = { useLatestVersion: true, autoRegisterSchemas: false, ...AVRO_TYPE_OPTIONS };
    const library = new AvroSerializer(registry, SerdeType.VALUE, conf);
    const cached = new CachedAvroSerializer(registry, SerdeType.VALUE, conf);
    const deserializer = new CachedAvroDeserializer(registry, SerdeType.VALUE, { ...AVRO_TYPE_OPTIONS });
    for (const record of fc.sample(modelArb(User), { seed: 3, numRuns: 10 })) {
      const value = toAvroValue(User, record);
      const bytes = await cached.serialize('c.users', value);
      expect(bytes.equals(await library.serialize('c.users', value))).toBe(true);
      const [type] = await library.toType(await registry.getLatestSchemaMetadata('c.users-value'));
      expect(await deserializer.deserialize('c.users', bytes)).toEqual(type.fromBuffer(bytes.subarray(5)) as unknown);
    }
    const info = await registry.getLatestSchemaMetadata('c.users-value');
    const [first] = await cached.toType(info);
    const [second] = await cached.toType({ ...info, schema: `${info.schema}` });
    expect(second).toBe(first);
  });
});
