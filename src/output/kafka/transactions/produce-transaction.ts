/**
 * The produce half of one shared transaction: the commits' pages and checkpoints as produce requests (one partition
 * per request, `transaction-requests.ts`), their partitions announced to the AddPartitionsToTxn patch, sent one after
 * the other (each resolves after acks=all), and the offset each checkpoint got. The commit itself (EndTxn) is the
 * pool's.
 */
import type { Transaction } from 'kafkajs';
import { ServiceError } from '../../../foundation/errors/index.js';
import type { TransactionPartitions } from '../kafkajs-patches/transaction-partitions.js';
import { toWire } from '../producer/wire-format.js';
import type { SinkMessage } from '../producer/wire-format.js';
import { transactionRequests } from './transaction-requests.js';
import type { SliceCommit } from './transaction-requests.js';

/** What producing needs from the pool's options. */
export interface ProduceOptions {
  requestTimeoutMs: number;
  maxBatchBytes: number;
  partitionsOf: (topic: string) => Promise<number>;
  partitionFor: (topic: string, message: SinkMessage, partitions: number) => number;
  transactionPartitions: TransactionPartitions;
}

/** Where a checkpoint record landed. */
export type CheckpointOffsets = Map<SinkMessage, { partition: number; offset: string }>;

/**
 * Sends every request of the commits in `txn` (transactional.id `transactionalId`).
 * @returns the offset of each checkpoint message the answers gave one for
 * @throws ServiceError (retriable) when an answer lacks a request's partition (nothing may be committed then)
 */
export async function produceTransaction(
  txn: Transaction,
  transactionalId: string,
  commits: readonly SliceCommit[],
  o: ProduceOptions,
): Promise<CheckpointOffsets> {
  const pages = commits.flatMap((c) => c.pages);
  const counts = new Map<string, number>();
  for (const page of pages)
    for (const topic of [page.topic, page.dlqTopic])
      if (topic !== '' && !counts.has(topic)) counts.set(topic, await o.partitionsOf(topic));
  const requests = transactionRequests(
    pages,
    commits.map((c) => c.checkpoint),
    (topic, message) => o.partitionFor(topic, message, counts.get(topic) ?? 1),
    o.maxBatchBytes,
  );
  // Every partition of the transaction added with its first send's AddPartitionsToTxn (transaction-partitions.ts).
  o.transactionPartitions.announce(transactionalId, requests);
  const offsets: CheckpointOffsets = new Map();
  const checkpointTopic = commits[0]?.checkpoint.topic;
  const wire = toWire();
  for (const r of requests) {
    const answers = await txn.sendBatch({
      acks: -1,
      timeout: o.requestTimeoutMs,
      topicMessages: [{ topic: r.topic, messages: r.messages.map((m) => wire(m, r.partition)) }],
    });
    // kafkajs 2.2.4 can resolve a send that skipped a partition whose leader moved to a broker that had already
    // answered (see producer/kafka-sink.ts); committing then would lose its records, so the transaction aborts.
    const answer = answers.find((a) => a.topicName === r.topic && a.partition === r.partition);
    if (answer === undefined)
      throw new ServiceError(
        `Kafka did not acknowledge ${r.topic}#${r.partition} (a leader moved during the send)`,
        'kafka',
        { retriable: true },
      );
    // The checkpoints' offsets (a later recovery read may start there): the request's base offset plus the
    // checkpoint's place in it.
    if (answer.baseOffset !== undefined && r.topic === checkpointTopic) {
      const base = BigInt(answer.baseOffset);
      r.messages.forEach((m, i) =>
        offsets.set(m, { partition: r.partition, offset: (base + BigInt(i)).toString() }),
      );
    }
  }
  return offsets;
}
