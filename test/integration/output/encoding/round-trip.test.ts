// Every resource round-trips through the real registry and Kafka: records -> publishPage (encode with the latest
// registered schema, produce with acks=all) -> consume -> decode with the writer schema fetched from the registry by
// the id in the frame -> equal to the original under the documented mapping (canonicalRecord), field by field,
// nested sub-models, nulls and _extra included. Malformed records in the same pages land in the DLQ with the right
// reason while their valid neighbours are published.
import fc from 'fast-check';
import type { IHeaders, KafkaMessage } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServices } from '../../../helpers/services.js';
import { RESOURCE_INFO, RESOURCES } from '../../../../src/foundation/models/resources.js';
import type { ResourceName } from '../../../../src/foundation/models/resources.js';
import {
  canonicalRecord,
  createRecordDecoder,
  createRecordEncoder,
  createRegistryClient,
  parseConfluentFrame,
  readSchemaFiles,
  registerSchemas,
} from '../../../../src/output/encoding/index.js';
import { createKafkaSink, createTopics } from '../../../../src/output/kafka/index.js';
import { createPagePublisher, HEADER } from '../../../../src/pipeline/publish/index.js';
import { dlqTopicName, topicName } from '../../../../src/foundation/models/topic-names.js';
import type { KafkaSink } from '../../../../src/output/kafka/index.js';
import type { PublishPageResult } from '../../../../src/pipeline/publish/index.js';
import { modelArb } from '../../../unit/output/encoding/record-arbitrary.js';

const services = createTestServices('encoding-rt');
const prefix = services.prefix;
let sink: KafkaSink;
let ids: Partial<Record<ResourceName, number>> = {};

/** Realistic-shaped records of a resource: catalogue-driven samples (fixed seed) plus hand-picked edge cases. */
function recordsFor(resource: ResourceName): Record<string, unknown>[] {
  const model = RESOURCE_INFO[resource].model;
  const sampled = fc.sample(modelArb(model), { seed: 42, numRuns: resource === 'users' ? 8 : 20 });
  const seen = new Set<unknown>();
  const unique = sampled.filter((r) => !seen.has(r['_id']) && seen.add(r['_id']));
  return [
    ...unique,
    { _id: `${resource}-min` }, // every field absent
    {
      _id: `${resource}-extra`,
      createdAt: '2024-02-29T12:00:00Z',
      sellerCountryId: 'c42',
      buyerMuId: null,
      nested: { a: [1] },
    },
  ];
}

/** One kind of each failure the encoder recognises, keyed by the reason it must produce. */
const MALFORMED: Record<string, Record<string, unknown>> = {
  'missing-id': { createdAt: '2024-01-01T00:00:00.000Z' },
  'wrong-type': { _id: 'bad-type', createdAt: 12345 },
  'invalid-date': { _id: 'bad-date', createdAt: '31/02/2024 25:61' },
  'too-large': { _id: 'too-big', __v: 1, huge: 'x'.repeat(300_000) },
};

const lineage = {
  runId: 'run-it',
  sliceId: 'slice-it',
  sourceOperation: 'it.roundTrip',
  fetchedAt: Date.UTC(2026, 10, 22),
};
const published = new Map<ResourceName, Record<string, unknown>[]>();
const results = new Map<ResourceName, PublishPageResult>();

async function consume(
  topics: string[],
  expected: number,
): Promise<{ topic: string; message: KafkaMessage }[]> {
  const consumer = await services.consumer();
  for (const topic of topics) await consumer.subscribe({ topic, fromBeginning: true });
  const got: { topic: string; message: KafkaMessage }[] = [];
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`only ${got.length}/${expected} messages within 90 s`)),
      90_000,
    );
    void consumer.run({
      eachMessage: ({ topic, message }) => {
        got.push({ topic, message });
        if (got.length >= expected) {
          clearTimeout(timer);
          resolve();
        }
        return Promise.resolve();
      },
    });
  });
  await consumer.stop();
  return got;
}

const header = (headers: IHeaders | undefined, name: string): string | undefined =>
  headers?.[name]?.toString();

beforeAll(async () => {
  const registry = createRegistryClient({ url: services.urls.schemaRegistryUrl });
  const files = await readSchemaFiles();
  const registered = await registerSchemas({
    registry,
    topicPrefix: prefix,
    schemas: Object.fromEntries(Object.entries(files).map(([r, f]) => [r, f.schema])),
  });
  ids = Object.fromEntries(registered.map((r) => [r.resource, r.id]));
  await createTopics({ brokers: services.urls.kafkaBrokers, topicPrefix: prefix, partitions: 1 });
  sink = createKafkaSink({ brokers: services.urls.kafkaBrokers, clientId: prefix });
  await sink.connect();
  const publisher = createPagePublisher({
    sink,
    encoder: createRecordEncoder({ registry, topicPrefix: prefix, maxRecordBytes: 200_000 }),
  });
  for (const resource of RESOURCES) {
    const good = recordsFor(resource);
    published.set(resource, good);
    // Malformed records in the middle of the page, valid neighbours on both sides.
    const page = [...good.slice(0, 3), ...Object.values(MALFORMED), ...good.slice(3)];
    results.set(resource, await publisher.publishPage({ resource, records: page, lineage }));
  }
});

afterAll(async () => {
  await sink?.disconnect();
  await services.cleanup();
});

describe('encoding round trip through the real registry and Kafka', () => {
  it('counts every record as published or dead-lettered, after the acks', () => {
    for (const resource of RESOURCES) {
      const result = results.get(resource);
      expect(result?.published, resource).toBe(published.get(resource)?.length);
      expect(result?.deadLettered, resource).toBe(Object.keys(MALFORMED).length);
    }
  });

  it.each(RESOURCES)(
    '%s: consumed values decode (schema by id from the registry) to the original under the mapping',
    async (resource) => {
      const topic = topicName(prefix, resource);
      const originals = published.get(resource) ?? [];
      const messages = await consume([topic], originals.length);
      // A decoder with its own registry client: nothing cached from the encoding side.
      const decoder = createRecordDecoder({
        registry: createRegistryClient({ url: services.urls.schemaRegistryUrl }),
        topicPrefix: prefix,
      });
      const byId = new Map(originals.map((r) => [r['_id'], r]));
      expect(messages).toHaveLength(originals.length);
      for (const { message } of messages) {
        const value = message.value;
        if (value === null) throw new Error('null value');
        expect(parseConfluentFrame(value).schemaId).toBe(ids[resource]);
        const { record, schemaId } = await decoder.decode(resource, value);
        expect(schemaId).toBe(ids[resource]);
        const key = message.key?.toString('utf8');
        expect(key).toBe(record['_id']);
        const original = byId.get(key);
        expect(original, `unexpected key ${String(key)}`).toBeDefined();
        expect(record).toStrictEqual(canonicalRecord(RESOURCE_INFO[resource].model, original ?? {}));
        expect(header(message.headers, HEADER.runId)).toBe('run-it');
        expect(header(message.headers, HEADER.sliceId)).toBe('slice-it');
        expect(header(message.headers, HEADER.sourceOperation)).toBe('it.roundTrip');
        expect(header(message.headers, HEADER.fetchedAt)).toBe('2026-11-22T00:00:00.000Z');
        byId.delete(key);
      }
      expect([...byId.keys()]).toEqual([]); // every original arrived exactly once
    },
  );

  it('keeps unknown fields (_extra) and ISO dates through Kafka, checked field by field', async () => {
    const resource = 'transactions';
    const messages = await consume([topicName(prefix, resource)], published.get(resource)?.length ?? 0);
    const decoder = createRecordDecoder({
      registry: createRegistryClient({ url: services.urls.schemaRegistryUrl }),
      topicPrefix: prefix,
    });
    const extra = messages.find((m) => m.message.key?.toString() === 'transactions-extra');
    if (extra?.message.value == null) throw new Error('transactions-extra not consumed');
    const { record } = await decoder.decode(resource, extra.message.value);
    expect(record['sellerCountryId']).toBe('c42');
    expect(record['buyerMuId']).toBeNull();
    expect(record['nested']).toEqual({ a: [1] });
    expect(record['createdAt']).toBe('2024-02-29T12:00:00.000Z');
    expect(record['money']).toBeNull();
  });

  it('puts each kind of malformed record in the DLQ with its reason, original JSON and lineage', async () => {
    const dlqs = RESOURCES.map((r) => dlqTopicName(topicName(prefix, r)));
    const messages = await consume(dlqs, RESOURCES.length * Object.keys(MALFORMED).length);
    for (const resource of RESOURCES) {
      const mine = messages.filter((m) => m.topic === dlqTopicName(topicName(prefix, resource)));
      const reasons = mine.map((m) => header(m.message.headers, HEADER.errorReason)).sort();
      expect(reasons, resource).toEqual(Object.keys(MALFORMED).sort());
      for (const { message } of mine) {
        const reason = header(message.headers, HEADER.errorReason) ?? '';
        const original = MALFORMED[reason];
        expect(JSON.parse(message.value?.toString('utf8') ?? 'null')).toEqual(original);
        expect(message.key?.toString('utf8') ?? null).toBe((original?.['_id'] as string | undefined) ?? null);
        expect(header(message.headers, HEADER.errorClass)).toBe('EncodingError');
        expect(header(message.headers, HEADER.runId)).toBe('run-it');
        expect(header(message.headers, HEADER.sourceOperation)).toBe('it.roundTrip');
        const path = header(message.headers, HEADER.errorPath);
        if (reason === 'missing-id') expect(path).toBe('_id');
        if (reason === 'wrong-type' || reason === 'invalid-date') expect(path).toBe('createdAt');
      }
    }
  });
});
