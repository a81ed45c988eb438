/**
 * The produce requests of one exactly-once transaction (`transactional-slice-publisher.ts`): one partition per
 * request, size-bounded, the checkpoint last.
 */
import { chunkBySize } from '../producer/wire-format.js';
import type { SinkMessage } from '../producer/wire-format.js';

/** One page for the open transaction: the good records and the dead letters. */
export interface TransactionalPage {
  topic: string;
  records: readonly SinkMessage[];
  dlqTopic: string;
  deadLetters: readonly SinkMessage[];
}

/** A slice's checkpoint record and its partition of the checkpoint topic. */
export interface CheckpointMessage {
  topic: string;
  partition: number;
  message: SinkMessage;
}

/** One slice's commit: its pages and its checkpoint, for a producer's next transaction. */
export interface SliceCommit {
  sliceKey: string;
  seq: number;
  pages: readonly TransactionalPage[];
  checkpoint: CheckpointMessage;
}

/** One produce request of a transaction: ONE partition's messages. */
export interface TransactionRequest {
  topic: string;
  partition: number;
  messages: SinkMessage[];
}

/**
 * The produce requests of one transaction, in order: one (topic, partition) per request, size-bounded, the
 * checkpoint last (its answer gives the checkpoint's offset). Never two partitions in one request: kafkajs 2.2.4
 * sends a multi-partition request as one produce per leader broker, and when one of them fails (retriable, e.g.
 * CONCURRENT_TRANSACTIONS while adding a partition right after the previous commit) it retries after 10 ms every
 * broker that has not answered YET, including one whose produce is still in flight, with the next sequence numbers:
 * the broker appends both, and the transaction commits the page twice (the chaos run's duplicates: one slice, one
 * producer epoch, the same page in two batches of one transaction, sequences 5-10 and 11-16, 24 ms apart). With one
 * partition per request no other produce of the call is in flight when kafkajs retries, and a retry reuses its
 * sequence numbers, which the broker deduplicates. Several partitions per request measured 6 % faster on the medium
 * workload and was not taken (docs/benchmarks/diary.md, 2026-11-26 midday): even with every in-flight request awaited
 * before a retry, kafkajs keeps answers per broker, so a partition that succeeded on its old leader and moved goes to
 * its new leader again with the next sequence numbers.
 */
export function transactionRequests(
  pages: readonly TransactionalPage[],
  checkpoint: CheckpointMessage | readonly CheckpointMessage[],
  partitionFor: (topic: string, message: SinkMessage) => number,
  maxBytes: number,
): TransactionRequest[] {
  const byPartition = new Map<string, { topic: string; partition: number; messages: SinkMessage[] }>();
  for (const page of pages)
    for (const [topic, messages] of [
      [page.topic, page.records],
      [page.dlqTopic, page.deadLetters],
    ] as const)
      for (const m of messages) {
        const partition = partitionFor(topic, m);
        const id = `${topic}#${partition}`;
        const entry = byPartition.get(id) ?? { topic, partition, messages: [] };
        entry.messages.push(m);
        byPartition.set(id, entry);
      }
  const out: TransactionRequest[] = [];
  for (const { topic, partition, messages } of byPartition.values())
    for (const chunk of chunkBySize(messages, maxBytes)) out.push({ topic, partition, messages: chunk });
  // The checkpoints last, one request per checkpoint partition (several slices' checkpoints in a shared
  // transaction); a checkpoint's offset is its request's base offset plus its place in it.
  const checkpoints = new Map<string, TransactionRequest>();
  const list: readonly CheckpointMessage[] = Array.isArray(checkpoint)
    ? (checkpoint as readonly CheckpointMessage[])
    : [checkpoint as CheckpointMessage];
  for (const c of list) {
    const id = `${c.topic}#${c.partition}`;
    const entry = checkpoints.get(id) ?? { topic: c.topic, partition: c.partition, messages: [] };
    entry.messages.push(c.message);
    checkpoints.set(id, entry);
  }
  out.push(...checkpoints.values());
  return out;
}
