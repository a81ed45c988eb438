/**
 * The project's patches of kafkajs 2.2.4 (pinned exactly while they stand), as one set: `installKafkajsPatches()`
 * installs all seven, each once per process, and `createKafkaClient` calls it before it loads kafkajs (nothing installs
 * on import). Each patch changes kafkajs process-wide; what each fixes, the test that shows the bug and how to drop it
 * are in docs/ARCHITECTURE.md ("kafkajs patches").
 *
 * - `request-queue-timer.ts`: no 1 ms timer per idle broker connection.
 * - `record-encoding.ts`: a record encoded into one buffer (module cache, before the produce encoder loads).
 * - `message-grouping.ts`: messages grouped per partition in one pass (module cache, before kafkajs loads).
 * - `crc32c.ts`: record batches checksummed eight bytes a step (module cache, before the batch encoder loads).
 * - `read-committed-filter.ts`: aborted records filtered as Kafka's Java consumer does.
 * - `coordinator-cache.ts`: the transaction coordinator looked up once a second, not before every request.
 * - `transaction-partitions.ts`: a transaction's partitions added with its first AddPartitionsToTxn.
 */
import { installTransactionCoordinatorCache } from './coordinator-cache.js';
import { installCrc32c } from './crc32c.js';
import { installMessageGrouping } from './message-grouping.js';
import { installReadCommittedFilter } from './read-committed-filter.js';
import { installRecordEncoding } from './record-encoding.js';
import { installRequestQueueTimerFix } from './request-queue-timer.js';
import { installTransactionPartitionsAhead } from './transaction-partitions.js';
import type { TransactionPartitions } from './transaction-partitions.js';

export { KAFKAJS_PATCHED_VERSION } from './patch-kafkajs.js';
export type { TransactionPartitions } from './transaction-partitions.js';

/** What the installed patches give their users. */
export interface KafkajsPatches {
  /** The announcements the AddPartitionsToTxn patch answers from; the producer pool writes them. */
  transactionPartitions: TransactionPartitions;
}

/**
 * Installs every patch in this process's kafkajs (idempotent: a second call installs nothing and returns the same
 * handles). Must run before kafkajs is first loaded for the two module-cache patches to take (`createKafkaClient`
 * calls it first); a process that loaded kafkajs before keeps kafkajs' own modules there (same bytes, slower).
 * @throws KafkajsPatchError when kafkajs lacks a method a patch replaces (a kafkajs other than 2.2.4)
 */
export function installKafkajsPatches(): KafkajsPatches {
  // kafkajs binds its message grouping when it loads (message-grouping.ts): first.
  installMessageGrouping();
  // kafkajs binds its CRC-32C when its record batch loads (with the broker, below): before that.
  installCrc32c();
  // kafkajs keeps a 1 ms timer running on every broker connection (request-queue-timer.ts).
  installRequestQueueTimerFix();
  // kafkajs encodes each record with ~10 allocations; the same bytes in one (record-encoding.ts).
  installRecordEncoding();
  // kafkajs' own read_committed filter passes some aborted records (read-committed-filter.ts).
  installReadCommittedFilter();
  // kafkajs looks the transaction coordinator up before every AddPartitionsToTxn and EndTxn (coordinator-cache.ts).
  installTransactionCoordinatorCache();
  // kafkajs adds a transaction's partitions one produce request at a time; the pool announces them all ahead.
  return { transactionPartitions: installTransactionPartitionsAhead() };
}
