// Which registry calls the encoder and decoder make: subjects by topic name (no `GET /associations/...` lookup,
// which Apicurio's Confluent-compatible API does not serve and which timed out on a cold start), the writer schema
// by the frame's id, each looked up once. A recording wrapper around the library's in-memory client.
import { MockClient } from '@confluentinc/schemaregistry';
import type { Client } from '@confluentinc/schemaregistry';
import { describe, expect, it } from 'vitest';
import { createRecordEncoder } from '../../../../src/output/encoding/record-encoder.js';
import { createRecordDecoder } from '../../../../src/output/encoding/record-decoder.js';
import { generateResourceSchemas } from '../../../../src/output/encoding/avro-schema.js';
import { registerSchemas } from '../../../../src/output/encoding/schema-registration.js';

function recording(client: Client): { client: Client; calls: string[] } {
  const calls: string[] = [];
  const proxy = new Proxy(client, {
    get(target, key, receiver) {
      const value: unknown = Reflect.get(target, key, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        calls.push(
          `${String(key)}(${args.filter((a) => typeof a === 'string' || typeof a === 'number').join(', ')})`,
        );
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { client: proxy, calls };
}

const record = {
  _id: 'abc',
  transactionType: 'trading',
  money: 12.5,
  createdAt: '2024-05-01T00:00:00.000Z',
  sellerCountryId: 'fr',
};

describe('registry lookups', () => {
  it('encode and decode name subjects by topic and never ask for associations', async () => {
    const { client, calls } = recording(new MockClient({ baseURLs: ['mock://'] }));
    const registered = await registerSchemas({
      registry: client,
      schemas: generateResourceSchemas(),
      topicPrefix: 'lookups',
    });
    const id = registered.find((r) => r.resource === 'transactions')?.id;
    calls.length = 0;
    const encoder = createRecordEncoder({ registry: client, topicPrefix: 'lookups' });
    const decoder = createRecordDecoder({ registry: client, topicPrefix: 'lookups' });
    for (let i = 0; i < 3; i++) {
      const bytes = await encoder.encode('transactions', record);
      expect((await decoder.decode('transactions', bytes)).record).toMatchObject({ _id: 'abc' });
    }
    expect(calls.filter((c) => /association/i.test(c))).toEqual([]);
    // The latest schema once (cached by the client), the writer schema by the frame's id.
    expect(calls.filter((c) => c.startsWith('getLatestSchemaMetadata'))).toEqual([
      'getLatestSchemaMetadata(lookups.transactions-value)',
    ]);
    expect(calls).toContain(`getBySubjectAndId(lookups.transactions-value, ${id})`);
  });
});
