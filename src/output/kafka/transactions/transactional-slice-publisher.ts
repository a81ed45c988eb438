/**
 * Exactly-once publishing of slices for read_committed consumers. One Kafka transaction carries K pages' records,
 * their dead letters and ONE checkpoint record of the slice (compacted `<prefix>.__slices`, key = slice key, value =
 * `{ seq, state }`). All of it commits or none of it does.
 *
 * Producers are pooled (`producer-pool.ts`, the shape of Flink's KafkaSink and Kafka Connect's KIP-618 tasks): a slice
 * borrows a long-lived transactional producer for its run, so its cost is its transactions, and the transactional.ids
 * on the brokers are bounded by processes x pool size. The fence that a transactional.id per slice gave for free is
 * kept by recording owners (`slice-owners.ts`): opening a slice enters the borrowed producer's id under the slice and
 * FENCES every other id recorded there (InitProducerId with that id: whatever it left open is aborted, and its
 * producer's later commit fails with {@link SliceFencedError}). A producer that was fenced or may have left a
 * transaction open is replaced (a new generation), and every session bound to the old generation fails: a zombie
 * commits nothing of a slice that was taken from it. Only after the fence is the checkpoint read
 * (`checkpoint-reader.ts`: read_committed, up to a probe record appended after the fence), so the read is exact and a
 * retry publishes exactly what did not commit.
 *
 * Pages are buffered in memory and sent at `commit()`, so a transaction is open on the broker only for the few
 * milliseconds of its commit (an open transaction holds back every read_committed reader of its partitions).
 *
 * kafkajs pitfalls handled here (measured, see docs/guarantees.md "Exactly-once"):
 * - `producer.connect()` does NOT fence (it sends a non-transactional InitProducerId); `producer.transaction()` does.
 * - kafkajs retries CONCURRENT_TRANSACTIONS (the previous commit's markers still being written) with the producer's
 *   generic backoff; its default 300 ms first retry turns a few-ms window into a 300 ms stall, hence 10 ms here.
 * - kafkajs does not know PRODUCER_FENCED (90); Kafka 4 answers its old request versions with INVALID_PRODUCER_EPOCH.
 * - one partition per produce request (`transaction-requests.ts`): kafkajs 2.2.4 can append a page twice otherwise.
 *
 * The parts: options (`transactional-publisher-options.ts`), the pool (`producer-pool.ts`), fencing
 * (`slice-fencing.ts`), a slice's session (`slice-session.ts`), the checkpoint reader; here they are wired.
 */
import { randomBytes } from 'node:crypto';
import { SliceFencedError } from '../../../foundation/errors/index.js';
import { createKafkaClient } from '../kafka-client.js';
import { toKafkaError } from '../kafka-error.js';
import { installKafkajsPatches } from '../kafkajs-patches/index.js';
import { partitionForKey } from '../producer/partitioner.js';
import { createCheckpointReader } from './checkpoint-reader.js';
import type { CheckpointReader, SliceCheckpoint } from './checkpoint-reader.js';
import { createProducerPool } from './producer-pool.js';
import { createSliceFencing, isFencingError } from './slice-fencing.js';
import { createMemorySliceOwners } from './slice-owners.js';
import { openSliceSession } from './slice-session.js';
import type { OpenSliceOptions, SliceSession } from './slice-session.js';
import { resolvePublisherOptions } from './transactional-publisher-options.js';
import type { TransactionalSlicePublisherOptions } from './transactional-publisher-options.js';

export { CHECKPOINT_PROBE_KEY } from './checkpoint-reader.js';
export type { SliceCheckpoint } from './checkpoint-reader.js';
export type { TransactionalPage } from './transaction-requests.js';
export { isFencingError } from './slice-fencing.js';
export type { OpenSliceOptions, SliceSession } from './slice-session.js';
export { DEFAULT_TRANSACTIONAL_SLICE_PUBLISHER_OPTIONS } from './transactional-publisher-options.js';
export type { TransactionalSlicePublisherOptions } from './transactional-publisher-options.js';

export interface TransactionalSlicePublisher {
  /** Takes a slice: fences every earlier owner, then reads its last committed checkpoint (read_committed). */
  openSlice<S>(sliceKey: string, options?: OpenSliceOptions): Promise<SliceSession<S>>;
  /** Fences a slice's owners without taking the slice (resolving another slice's orphaned dedup locks). */
  fence(sliceKey: string): Promise<void>;
  /**
   * Fences the owners of slices being taken from a dead worker, each id once and none of this publisher's
   * (`SliceFencing.fenceTaken`): its open transaction stops holding back recovery reads at once. The ids fenced.
   */
  fenceTaken(sliceKeys: readonly string[]): Promise<string[]>;
  /**
   * Makes sure the producer `writer` can commit nothing more of the slice: fences it when it is still recorded as an
   * owner of the slice; an id no longer recorded was fenced by a new owner already or left with nothing open. So
   * resolving another page's orphaned locks fences that page's producer only, not the slice's current owner (whose
   * producer other slices share).
   */
  fenceWriter(sliceKey: string, writer: string): Promise<void>;
  /**
   * Whether the session `token` (`SliceSession.token`) is this process's and may still commit: open, or closed with a
   * commit on its way. Its pages are waited for, never resolved: they settle themselves.
   */
  sessionLive(token: string): boolean;
  /**
   * The last committed checkpoint of a slice (exact after a fence), read from `readFrom` (inclusive) to the end of
   * the partition as it is after the fence: waits while transactions of other slices that began before it are open.
   */
  readCommitted<S>(sliceKey: string, readFrom?: string): Promise<SliceCheckpoint<S> | null>;
  /**
   * The last stable offset of the slice key's checkpoint partition, as of at most 5 s ago: a safe `readFrom` before
   * its first commit.
   */
  lastStableOffset(sliceKey: string): Promise<string>;
  /** Producers made (each one transactional.id on the brokers), shared transactions and slice commits in them, fences sent. */
  stats(): { producers: number; transactions: number; commits: number; fences: number; selfFences: number };
  close(): Promise<void>;
}

/** The transactional.id of member `index` of a pool. */
export function transactionalIdFor(prefix: string, member: string, index: number): string {
  return `${prefix}.${member}.${index}`;
}

/**
 * @example
 * const publisher = createTransactionalSlicePublisher({ brokers, checkpointTopic: 'gamedata.__slices', transactionalIdPrefix: 'gamedata.tx', owners, member });
 * const session = await publisher.openSlice<MyState>(sliceKey, { readFrom: async () => jobData.eos?.readFrom });
 * session.addPage({ topic, records, dlqTopic, deadLetters });
 * const ckpt = await session.commit({ cursor });
 * await session.close();
 */
/** The checkpoint reader's two reads, failures as the publisher throws them. */
function checkpointReads(
  checkpoints: CheckpointReader,
  checkpointTopic: string,
  kafkaError: (error: unknown, action: string) => Error,
): Pick<TransactionalSlicePublisher, 'readCommitted' | 'lastStableOffset'> {
  return {
    async readCommitted<S>(sliceKey: string, readFrom?: string): Promise<SliceCheckpoint<S> | null> {
      try {
        return await checkpoints.readCommitted<S>(sliceKey, readFrom);
      } catch (error) {
        throw kafkaError(error, `reading the checkpoint of slice ${sliceKey}`);
      }
    },
    async lastStableOffset(sliceKey: string): Promise<string> {
      try {
        return await checkpoints.lastStableOffset(sliceKey);
      } catch (error) {
        throw kafkaError(error, `reading the end of ${checkpointTopic}`);
      }
    },
  };
}

export function createTransactionalSlicePublisher(
  options: TransactionalSlicePublisherOptions,
): TransactionalSlicePublisher {
  const { resolved, o, retry } = resolvePublisherOptions(options);
  // The client installs the kafkajs patches; the pool announces each transaction's partitions to the
  // AddPartitionsToTxn patch's table (kafkajs-patches/transaction-partitions.ts).
  const kafka = createKafkaClient(resolved, { clientId: `${resolved.clientId}-txn`, retry });
  const { transactionPartitions } = installKafkajsPatches();
  const ownLabel = randomBytes(4).toString('hex');
  const member = options.member ?? (() => ownLabel);
  const owners = options.owners ?? createMemorySliceOwners();
  const checkpoints = createCheckpointReader({
    kafka,
    checkpointTopic: o.checkpointTopic,
    groupIdPrefix: o.transactionalIdPrefix,
    requestTimeoutMs: resolved.requestTimeoutMs,
    recoveryTimeoutMs: o.recoveryTimeoutMs,
    retry,
    lsoMaxAgeMs: 5_000,
  });
  let keyless = 0;
  const kafkaError = (error: unknown, action: string): Error =>
    error instanceof SliceFencedError ? error : toKafkaError(error, resolved.brokers, action);
  const pool = createProducerPool({
    kafka,
    transactionalId: (index) => transactionalIdFor(o.transactionalIdPrefix, member(), index),
    size: o.producers,
    lingerMs: o.lingerMs,
    lingerCommits: o.lingerCommits,
    transactionTimeoutMs: o.transactionTimeoutMs,
    retry,
    requestTimeoutMs: resolved.requestTimeoutMs,
    maxBatchBytes: resolved.maxBatchBytes,
    partitionsOf: (topic) => checkpoints.partitionsOf(topic),
    partitionFor: (_topic, m, partitions) =>
      partitionForKey(m.key, partitions, m.key === null ? keyless++ : 0),
    beforeEndTxn: o.beforeEndTxn,
    transactionPartitions,
    toError: (error, action) => kafkaError(error, action),
    isFenced: isFencingError,
  });
  const fencing = createSliceFencing({
    kafka,
    transactionTimeoutMs: o.transactionTimeoutMs,
    retry,
    pool,
    owners,
    kafkaError,
    onSelfFence: o.onSelfFence,
  });

  const reads = checkpointReads(checkpoints, o.checkpointTopic, kafkaError);
  const live = new Set<string>();
  const readCommitted = <S>(sliceKey: string, readFrom?: string): Promise<SliceCheckpoint<S> | null> =>
    reads.readCommitted<S>(sliceKey, readFrom);

  return {
    openSlice: <S>(sliceKey: string, openOptions?: OpenSliceOptions): Promise<SliceSession<S>> =>
      openSliceSession<S>(
        {
          pool,
          owners,
          fenceOwners: fencing.fenceOwners,
          readCommitted,
          partitionOf: (key) => checkpoints.partitionOf(key),
          checkpointTopic: o.checkpointTopic,
          kafkaError,
          live,
        },
        sliceKey,
        openOptions,
      ),
    fence: fencing.fence,
    fenceTaken: fencing.fenceTaken,
    fenceWriter: fencing.fenceWriter,
    sessionLive: (token) => live.has(token),
    readCommitted,
    lastStableOffset: (sliceKey) => reads.lastStableOffset(sliceKey),
    stats: () => ({ ...pool.stats, fences: fencing.fences(), selfFences: fencing.selfFences() }),
    async close() {
      await pool.close();
      await checkpoints.close();
    },
  };
}
