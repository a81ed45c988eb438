import { describe, expect, it } from 'vitest';
import { chunkBySize, toWire } from '../../../../../src/output/kafka/producer/wire-format.js';
import { createKafkaSink } from '../../../../../src/output/kafka/producer/kafka-sink.js';
import type { SinkKafkaClient } from '../../../../../src/output/kafka/kafka-client.js';
import type { SinkMessage } from '../../../../../src/output/kafka/producer/wire-format.js';
import { ConfigError } from '../../../../../src/foundation/errors/index.js';

const msg = (key: string, bytes: number): SinkMessage => ({ key, value: Buffer.alloc(bytes), headers: {} });

describe('chunkBySize', () => {
  it('keeps order and splits before the size would pass the limit; a larger message goes alone', () => {
    const chunks = chunkBySize([msg('a', 40), msg('b', 50), msg('c', 20), msg('d', 500), msg('e', 5)], 100);
    expect(chunks.map((c) => c.map((m) => m.key))).toEqual([['a', 'b'], ['c'], ['d'], ['e']]);
  });

  it('counts keys and headers too', () => {
    const withHeaders: SinkMessage = { key: 'kkkk', value: 'v', headers: { header: 'x'.repeat(90) } };
    expect(chunkBySize([withHeaders, withHeaders], 150)).toHaveLength(2);
    expect(chunkBySize([], 10)).toEqual([]);
  });
});

describe('createKafkaSink options', () => {
  it('names a bad option', () => {
    expect(() => createKafkaSink({ brokers: [] })).toThrow(ConfigError);
    expect(() => createKafkaSink({ brokers: ['localhost'] })).toThrow(/host:port/);
    expect(() => createKafkaSink({ brokers: ['a:1'], maxBatchBytes: -1 })).toThrow(
      /maxBatchBytes must be a non-negative integer, got -1/,
    );
  });
});

describe('toKafkaError', () => {
  it("says what to do about a missing topic, and keeps kafkajs's retriable flag", async () => {
    const { toKafkaError } = await import('../../../../../src/output/kafka/kafka-error.js');
    // Decided by kafkajs's protocol `type` (issue 48), as a KafkaJSProtocolError carries it.
    const e = toKafkaError(
      {
        message: 'This server does not host this topic-partition',
        type: 'UNKNOWN_TOPIC_OR_PARTITION',
        retriable: false,
      },
      ['b:1'],
      'sending 2 message(s) to x',
    );
    expect(e.message).toBe(
      'Kafka failed while sending 2 message(s) to x: This server does not host this topic-partition (does the topic exist? run `gamedata topics create`)',
    );
    expect(e.retriable).toBe(false);
    expect(
      toKafkaError(
        Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }),
        ['127.0.0.1:1'],
        'connecting',
      ).retriable,
    ).toBe(true);
  });

  it('keeps a retriable error retriable after kafkajs spent its own retries on it', async () => {
    const { toKafkaError } = await import('../../../../../src/output/kafka/kafka-error.js');
    const { createRequire } = await import('node:module');
    const require = createRequire(import.meta.url);
    const { KafkaJSNumberOfRetriesExceeded, KafkaJSProtocolError } = require('kafkajs/src/errors') as {
      KafkaJSNumberOfRetriesExceeded: new (e: Error, o: { retryCount: number; retryTime: number }) => Error;
      KafkaJSProtocolError: new (e: {
        message: string;
        type: string;
        code: number;
        retriable: boolean;
      }) => Error;
    };
    const concurrent = new KafkaJSProtocolError({
      message:
        'The producer attempted to update a transaction while another concurrent operation on the same transaction was ongoing',
      type: 'CONCURRENT_TRANSACTIONS',
      code: 51,
      retriable: true,
    });
    const spent = new KafkaJSNumberOfRetriesExceeded(concurrent, { retryCount: 5, retryTime: 300 });
    expect((spent as { retriable?: boolean }).retriable).toBe(false); // what kafkajs says
    expect(toKafkaError(spent, ['b:1'], 'fencing t').retriable).toBe(true);
    // A non-retriable cause stays non-retriable.
    const fatal = new KafkaJSNumberOfRetriesExceeded(
      new KafkaJSProtocolError({ message: 'bad', type: 'INVALID_REQUEST', code: 42, retriable: false }),
      { retryCount: 5, retryTime: 300 },
    );
    expect(toKafkaError(fatal, ['b:1'], 'x').retriable).toBe(false);
  });

  it('keeps "Failed to find group coordinator" retriable (a coordinator being elected after a broker restart)', async () => {
    const { toKafkaError } = await import('../../../../../src/output/kafka/kafka-error.js');
    const { createRequire } = await import('node:module');
    const require = createRequire(import.meta.url);
    const { KafkaJSGroupCoordinatorNotFound, KafkaJSNonRetriableError } = require('kafkajs/src/errors') as {
      KafkaJSGroupCoordinatorNotFound: new (message: string) => Error;
      KafkaJSNonRetriableError: new (e: Error, o: { cause: Error }) => Error;
    };
    const notFound = new KafkaJSGroupCoordinatorNotFound('Failed to find group coordinator');
    expect((notFound as { retriable?: boolean }).retriable).toBe(false); // what kafkajs says
    // as kafkajs' retry loop hands it on (wrapped), and bare
    const wrapped = new KafkaJSNonRetriableError(notFound, { cause: notFound });
    for (const error of [wrapped, notFound]) {
      const e = toKafkaError(error, ['b:1'], 'committing a transaction');
      expect(e.retriable).toBe(true);
      expect(e.message).toContain('Failed to find group coordinator');
    }
    // another non-retriable kafkajs error stays so
    expect(
      toKafkaError(new KafkaJSNonRetriableError(new Error('x'), { cause: new Error('x') }), ['b:1'], 'y')
        .retriable,
    ).toBe(false);
  });
});

describe('toWire', () => {
  it('gives kafkajs the same record bytes and partition as the string form, with one header Buffer set per headers object', async () => {
    const { createRequire } = await import('node:module');
    const require = createRequire(import.meta.url);
    const encodeRecord = require('kafkajs/src/protocol/recordBatch/record/v0') as (r: object) => {
      buffer: Buffer;
    };
    const murmur2 = require('kafkajs/src/producer/partitioners/default/murmur2') as (key: unknown) => number;
    const headers = { 'gamedata.run.id': 'run-ü', 'gamedata.fetched.at': '2026-11-22T00:00:00.000Z' };
    const messages: SinkMessage[] = [
      { key: '65f0c0ffee0000000000abcd', value: Buffer.from([0, 0, 0, 0, 1, 42]), headers },
      { key: 'clé-ü', value: 'text', headers },
      { key: null, value: Buffer.alloc(3) },
    ];
    const wire = toWire();
    const out = messages.map(wire);
    expect(out[0]?.headers).toBe(out[1]?.headers);
    messages.forEach((m, i) => {
      const w = out[i]!;
      const plain = encodeRecord({ key: m.key, value: m.value, headers: m.headers ?? {} }).buffer;
      expect(encodeRecord(w).buffer.equals(plain)).toBe(true);
      if (m.key !== null) expect(murmur2(w.key)).toBe(murmur2(m.key));
    });
  });
});

describe('createKafkaSink when a leader moves during a send (kafkajs skips partitions: the chaos run lost records)', () => {
  /**
   * A fake kafkajs client whose producer runs kafkajs's OWN sendMessages over a fake cluster of three brokers
   * (partition p led by broker p + 1). Broker 2 is stopping: it answers NOT_LEADER_FOR_PARTITION, and the metadata
   * refresh that follows moves its partition 1 to broker 1.
   */
  async function stoppingBrokerKafka() {
    const { createRequire } = await import('node:module');
    const require = createRequire(import.meta.url);
    type SendMessages = (o: object) => (r: object) => Promise<{ topicName: string; partition: number }[]>;
    const sendMessages = require('kafkajs/src/producer/sendMessages') as SendMessages;
    const createRetry = require('kafkajs/src/retry') as (o: object) => unknown;
    const { createErrorFromCode } = require('kafkajs/src/protocol/error') as {
      createErrorFromCode: (code: number) => Error;
    };
    const { Partitioners } = await import('kafkajs');
    const delivered: { key: string; partition: number }[] = [];
    let leaders: Record<number, number> = { 0: 1, 1: 2, 2: 3 };
    const broker = (nodeId: number) => ({
      nodeId,
      produce: ({
        topicData,
      }: {
        topicData: { topic: string; partitions: { partition: number; messages: { key: Buffer }[] }[] }[];
      }) => {
        if (nodeId === 2) return Promise.reject(createErrorFromCode(6)); // NOT_LEADER_FOR_PARTITION
        for (const t of topicData)
          for (const p of t.partitions)
            for (const m of p.messages) delivered.push({ key: m.key.toString(), partition: p.partition });
        return Promise.resolve({
          topics: topicData.map((t) => ({
            topicName: t.topic,
            partitions: t.partitions.map((p) => ({ partition: p.partition, errorCode: 0, baseOffset: '0' })),
          })),
        });
      },
    });
    const brokers: Record<number, ReturnType<typeof broker>> = { 1: broker(1), 2: broker(2), 3: broker(3) };
    const cluster = {
      refreshMetadataIfNecessary: () => Promise.resolve(),
      addMultipleTargetTopics: () => Promise.resolve(),
      isConnected: () => true,
      refreshMetadata: () => {
        leaders = { 0: 1, 1: 1, 2: 3 };
        return Promise.resolve();
      },
      removeBroker: () => undefined,
      findTopicPartitionMetadata: () => [0, 1, 2].map((p) => ({ partitionId: p, leader: leaders[p] })),
      findLeaderForPartitions: (_topic: string, partitions: string[]) => {
        const out: Record<number, number[]> = {};
        for (const p of partitions) (out[leaders[Number(p)] ?? -1] ??= []).push(Number(p));
        return out;
      },
      findBroker: ({ nodeId }: { nodeId: number }) => Promise.resolve(brokers[nodeId]),
    };
    const eosManager = {
      acquireBrokerLock: () => Promise.resolve(),
      releaseBrokerLock: () => Promise.resolve(),
      isTransactional: () => false,
      getSequence: () => 0,
      updateSequence: () => undefined,
      getProducerId: () => -1,
      getProducerEpoch: () => 0,
      getTransactionalId: () => undefined,
    };
    const quiet = {
      debug: () => undefined,
      error: () => undefined,
      warn: () => undefined,
      info: () => undefined,
    };
    const send = sendMessages({
      logger: quiet,
      cluster,
      partitioner: Partitioners.DefaultPartitioner(),
      eosManager,
      retrier: createRetry({ retries: 5, initialRetryTime: 1, maxRetryTime: 5 }),
    });
    const kafka = {
      producer: () => ({
        connect: () => Promise.resolve(),
        disconnect: () => Promise.resolve(),
        send: ({
          topic,
          messages,
          acks,
          timeout,
        }: {
          topic: string;
          messages: object[];
          acks: number;
          timeout: number;
        }) => send({ acks, timeout, topicMessages: [{ topic, messages }] }),
      }),
      admin: () => ({
        connect: () => Promise.resolve(),
        disconnect: () => Promise.resolve(),
        fetchTopicMetadata: ({ topics }: { topics: string[] }) =>
          Promise.resolve({
            topics: topics.map((name) => ({ name, partitions: [0, 1, 2].map((p) => ({ partitionId: p })) })),
          }),
      }),
    };
    return {
      kafka: kafka as unknown as SinkKafkaClient,
      delivered,
    };
  }

  it('delivers every message, each to the partition of its key, or rejects (never resolves with some missing)', async () => {
    const { kafka, delivered } = await stoppingBrokerKafka();
    const { partitionForKey } = await import('../../../../../src/output/kafka/producer/partitioner.js');
    const sink = createKafkaSink({ brokers: ['b:1'] }, { kafka });
    await sink.connect();
    const messages = Array.from({ length: 30 }, (_, i): SinkMessage => ({ key: `k${i}`, value: 'v' }));
    // Every partition gets some: the send spans the three brokers, as a page of 100 records does.
    expect(new Set(messages.map((m) => partitionForKey(m.key, 3, 0)))).toEqual(new Set([0, 1, 2]));
    await sink.send('t', messages);
    expect(delivered.map((d) => d.key).sort()).toEqual(messages.map((m) => m.key as string).sort());
    for (const d of delivered) expect(d.partition).toBe(partitionForKey(d.key, 3, 0));
    await sink.disconnect();
  });
});

describe('partitionForKey', () => {
  it("puts every key where kafkajs' default partitioner does", async () => {
    const fc = await import('fast-check');
    const { Partitioners } = await import('kafkajs');
    const { partitionForKey } = await import('../../../../../src/output/kafka/producer/partitioner.js');
    const reference = Partitioners.DefaultPartitioner();
    fc.assert(
      fc.property(fc.string({ minLength: 0, maxLength: 40 }), fc.integer({ min: 1, max: 64 }), (key, n) => {
        const expected = reference({
          topic: 't',
          partitionMetadata: Array.from({ length: n }, (_, i) => ({
            partitionId: i,
            leader: 0,
            replicas: [0],
            isr: [0],
            partitionErrorCode: 0,
          })),
          message: { key, value: null },
        });
        expect(partitionForKey(key, n, 0)).toBe(expected);
      }),
      { numRuns: 2000 },
    );
  });
});
