import { MockClient } from '@confluentinc/schemaregistry';
import { beforeAll, describe, expect, it } from 'vitest';
import { createPagePublisher } from '../../../../src/pipeline/publish/publish-page.js';
import type { KafkaSink } from '../../../../src/output/kafka/producer/kafka-sink.js';
import type { SinkMessage } from '../../../../src/output/kafka/producer/wire-format.js';
import { createRecordEncoder } from '../../../../src/output/encoding/record-encoder.js';
import { registerSchemas } from '../../../../src/output/encoding/schema-registration.js';
import { generateResourceSchemas } from '../../../../src/output/encoding/avro-schema.js';
import { HEADER } from '../../../../src/pipeline/publish/dead-letter.js';
import { ServiceError } from '../../../../src/foundation/errors/index.js';

/** A recording sink: what was sent where, in order. */
function recordingSink(): KafkaSink & { sent: { topic: string; messages: readonly SinkMessage[] }[] } {
  const sent: { topic: string; messages: readonly SinkMessage[] }[] = [];
  return {
    sent,
    connect: () => Promise.resolve(),
    disconnect: () => Promise.resolve(),
    send: (topic, messages) => {
      if (messages.length > 0) sent.push({ topic, messages });
      return Promise.resolve();
    },
  };
}

const registry = new MockClient({ baseURLs: ['mock://'] });
beforeAll(async () => {
  await registerSchemas({ registry, schemas: generateResourceSchemas(), topicPrefix: 'pp' });
});
const lineage = {
  runId: 'r1',
  sliceId: 's1',
  sourceOperation: 'donation.getManyPaginated',
  fetchedAt: 1_700_000_000_000,
};

describe('publishPage', () => {
  it('publishes good records keyed by _id with lineage, dead-letters the bad ones, and counts both', async () => {
    const sink = recordingSink();
    const publisher = createPagePublisher({
      sink,
      encoder: createRecordEncoder({ registry, topicPrefix: 'pp' }),
    });
    const records = [
      { _id: 'd1', amount: 5 },
      { amount: 3 },
      { _id: 'd3', createdAt: 'tomorrow-ish' },
      { _id: 'd4', amount: 'lots' },
      { _id: 'd5', amount: 7, createdAt: '2024-01-01T00:00:00.000Z' },
    ];
    const result = await publisher.publishPage({ resource: 'donations', records, lineage });
    expect([result.published, result.deadLettered]).toEqual([2, 3]);
    expect(result.deadLetters.map((d) => [d.index, d.id, d.reason, d.path])).toEqual([
      [1, null, 'missing-id', '_id'],
      [2, 'd3', 'invalid-date', 'createdAt'],
      [3, 'd4', 'wrong-type', 'amount'],
    ]);
    const byTopic = Object.fromEntries(sink.sent.map((s) => [s.topic, s.messages]));
    expect(byTopic['pp.donations']?.map((m) => m.key)).toEqual(['d1', 'd5']);
    expect(byTopic['pp.donations']?.[0]?.headers).toEqual({
      [HEADER.runId]: 'r1',
      [HEADER.sliceId]: 's1',
      [HEADER.sourceOperation]: 'donation.getManyPaginated',
      [HEADER.fetchedAt]: '2023-11-14T22:13:20.000Z',
    });
    const dlq = byTopic['pp.donations.dlq'] ?? [];
    expect(dlq.map((m) => m.headers?.[HEADER.errorReason])).toEqual([
      'missing-id',
      'invalid-date',
      'wrong-type',
    ]);
    expect(JSON.parse(String(dlq[2]?.value))).toEqual(records[3]);
  });

  it('fails the whole page (sends nothing) when the registry cannot serve the subject', async () => {
    const sink = recordingSink();
    const publisher = createPagePublisher({
      sink,
      encoder: createRecordEncoder({ registry, topicPrefix: 'missing' }),
    });
    await expect(
      publisher.publishPage({ resource: 'donations', records: [{ _id: 'a' }, { nope: 1 }], lineage }),
    ).rejects.toBeInstanceOf(ServiceError);
    expect(sink.sent).toEqual([]);
  });

  it('resolves only after the sink acknowledged', async () => {
    let release: () => void = () => undefined;
    const sink: KafkaSink = {
      connect: () => Promise.resolve(),
      disconnect: () => Promise.resolve(),
      send: (_t, messages) =>
        messages.length === 0 ? Promise.resolve() : new Promise<void>((r) => (release = r)),
    };
    const publisher = createPagePublisher({
      sink,
      encoder: createRecordEncoder({ registry, topicPrefix: 'pp' }),
    });
    let done = false;
    const pending = publisher
      .publishPage({ resource: 'donations', records: [{ _id: 'x' }], lineage })
      .then(() => (done = true));
    await new Promise((r) => setTimeout(r, 50));
    expect(done).toBe(false);
    release();
    await pending;
    expect(done).toBe(true);
  });
});
