// The producer interface on the real broker: send resolves after acks=all with the messages readable, keys and
// headers intact; an unreachable broker or registry gives a clear, retriable ServiceError, and a page whose registry
// is down is not dead-lettered (nothing is sent at all).
import { afterAll, describe, expect, it } from 'vitest';
import { createTestServices } from '../../../helpers/services.js';
import { createKafkaSink } from '../../../../src/output/kafka/index.js';
import { createPagePublisher } from '../../../../src/pipeline/publish/index.js';
import { createRecordEncoder, createRegistryClient } from '../../../../src/output/encoding/index.js';
import { ServiceError } from '../../../../src/foundation/errors/index.js';

const services = createTestServices('kafka-sink');
afterAll(() => services.cleanup());

describe('createKafkaSink on the real broker', () => {
  it('resolves send after the acks; the messages are there with key, value and headers', async () => {
    const topic = services.name('sink');
    const admin = await services.admin();
    await admin.createTopics({ topics: [{ topic, numPartitions: 2 }], waitForLeaders: true });
    const sink = createKafkaSink({ brokers: services.urls.kafkaBrokers });
    await sink.connect();
    await sink.send(topic, [
      { key: 'k1', value: Buffer.from([0, 1, 2]), headers: { h: 'one' } },
      { key: 'k2', value: 'text', headers: {} },
      { key: null, value: 'no key' },
    ]);
    await sink.send(topic, []); // no-op
    // Acknowledged = already in the log: the end offsets count all three without waiting.
    const offsets = await admin.fetchTopicOffsets(topic);
    expect(offsets.reduce((sum, p) => sum + Number(p.high), 0)).toBe(3);
    await sink.disconnect();
    await sink.disconnect(); // twice is harmless

    const consumer = await services.consumer();
    await consumer.subscribe({ topic, fromBeginning: true });
    const got = new Map<string, { value: string; h: string | undefined }>();
    await new Promise<void>((resolve) => {
      void consumer.run({
        eachMessage: ({ message }) => {
          got.set(message.key?.toString() ?? '(null)', {
            value: message.value?.toString('hex') ?? '',
            h: message.headers?.['h']?.toString(),
          });
          if (got.size === 3) resolve();
          return Promise.resolve();
        },
      });
    });
    await consumer.stop();
    expect(got.get('k1')).toEqual({ value: '000102', h: 'one' });
    expect(got.get('k2')?.value).toBe(Buffer.from('text').toString('hex'));
    expect(got.has('(null)')).toBe(true);
  });

  it("splits a send of large messages so no request passes the topic's max.message.bytes", async () => {
    const topic = services.name('large');
    const admin = await services.admin();
    await admin.createTopics({
      topics: [{ topic, numPartitions: 1, configEntries: [{ name: 'max.message.bytes', value: '1048588' }] }],
      waitForLeaders: true,
    });
    const sink = createKafkaSink({ brokers: services.urls.kafkaBrokers });
    await sink.connect();
    // 3 x 600 kB = 1.8 MB: one request would be refused (RecordBatchTooLarge); three requests are not.
    await sink.send(
      topic,
      ['a', 'b', 'c'].map((key) => ({ key, value: Buffer.alloc(600_000, key) })),
    );
    await sink.disconnect();
    const offsets = await admin.fetchTopicOffsets(topic);
    expect(offsets[0]?.high).toBe('3');
  });

  it('reports an unreachable broker as a retriable ServiceError naming the brokers', async () => {
    const sink = createKafkaSink({ brokers: ['127.0.0.1:1'], retries: 0, connectionTimeoutMs: 500 });
    const error = await sink.connect().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ServiceError);
    expect((error as ServiceError).message).toMatch(/Kafka unreachable at 127\.0\.0\.1:1/);
    expect((error as ServiceError).retriable).toBe(true);
    await expect(sink.send('t', [{ key: 'a', value: 'b' }])).rejects.toThrow(/before connect/);
  });

  it('fails a page whose registry is unreachable without dead-lettering anything', async () => {
    const sent: string[] = [];
    const sink = {
      connect: () => Promise.resolve(),
      disconnect: () => Promise.resolve(),
      send: (topic: string, m: readonly unknown[]) => (m.length > 0 && sent.push(topic), Promise.resolve()),
    };
    const encoder = createRecordEncoder({
      registry: createRegistryClient({ url: 'http://127.0.0.1:1/apis/ccompat/v7', maxRetries: 0 }),
      topicPrefix: services.prefix,
    });
    const error = await createPagePublisher({ sink, encoder })
      .publishPage({
        resource: 'donations',
        records: [{ _id: 'a' }, { bad: true }],
        lineage: { runId: 'r', sliceId: 's', sourceOperation: 'o', fetchedAt: 0 },
      })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(ServiceError);
    expect((error as ServiceError).service).toBe('schema-registry');
    expect((error as ServiceError).retriable).toBe(true);
    // The address only (issue 34: errors name host:port, never a URL that could carry credentials).
    expect((error as ServiceError).message).toMatch(/schema registry unreachable at 127\.0\.0\.1:1 /);
    expect(sent).toEqual([]);
  });
});
