// A transaction's produce requests hold ONE partition each. kafkajs 2.2.4's sendMessages sends a multi-partition
// request as one produce per leader broker; when one fails (retriable) it retries, 10 ms later, every broker that
// has not answered yet, including one whose produce is still in flight, with the NEXT sequence numbers: a broker
// appends both (the chaos run's duplicates: one transaction, one producer epoch, one page in two batches, sequences
// 5-10 and 11-16). Runs kafkajs's own sendMessages over a fake two-broker cluster with real sequence bookkeeping.
import { createRequire } from 'node:module';
import { describe, expect, it, vi } from 'vitest';
import { Partitioners } from 'kafkajs';
import { transactionRequests } from '../../../../../src/output/kafka/transactions/transaction-requests.js';
import type { SinkMessage } from '../../../../../src/output/kafka/producer/wire-format.js';

const require = createRequire(import.meta.url);
type Send = (r: { acks: number; timeout: number; topicMessages: object[] }) => Promise<unknown>;
const sendMessages = require('kafkajs/src/producer/sendMessages') as (o: object) => Send;
const createRetry = require('kafkajs/src/retry') as (o: object) => unknown;
const { createErrorFromCode } = require('kafkajs/src/protocol/error') as {
  createErrorFromCode: (c: number) => Error;
};

/**
 * Partition p is led by broker p + 1. Broker 1 fails its first produce (retriable); broker 2 answers its first produce
 * only once broker 1 was asked again (the retry), so that produce is in flight when kafkajs retries.
 */
function fakeCluster() {
  const appended: { broker: number; partition: number; firstSequence: number; keys: string[] }[] = [];
  let broker1Failed = false;
  let retried: () => void = () => undefined;
  const broker1Retried = new Promise<void>((r) => (retried = r));
  let broker2Calls = 0;
  const broker = (nodeId: number) => ({
    nodeId,
    produce: async ({
      topicData,
    }: {
      topicData: {
        topic: string;
        partitions: { partition: number; firstSequence: number; messages: { key: Buffer }[] }[];
      }[];
    }) => {
      if (nodeId === 1 && !broker1Failed) {
        broker1Failed = true;
        throw createErrorFromCode(7); // REQUEST_TIMED_OUT: retriable
      }
      if (nodeId === 1) retried();
      if (nodeId === 2 && ++broker2Calls === 1) await broker1Retried;
      for (const t of topicData)
        for (const p of t.partitions)
          appended.push({
            broker: nodeId,
            partition: p.partition,
            firstSequence: p.firstSequence,
            keys: p.messages.map((m) => m.key.toString()),
          });
      return {
        topics: topicData.map((t) => ({
          topicName: t.topic,
          partitions: t.partitions.map((p) => ({ partition: p.partition, errorCode: 0, baseOffset: '0' })),
        })),
      };
    },
  });
  const brokers: Record<number, ReturnType<typeof broker>> = { 1: broker(1), 2: broker(2) };
  const cluster = {
    refreshMetadataIfNecessary: () => Promise.resolve(),
    addMultipleTargetTopics: () => Promise.resolve(),
    isConnected: () => true,
    refreshMetadata: () => Promise.resolve(),
    removeBroker: () => undefined,
    findTopicPartitionMetadata: () => [0, 1].map((p) => ({ partitionId: p, leader: p + 1 })),
    findLeaderForPartitions: (_topic: string, partitions: string[]) => {
      const out: Record<number, number[]> = {};
      for (const p of partitions) (out[Number(p) + 1] ??= []).push(Number(p));
      return out;
    },
    findBroker: ({ nodeId }: { nodeId: number }) => Promise.resolve(brokers[nodeId]),
  };
  // kafkajs's sequence bookkeeping: taken before a produce, given back when it fails.
  const sequences = new Map<string, number>();
  const eosManager = {
    acquireBrokerLock: () => Promise.resolve(),
    releaseBrokerLock: () => Promise.resolve(),
    isTransactional: () => false,
    getSequence: (topic: string, partition: number) => sequences.get(`${topic}#${partition}`) ?? 0,
    updateSequence: (topic: string, partition: number, n: number) =>
      sequences.set(`${topic}#${partition}`, (sequences.get(`${topic}#${partition}`) ?? 0) + n),
    getProducerId: () => 7,
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
    retrier: createRetry({ retries: 5, initialRetryTime: 10, maxRetryTime: 50 }),
  });
  return { send, appended };
}

const page = (keys: string[]): SinkMessage[] => keys.map((key) => ({ key, value: `v-${key}`, headers: {} }));
const partitionOfKey = (_topic: string, m: SinkMessage): number => (m.key?.startsWith('a') === true ? 0 : 1);

describe('transactionRequests', () => {
  it('kafkajs alone: a two-partition request whose other broker fails once appends partition 1 twice', async () => {
    const { send, appended } = fakeCluster();
    const messages = [...page(['a1', 'a2']), ...page(['b1', 'b2', 'b3'])].map((m) => ({
      ...m,
      partition: partitionOfKey('t', m),
    }));
    await send({ acks: -1, timeout: 1000, topicMessages: [{ topic: 't', messages }] });
    // The first produce to broker 2 answers after the retry, after send() resolved.
    await vi.waitFor(() => expect(appended.filter((a) => a.partition === 1)).toHaveLength(2));
    const toPartition1 = appended
      .filter((a) => a.partition === 1)
      .sort((x, y) => x.firstSequence - y.firstSequence);
    expect(toPartition1.map((a) => [a.firstSequence, a.keys])).toEqual([
      [0, ['b1', 'b2', 'b3']],
      [3, ['b1', 'b2', 'b3']],
    ]);
  });

  it('one partition per request, checkpoint last: each record is appended once', async () => {
    const requests = transactionRequests(
      [
        { topic: 't', records: page(['a1', 'b1', 'a2', 'b2']), dlqTopic: 't.dlq', deadLetters: page(['b3']) },
        { topic: 't', records: page(['b4']), dlqTopic: 't.dlq', deadLetters: [] },
      ],
      { topic: 'ck', partition: 1, message: { key: 'slice', value: '{}', headers: {} } },
      partitionOfKey,
      1_000_000,
    );
    expect(requests.map((r) => [r.topic, r.partition, r.messages.map((m) => m.key)])).toEqual([
      ['t', 0, ['a1', 'a2']],
      ['t', 1, ['b1', 'b2', 'b4']],
      ['t.dlq', 1, ['b3']],
      ['ck', 1, ['slice']],
    ]);
    const { send, appended } = fakeCluster();
    for (const r of requests)
      await send({
        acks: -1,
        timeout: 1000,
        topicMessages: [
          { topic: r.topic, messages: r.messages.map((m) => ({ ...m, partition: r.partition })) },
        ],
      });
    const keys = appended.flatMap((a) => a.keys).sort();
    expect(keys).toEqual(['a1', 'a2', 'b1', 'b2', 'b3', 'b4', 'slice']);
  });

  it('splits a partition by size, in order', () => {
    const big = (key: string): SinkMessage => ({ key, value: 'x'.repeat(400), headers: {} });
    const requests = transactionRequests(
      [{ topic: 't', records: [big('b1'), big('b2'), big('b3')], dlqTopic: 't.dlq', deadLetters: [] }],
      { topic: 'ck', partition: 0, message: { key: 'slice', value: '{}', headers: {} } },
      () => 1,
      1000,
    );
    expect(requests.map((r) => r.messages.map((m) => m.key))).toEqual([['b1', 'b2'], ['b3'], ['slice']]);
  });
});
