/**
 * kafkajs 2.2.4 groups a produce call's messages by partition with `[...current, message]` for every message
 * (`producer/groupMessagesPerPartition.js`): the array of a partition is copied once per message, so a request of n
 * messages for one partition costs n²/2 copies and as many short-lived arrays. A transaction's produce request holds
 * up to `maxBatchBytes` of one partition (~2,500 records of ~400 bytes), and the worker's allocation profile showed
 * that grouping as the largest single source of garbage (17 % of all bytes allocated).
 *
 * `groupMessagesPerPartition` returns the same object (partition -> its messages, in order) in one pass.
 * `installMessageGrouping()` puts it in the module cache in place of kafkajs' before kafkajs' producer loads (it
 * takes the function when `producer/sendMessages.js` is first required, i.e. when kafkajs itself is); it must run
 * before `require('kafkajs')`, which is why `createKafkaClient` installs the patches (`index.ts`) before it
 * loads kafkajs (`loadKafkajs`, the one module that does).
 */
import { replaceKafkajsModule } from './patch-kafkajs.js';

type Partitioner = (args: { topic: string; partitionMetadata: unknown[]; message: unknown }) => number;
export interface GroupingInput {
  topic: string;
  partitionMetadata: unknown[];
  messages: readonly unknown[];
  partitioner: Partitioner;
}
type Grouping = (input: GroupingInput) => Record<number, unknown[]>;

/** kafkajs' grouping, linear: partition -> its messages in their order (`{}` when the topic has no metadata). */
export function groupMessagesPerPartition({
  topic,
  partitionMetadata,
  messages,
  partitioner,
}: GroupingInput): Record<number, unknown[]> {
  const result: Record<number, unknown[]> = {};
  if (partitionMetadata.length === 0) return result;
  for (const message of messages) {
    const partition = partitioner({ topic, partitionMetadata, message });
    const current = result[partition];
    if (current === undefined) result[partition] = [message];
    else current.push(message);
  }
  return result;
}

/**
 * Installs {@link groupMessagesPerPartition} in this process's kafkajs (idempotent). Returns false when kafkajs'
 * producer was loaded before (it keeps kafkajs' grouping: the same result, quadratic).
 */
export function installMessageGrouping(): boolean {
  return replaceKafkajsModule<Grouping>(
    'kafkajs/src/producer/groupMessagesPerPartition.js',
    'kafkajs/src/producer/sendMessages.js',
    'gamedata.kafkaMessageGrouping',
    () => (input: GroupingInput) => groupMessagesPerPartition(input),
  );
}
