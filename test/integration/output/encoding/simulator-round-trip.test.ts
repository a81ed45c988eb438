// The simulator's records (scale small, every resource, 5 % served malformed) go through publishPage in pages of
// 100 exactly as the API serves them; everything is consumed back from the real Kafka: each clean record decodes
// (writer schema fetched by the id in the frame) to the simulator's ground truth under the documented mapping, and
// each malformed one is in the DLQ with the kind the simulator injected as its reason.
import type { IHeaders, KafkaMessage } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServices } from '../../../helpers/services.js';
import { startSimulator } from '../../../../tools/simulator/index.js';
import type { Simulator } from '../../../../tools/simulator/index.js';
import { corruptRecord } from '../../../../tools/simulator/faults.js';
import { RESOURCE_INFO, RESOURCES } from '../../../../src/foundation/models/resources.js';
import type { ResourceName } from '../../../../src/foundation/models/resources.js';
import {
  canonicalRecord,
  createRecordDecoder,
  createRecordEncoder,
  createRegistryClient,
  generateResourceSchemas,
  registerSchemas,
} from '../../../../src/output/encoding/index.js';
import { createKafkaSink, createTopics } from '../../../../src/output/kafka/index.js';
import { createPagePublisher, HEADER } from '../../../../src/pipeline/publish/index.js';
import { dlqTopicName, topicName } from '../../../../src/foundation/models/topic-names.js';
import type { KafkaSink } from '../../../../src/output/kafka/index.js';

const services = createTestServices('encoding-sim');
const prefix = services.prefix;
const PAGE = 100;
let sim: Simulator;
let sink: KafkaSink;
const counts = new Map<ResourceName, { published: number; deadLettered: number }>();

async function consumeAll(topic: string, expected: number): Promise<KafkaMessage[]> {
  if (expected === 0) return [];
  const consumer = await services.consumer();
  await consumer.subscribe({ topic, fromBeginning: true });
  const got: KafkaMessage[] = [];
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${topic}: only ${got.length}/${expected} messages within 120 s`)),
      120_000,
    );
    void consumer.run({
      eachBatch: ({ batch }) => {
        got.push(...batch.messages);
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
  sim = await startSimulator({ scale: 'small', seed: 11, faults: { malformed: 0.05 } });
  const registry = createRegistryClient({ url: services.urls.schemaRegistryUrl });
  await registerSchemas({ registry, topicPrefix: prefix, schemas: generateResourceSchemas() });
  await createTopics({ brokers: services.urls.kafkaBrokers, topicPrefix: prefix, partitions: 1 });
  sink = createKafkaSink({ brokers: services.urls.kafkaBrokers, clientId: prefix });
  await sink.connect();
  const publisher = createPagePublisher({
    sink,
    encoder: createRecordEncoder({ registry, topicPrefix: prefix }),
  });
  for (const resource of RESOURCES) {
    const kinds = new Map(sim.malformed(resource).map((m) => [m._id, m.kind]));
    // What the API serves: the truth, with the malformed records corrupted the way the simulator corrupts them.
    const served = sim.truth(resource).map((r) => {
      const kind = kinds.get(r['_id'] as string);
      return kind === undefined ? r : corruptRecord(resource, r, kind);
    });
    const total = { published: 0, deadLettered: 0 };
    for (let i = 0; i < served.length; i += PAGE) {
      const result = await publisher.publishPage({
        resource,
        records: served.slice(i, i + PAGE),
        lineage: {
          runId: 'sim-run',
          sliceId: `page-${i / PAGE}`,
          sourceOperation: RESOURCE_INFO[resource].listProcedure,
          fetchedAt: sim.now(),
        },
      });
      total.published += result.published;
      total.deadLettered += result.deadLettered;
    }
    counts.set(resource, total);
  }
}, 300_000);

afterAll(async () => {
  await sink?.disconnect();
  await sim?.close();
  await services.cleanup();
});

describe('simulator records through the real registry and Kafka', () => {
  it.each(RESOURCES)(
    '%s: every clean record decodes to the ground truth; none lost, none extra',
    async (resource) => {
      const malformed = new Set(sim.malformed(resource).map((m) => m._id));
      const truth = new Map(
        sim
          .truth(resource)
          .filter((r) => !malformed.has(r['_id'] as string))
          .map((r) => [r['_id'] as string, r]),
      );
      expect(truth.size).toBeGreaterThan(0);
      expect(counts.get(resource)?.published).toBe(truth.size);
      const messages = await consumeAll(topicName(prefix, resource), truth.size);
      expect(messages).toHaveLength(truth.size);
      const decoder = createRecordDecoder({
        registry: createRegistryClient({ url: services.urls.schemaRegistryUrl }),
        topicPrefix: prefix,
      });
      const model = RESOURCE_INFO[resource].model;
      for (const message of messages) {
        const id = message.key?.toString('utf8') ?? '';
        const original = truth.get(id);
        if (original === undefined || message.value === null)
          throw new Error(`unexpected or duplicate message ${id}`);
        const { record } = await decoder.decode(resource, message.value);
        expect(record).toStrictEqual(canonicalRecord(model, original));
        truth.delete(id);
      }
      expect(truth.size).toBe(0);
    },
  );

  it.each(RESOURCES)(
    '%s: every malformed record is in the DLQ with the injected kind as its reason',
    async (resource) => {
      const injected = sim.malformed(resource);
      expect(counts.get(resource)?.deadLettered).toBe(injected.length);
      const messages = await consumeAll(dlqTopicName(topicName(prefix, resource)), injected.length);
      const byReason = (list: string[]) => list.sort().join(',');
      expect(byReason(messages.map((m) => header(m.headers, HEADER.errorReason) ?? '?'))).toBe(
        byReason(injected.map((m) => m.kind)),
      );
      const kindById = new Map(injected.map((m) => [m._id, m.kind]));
      for (const message of messages) {
        const original = JSON.parse(message.value?.toString('utf8') ?? 'null') as Record<string, unknown>;
        const reason = header(message.headers, HEADER.errorReason);
        if (reason === 'missing-id') {
          expect(message.key).toBeNull();
          expect(original['_id']).toBeUndefined();
        } else {
          expect(kindById.get(message.key?.toString('utf8') ?? '')).toBe(reason);
        }
        expect(header(message.headers, HEADER.sourceOperation)).toBe(RESOURCE_INFO[resource].listProcedure);
        expect(header(message.headers, HEADER.sliceId)).toMatch(/^page-\d+$/);
      }
    },
  );
});
