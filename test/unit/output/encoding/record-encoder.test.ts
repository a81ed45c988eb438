import { MockClient } from '@confluentinc/schemaregistry';
import { beforeAll, describe, expect, it } from 'vitest';
import { createRecordEncoder } from '../../../../src/output/encoding/record-encoder.js';
import { createRecordDecoder } from '../../../../src/output/encoding/record-decoder.js';
import { parseConfluentFrame } from '../../../../src/output/encoding/confluent-frame.js';
import { generateResourceSchemas } from '../../../../src/output/encoding/avro-schema.js';
import { registerSchemas } from '../../../../src/output/encoding/schema-registration.js';
import { canonicalRecord } from '../../../../src/output/encoding/avro-mapping.js';
import { Transaction } from '../../../../src/foundation/models/catalogue.js';
import { EncodingError, ServiceError } from '../../../../src/foundation/errors/index.js';

// The library's in-memory registry client (same Client interface; no HTTP). The real registry is exercised in
// test/integration/output/encoding.
const registry = new MockClient({ baseURLs: ['mock://'] });
let ids: Record<string, number> = {};

beforeAll(async () => {
  const registered = await registerSchemas({
    registry,
    schemas: generateResourceSchemas(),
    topicPrefix: 'unit',
  });
  ids = Object.fromEntries(registered.map((r) => [r.resource, r.id]));
});

const encoder = createRecordEncoder({ registry, topicPrefix: 'unit', maxRecordBytes: 2_000 });
const good = {
  _id: 'abc',
  transactionType: 'trading',
  money: 12.5,
  createdAt: '2024-05-01T00:00:00.000Z',
  sellerCountryId: 'fr',
};

async function failure(record: unknown): Promise<EncodingError> {
  const error = await encoder.encode('transactions', record).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(EncodingError);
  return error as EncodingError;
}

describe('createRecordEncoder', () => {
  it("writes the Confluent frame with the id of the subject's latest schema, and decodes back", async () => {
    const bytes = await encoder.encode('transactions', good);
    expect(bytes[0]).toBe(0);
    expect(parseConfluentFrame(bytes).schemaId).toBe(ids['transactions']);
    const decoded = await createRecordDecoder({ registry, topicPrefix: 'unit' }).decode(
      'transactions',
      bytes,
    );
    expect(decoded.record).toStrictEqual(canonicalRecord(Transaction, good));
  });

  it('rejects a record without _id (missing-id)', async () => {
    const e = await failure({ money: 1 });
    expect([e.reason, e.path]).toEqual(['missing-id', '_id']);
  });

  it('rejects a wrong type with its nested path (wrong-type)', async () => {
    const e = await failure({ _id: 'x', item: { skills: { attack: 'strong' } } });
    expect([e.reason, e.path]).toEqual(['wrong-type', 'item.skills.attack']);
    expect(e.message).toContain('expected number');
  });

  it('rejects an unparseable date (invalid-date)', async () => {
    const e = await failure({ _id: 'x', createdAt: 'not a date' });
    expect([e.reason, e.path]).toEqual(['invalid-date', 'createdAt']);
  });

  it('rejects a record over the size limit (too-large)', async () => {
    const e = await failure({ _id: 'x', itemCode: 'y'.repeat(3_000) });
    expect(e.reason).toBe('too-large');
    expect(e.message).toMatch(/over the limit of 2000/);
  });

  it('rejects a non-object record', async () => {
    const e = await failure('just a string');
    expect(e.reason).toBe('wrong-type');
  });

  it('reports an unregistered subject as a ServiceError, not a bad record', async () => {
    const other = createRecordEncoder({ registry, topicPrefix: 'never-registered' });
    await expect(other.encode('transactions', good)).rejects.toSatisfy(
      (e: unknown) =>
        e instanceof ServiceError && !(e instanceof EncodingError) && /not registered/.test(e.message),
    );
  });

  it('validates its options', () => {
    expect(() => createRecordEncoder({ registry, maxRecordBytes: 0 })).toThrow(/maxRecordBytes/);
  });
});

describe('schema evolution with useLatestVersion', () => {
  it('picks up a newer registered version; old and new values both decode; a field the code does not know yet stays in _extra', async () => {
    const { extendModel, t } = await import('../../../../src/foundation/models/field.js');
    const { generateAvroSchema } = await import('../../../../src/output/encoding/avro-schema.js');
    const evolving = new MockClient({ baseURLs: ['mock://'] });
    await registerSchemas({ registry: evolving, schemas: generateResourceSchemas(), topicPrefix: 'evo' });
    const v1 = await createRecordEncoder({ registry: evolving, topicPrefix: 'evo' }).encode('transactions', {
      _id: 'a',
      money: 1,
    });
    const next = generateAvroSchema(extendModel(Transaction, 'Transaction', { nickname: t.string }));
    const [v2info] = await registerSchemas({
      registry: evolving,
      schemas: { transactions: next },
      topicPrefix: 'evo',
    });
    // A fresh encoder (the serializer caches the latest version for cacheLatestTtlSecs) with the old catalogue.
    const v2 = await createRecordEncoder({ registry: evolving, topicPrefix: 'evo' }).encode('transactions', {
      _id: 'b',
      money: 2,
      nickname: 'zed',
    });
    expect(parseConfluentFrame(v2).schemaId).toBe(v2info?.id);
    expect(parseConfluentFrame(v1).schemaId).not.toBe(v2info?.id);
    const decoder = createRecordDecoder({ registry: evolving, topicPrefix: 'evo' });
    expect((await decoder.decode('transactions', v1)).record).toStrictEqual(
      canonicalRecord(Transaction, { _id: 'a', money: 1 }),
    );
    const b = (await decoder.decode('transactions', v2)).record;
    expect(b['nickname']).toBe('zed');
    expect(b['money']).toBe(2);
  });
});
