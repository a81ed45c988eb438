import { AvroSerializer, MockClient, RuleMode, SerdeType } from '@confluentinc/schemaregistry';
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import {
  CachedAvroDeserializer,
  CachedAvroSerializer,
  DirectAvroSerializer,
} from '../../../../src/output/encoding/cached-avro-serde.js';
import { AVRO_TYPE_OPTIONS } from '../../../../src/output/encoding/avro-types.js';
import { generateAvroSchema, generateResourceSchemas } from '../../../../src/output/encoding/avro-schema.js';
import { parseConfluentFrame } from '../../../../src/output/encoding/confluent-frame.js';
import { registerSchemas } from '../../../../src/output/encoding/schema-registration.js';
import { toAvroValue } from '../../../../src/output/encoding/avro-mapping.js';
import { Transaction, User } from '../../../../src/foundation/models/catalogue.js';
import { extendModel, t } from '../../../../src/foundation/models/field.js';
import { RESOURCE_INFO, RESOURCES } from '../../../../src/foundation/models/resources.js';
import { createWorld } from '../../../../tools/simulator/index.js';
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
      expect(await deserializer.deserialize('c.users', bytes)).toEqual(
        type.fromBuffer(bytes.subarray(5)) as unknown,
      );
    }
    const info = await registry.getLatestSchemaMetadata('c.users-value');
    const [first] = await cached.toType(info);
    const [second] = await cached.toType({ ...info, schema: `${info.schema}` });
    expect(second).toBe(first);
  });
});

describe('DirectAvroSerializer', () => {
  const conf = { useLatestVersion: true, autoRegisterSchemas: false, ...AVRO_TYPE_OPTIONS };

  it("writes exactly the library serializer's bytes for every record of every resource (simulator and generated)", async () => {
    const registry = new MockClient({ baseURLs: ['mock://'] });
    await registerSchemas({ registry, topicPrefix: 'd', schemas: generateResourceSchemas() });
    const library = new AvroSerializer(registry, SerdeType.VALUE, conf);
    const direct = new DirectAvroSerializer(registry, SerdeType.VALUE, conf);
    const world = createWorld({ scale: 'small', seed: 1 });
    const librarySerialize = vi.spyOn(AvroSerializer.prototype, 'serialize');
    for (const resource of RESOURCES) {
      const model = RESOURCE_INFO[resource].model;
      const records = [...world.truth(resource), ...fc.sample(modelArb(model), { seed: 7, numRuns: 25 })];
      expect(records.length).toBeGreaterThan(25);
      for (const record of records) {
        const value = toAvroValue(model, record);
        const before = librarySerialize.mock.calls.length;
        const bytes = await direct.serialize(`d.${resource}`, value);
        // The direct path wrote it (the library's serialize was not called for it).
        expect(librarySerialize.mock.calls.length).toBe(before);
        const expected = await library.serialize(`d.${resource}`, value);
        if (!bytes.equals(expected)) expect(bytes.toString('hex')).toBe(expected.toString('hex'));
      }
    }
    librarySerialize.mockRestore();
  });

  it("rejects an invalid value with the library's own error", async () => {
    const registry = new MockClient({ baseURLs: ['mock://'] });
    await registerSchemas({ registry, topicPrefix: 'd', schemas: generateResourceSchemas() });
    const library = new AvroSerializer(registry, SerdeType.VALUE, conf);
    const direct = new DirectAvroSerializer(registry, SerdeType.VALUE, conf);
    const bad = { ...toAvroValue(Transaction, { _id: 'a', money: 1 }), money: 'lots' };
    const expected = await library.serialize('d.transactions', bad).then(
      () => 'resolved',
      (e: Error) => e.message,
    );
    expect(expected).toMatch(/^Invalid message at money/);
    await expect(direct.serialize('d.transactions', bad)).rejects.toThrow(expected);
    await expect(direct.serialize('d.transactions', null)).rejects.toThrow('message is empty');
  });

  it('uses the latest version for planTtlMs, then looks it up again through the library', async () => {
    const registry = new MockClient({ baseURLs: ['mock://'] });
    const [v1] = await registerSchemas({
      registry,
      topicPrefix: 'd',
      schemas: { transactions: generateResourceSchemas().transactions },
    });
    let now = 0;
    const direct = new DirectAvroSerializer(registry, SerdeType.VALUE, conf, undefined, {
      planTtlMs: 1000,
      now: () => now,
    });
    const value = toAvroValue(Transaction, { _id: 'a', money: 1 });
    expect(parseConfluentFrame(await direct.serialize('d.transactions', value)).schemaId).toBe(v1?.id);
    const next = generateAvroSchema(extendModel(Transaction, 'Transaction', { nickname: t.string }));
    const [v2] = await registerSchemas({ registry, topicPrefix: 'd', schemas: { transactions: next } });
    expect(v2?.id).not.toBe(v1?.id);
    now = 999;
    expect(parseConfluentFrame(await direct.serialize('d.transactions', value)).schemaId).toBe(v1?.id);
    now = 1000;
    const bytes = await direct.serialize('d.transactions', { ...value, nickname: null });
    expect(parseConfluentFrame(bytes).schemaId).toBe(v2?.id);
  });

  it('does not keep a failed lookup: an unregistered subject fails each time until it is registered', async () => {
    const registry = new MockClient({ baseURLs: ['mock://'] });
    const direct = new DirectAvroSerializer(registry, SerdeType.VALUE, conf);
    const value = toAvroValue(Transaction, { _id: 'a', money: 1 });
    await expect(direct.serialize('d.transactions', value)).rejects.toThrow();
    await expect(direct.serialize('d.transactions', value)).rejects.toThrow();
    const [v1] = await registerSchemas({
      registry,
      topicPrefix: 'd',
      schemas: { transactions: generateResourceSchemas().transactions },
    });
    expect(parseConfluentFrame(await direct.serialize('d.transactions', value)).schemaId).toBe(v1?.id);
  });

  it("leaves subjects with rules to the library's serialize (an unknown rule type fails there)", async () => {
    const registry = new MockClient({ baseURLs: ['mock://'] });
    const schema = JSON.stringify(generateResourceSchemas().transactions);
    await registry.register(
      'd.transactions-value',
      {
        schemaType: 'AVRO',
        schema,
        ruleSet: {
          domainRules: [
            { name: 'check', kind: 'CONDITION', mode: RuleMode.WRITE, type: 'NO_SUCH_RULE_TYPE' },
          ],
        },
      },
      false,
    );
    const value = toAvroValue(Transaction, { _id: 'a', money: 1 });
    const library = new AvroSerializer(registry, SerdeType.VALUE, conf);
    const direct = new DirectAvroSerializer(registry, SerdeType.VALUE, conf);
    const expected = await library.serialize('d.transactions', value).then(
      () => 'resolved',
      (e: Error) => e.message,
    );
    expect(expected).toMatch(/NO_SUCH_RULE_TYPE/);
    await expect(direct.serialize('d.transactions', value)).rejects.toThrow(expected);
  });

  it('leaves a configuration whose schema may depend on the value to the library', async () => {
    const registry = new MockClient({ baseURLs: ['mock://'] });
    const direct = new DirectAvroSerializer(registry, SerdeType.VALUE, {
      autoRegisterSchemas: true,
      ...AVRO_TYPE_OPTIONS,
    });
    const library = new AvroSerializer(registry, SerdeType.VALUE, {
      autoRegisterSchemas: true,
      ...AVRO_TYPE_OPTIONS,
    });
    const value = { a: 1, b: 'x' };
    expect((await direct.serialize('auto', value)).equals(await library.serialize('auto', value))).toBe(true);
  });
});
