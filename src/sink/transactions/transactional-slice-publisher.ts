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
 */
import { randomBytes } from 'node:crypto';
import type { Producer } from 'kafkajs';
import { ConfigError, PoolCommitError, ServiceError, SliceFencedError } from '../../errors.js';
import { createCheckpointReader } from './checkpoint-reader.js';
import { installKafkajsPatches } from '../kafkajs-patches/index.js';
import type { SliceCheckpoint } from './checkpoint-reader.js';
import { createKafkaClient } from '../kafka-client.js';
import { partitionForKey } from '../producer/partitioner.js';
import { resolveKafkaOptions } from '../kafka-options.js';
import { toKafkaError } from '../kafka-error.js';
import type { KafkaSinkOptions } from '../kafka-options.js';
import { createProducerPool } from './producer-pool.js';
import { createMemorySliceOwners } from './slice-owners.js';
import type { SliceOwners } from './slice-owners.js';
import type { TransactionalPage } from './transaction-requests.js';

export { CHECKPOINT_PROBE_KEY } from './checkpoint-reader.js';
export type { SliceCheckpoint } from './checkpoint-reader.js';
export type { TransactionalPage } from './transaction-requests.js';

export interface TransactionalSlicePublisherOptions extends KafkaSinkOptions {
  /** The compacted checkpoint topic, `<prefix>.__slices` (`checkpointTopicName`). Required. */
  checkpointTopic: string;
  /**
   * Prefix of every transactional.id: the pool's producers are `<prefix>.<member>.<i>`. Required (e.g.
   * `<topicPrefix>.tx`).
   */
  transactionalIdPrefix: string;
  /**
   * This process's member label in the ids (read each time a producer is made). A deployment passes a label leased
   * in Redis (`jobs/producer-member-lease.ts`) so its ids stay bounded by processes x pool size across restarts.
   * @default a random label per publisher (ids then grow with the processes ever started)
   */
  member?: () => string;
  /**
   * Where each slice's owners (transactional.ids) are recorded. Every process of a deployment must share it
   * (`jobs/redis-slice-owners.ts`). @default this process's memory (`createMemorySliceOwners`)
   */
  owners?: SliceOwners;
  /**
   * The broker aborts a transaction left open this long: bounds how long a dead owner's open transaction holds back
   * read_committed readers of its partitions (a new owner of the same slice aborts it at once). Below the slice lock.
   * @default 20_000
   */
  transactionTimeoutMs?: number;
  /**
   * First retry delay of the transactional producer (doubling up to `maxRetryTimeMs`). A short one keeps the
   * CONCURRENT_TRANSACTIONS window after a commit from costing 300 ms. @default 10
   */
  initialRetryTimeMs?: number;
  /** Retries of the transactional producer (10 ms doubling, capped: about a minute in all). @default 15 */
  transactionalRetries?: number;
  /** @default 5_000 */
  maxRetryTimeMs?: number;
  /**
   * A recovery read of the checkpoint topic that makes no progress for this long fails (retriable). The read waits
   * for transactions of other slices that are open on the checkpoint partition (see `readCommitted`): a dead
   * owner's transaction is aborted by the broker after `transactionTimeoutMs` plus its abort check (10 s by default),
   * so this stays above their sum. @default 45_000
   */
  recoveryTimeoutMs?: number;
  /**
   * Transactional producers of this publisher (each one transactional.id): slices are spread over them and each
   * commits its slices' pages in shared transactions. @default 1
   */
  producers?: number;
  /**
   * A shared transaction waits up to this long for more of its producer's slices' commits before it starts; it
   * starts at once when `lingerCommits` are queued or every slice bound to the producer has asked (a lone slice never
   * waits). 0: it starts with what queued while the previous one was on its way. 25 ms took the medium chaos
   * workload from 165-167 s to 133-150 s and the brokers' CPU by 15-30 % (docs/benchmarks/diary.md). @default 25
   */
  lingerMs?: number;
  /** Commits queued that start a transaction without lingering. @default 8 */
  lingerCommits?: number;
  /** Test hook: runs after the transaction's records were sent and before EndTxn. @default undefined */
  beforeEndTxn?: (sliceKey: string, seq: number) => Promise<void>;
}

export const DEFAULT_TRANSACTIONAL_SLICE_PUBLISHER_OPTIONS = {
  transactionTimeoutMs: 20_000,
  initialRetryTimeMs: 10,
  transactionalRetries: 15,
  maxRetryTimeMs: 5_000,
  recoveryTimeoutMs: 45_000,
  producers: 1,
  lingerMs: 25,
  lingerCommits: 8,
} as const;

export interface SliceSession<S> {
  /** The last committed checkpoint found when the slice was opened (after the fence); null = none. */
  readonly recovered: SliceCheckpoint<S> | null;
  /** Sequence number the next page gets. */
  readonly nextSeq: number;
  /** The transactional.id this session's pages commit through (a page key's writer, see `fenceWriter`). */
  readonly owner: string;
  /** Pages added since the last commit. */
  readonly pendingPages: number;
  /** Adds a page to the next transaction (kept in memory until `commit`); returns its sequence number. */
  addPage(page: TransactionalPage): number;
  /**
   * Sends the pending pages and the checkpoint `{ seq, state }`, and commits them as one transaction.
   * @throws SliceFencedError when another owner took the slice (stop: no side effects any more)
   * @throws ServiceError when Kafka fails (retriable per `error.retriable`); nothing of this transaction is visible
   *   to read_committed readers then, and the slice must be opened again to learn what committed.
   */
  commit(state: S): Promise<SliceCheckpoint<S>>;
  /** Drops the pending pages and gives the producer back to the pool (nothing open stays behind). */
  close(): Promise<void>;
}

export interface OpenSliceOptions {
  /**
   * Where the recovery read starts (inclusive): the offset of a checkpoint record of this slice saved earlier, or the
   * partition's last stable offset saved before the slice first committed (`lastStableOffset`). Called AFTER the
   * fence, so job data re-read there is at least as new as anything a zombie wrote. Undefined = the slice never
   * saved one, so it never committed: no read.
   */
  readFrom?: () => Promise<string | undefined>;
}

export interface TransactionalSlicePublisher {
  /** Takes a slice: fences every earlier owner, then reads its last committed checkpoint (read_committed). */
  openSlice<S>(sliceKey: string, options?: OpenSliceOptions): Promise<SliceSession<S>>;
  /** Fences a slice's owners without taking the slice (resolving another slice's orphaned dedup locks). */
  fence(sliceKey: string): Promise<void>;
  /**
   * Makes sure the producer `writer` can commit nothing more of the slice: fences it when it is still recorded as an
   * owner of the slice; an id no longer recorded was fenced by a new owner already or left with nothing open. So
   * resolving another page's orphaned locks fences that page's producer only, not the slice's current owner (whose
   * producer other slices share).
   */
  fenceWriter(sliceKey: string, writer: string): Promise<void>;
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
  stats(): { producers: number; transactions: number; commits: number; fences: number };
  close(): Promise<void>;
}

const FENCED = /PRODUCER_FENCED|INVALID_PRODUCER_EPOCH|old epoch|INVALID_PRODUCER_ID_MAPPING|fenced/i;

function errorText(error: unknown): string {
  const e = error as { name?: string; message?: string; type?: string; cause?: { message?: string } } | null;
  return `${e?.name ?? ''} ${e?.type ?? ''} ${e?.message ?? String(error)} ${e?.cause?.message ?? ''}`;
}

/** Whether a kafkajs error says another producer of the transactional.id fenced this one. */
export function isFencingError(error: unknown): boolean {
  return FENCED.test(errorText(error));
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
export function createTransactionalSlicePublisher(
  options: TransactionalSlicePublisherOptions,
): TransactionalSlicePublisher {
  if (options.checkpointTopic === '' || options.transactionalIdPrefix === '') {
    throw new ConfigError('checkpointTopic and transactionalIdPrefix must be non-empty');
  }
  const resolved = resolveKafkaOptions(options);
  const o = { ...DEFAULT_TRANSACTIONAL_SLICE_PUBLISHER_OPTIONS, ...options };
  for (const key of [
    'transactionTimeoutMs',
    'initialRetryTimeMs',
    'transactionalRetries',
    'maxRetryTimeMs',
    'recoveryTimeoutMs',
    'producers',
  ] as const) {
    if (!Number.isInteger(o[key]) || o[key] < 1) {
      throw new ConfigError(`${key} must be a positive integer, got ${String(o[key])}`);
    }
  }
  if (!Number.isInteger(o.lingerMs) || o.lingerMs < 0)
    throw new ConfigError(`lingerMs must be a non-negative integer, got ${String(o.lingerMs)}`);
  if (!Number.isInteger(o.lingerCommits) || o.lingerCommits < 1)
    throw new ConfigError(`lingerCommits must be a positive integer, got ${String(o.lingerCommits)}`);
  const retry = {
    initialRetryTime: o.initialRetryTimeMs,
    retries: o.transactionalRetries,
    maxRetryTime: o.maxRetryTimeMs,
  };
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
  let fences = 0;
  let keyless = 0;
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
  const kafkaError = (error: unknown, action: string): Error =>
    error instanceof SliceFencedError ? error : toKafkaError(error, resolved.brokers, action);

  /**
   * Fences one transactional.id: InitProducerId with it aborts (or completes) whatever it left open and bumps its
   * epoch, so its producer's next request fails as fenced. The transaction begun is local (nothing added): no EndTxn.
   */
  async function fenceId(transactionalId: string): Promise<void> {
    const producer: Producer = kafka.producer({
      transactionalId,
      transactionTimeout: o.transactionTimeoutMs,
      idempotent: true,
      maxInFlightRequests: 1,
      allowAutoTopicCreation: false,
      retry,
    });
    try {
      await producer.connect();
      const txn = await producer.transaction();
      fences += 1;
      await txn.abort();
    } catch (error) {
      throw kafkaError(error, `fencing ${transactionalId}`);
    } finally {
      await producer.disconnect().catch(() => undefined);
    }
  }

  /**
   * Fences the recorded owners of a slice other than `self`, then forgets them (a fenced epoch commits nothing more).
   * A member of this pool that is initialised in its current generation and has no session of this slice is skipped:
   * nothing of it can commit this slice's records (a session's commits end before it closes).
   */
  async function fenceOwners(sliceKey: string, ids: readonly string[], self?: string): Promise<void> {
    const fenced: string[] = [];
    for (const id of ids) {
      if (id === self) continue;
      const mine = pool.find(id, sliceKey);
      if (mine === undefined || !mine.alive || mine.hasSlice) await fenceId(id);
      fenced.push(id);
    }
    if (fenced.length > 0) await owners.leave(sliceKey, fenced);
  }

  async function fenceWriter(sliceKey: string, writer: string): Promise<void> {
    try {
      if ((await owners.list(sliceKey)).includes(writer)) await fenceOwners(sliceKey, [writer]);
    } catch (error) {
      throw kafkaError(error, `fencing ${writer} of slice ${sliceKey}`);
    }
  }

  async function fence(sliceKey: string): Promise<void> {
    try {
      await fenceOwners(sliceKey, await owners.list(sliceKey));
    } catch (error) {
      throw kafkaError(error, `fencing slice ${sliceKey}`);
    }
  }

  async function readCommitted<S>(sliceKey: string, readFrom?: string): Promise<SliceCheckpoint<S> | null> {
    try {
      return await checkpoints.readCommitted<S>(sliceKey, readFrom);
    } catch (error) {
      throw kafkaError(error, `reading the checkpoint of slice ${sliceKey}`);
    }
  }

  async function lastStableOffset(sliceKey: string): Promise<string> {
    try {
      return await checkpoints.lastStableOffset(sliceKey);
    } catch (error) {
      throw kafkaError(error, `reading the end of ${o.checkpointTopic}`);
    }
  }

  async function openSlice<S>(
    sliceKey: string,
    openOptions: OpenSliceOptions = {},
  ): Promise<SliceSession<S>> {
    const binding = pool.bind(sliceKey);
    const id = binding.transactionalId;
    let recovered: SliceCheckpoint<S> | null;
    try {
      // Our id is recorded before anything of this slice goes into a transaction of ours; then every earlier owner
      // is fenced, so the read below is exact: nothing can commit a checkpoint of this slice behind it.
      const others = await owners.enter(sliceKey, id);
      await fenceOwners(sliceKey, others, id);
      // The member's InitProducerId (once per producer) before the read: a failure to reach Kafka shows here.
      await pool.ready(binding);
      const readFrom = await openOptions.readFrom?.();
      recovered = readFrom === undefined ? null : await readCommitted<S>(sliceKey, readFrom);
    } catch (error) {
      pool.unbind(binding, sliceKey);
      await owners.leave(sliceKey, [id]).catch(() => undefined);
      throw unwrap(error, sliceKey, `opening slice ${sliceKey}`);
    }
    let nextSeq = recovered === null ? 0 : recovered.seq + 1;
    let committedSeq = recovered === null ? -1 : recovered.seq;
    let pending: TransactionalPage[] = [];
    let closed = false;
    let committing = 0;

    const fencedError = (action: string, cause?: unknown): SliceFencedError =>
      new SliceFencedError(
        `slice ${sliceKey} was taken by another owner, or its producer was fenced (${action})${cause === undefined ? '' : `: ${errorText(cause).trim()}`}`,
        sliceKey,
        cause === undefined ? {} : { cause },
      );

    return {
      recovered,
      owner: id,
      get nextSeq() {
        return nextSeq;
      },
      get pendingPages() {
        return pending.length;
      },
      addPage(page) {
        if (closed) throw new ServiceError(`slice ${sliceKey}: addPage() after close()`, 'kafka');
        pending.push(page);
        return nextSeq++;
      },
      async commit(state) {
        if (closed) throw new ServiceError(`slice ${sliceKey}: commit() after close()`, 'kafka');
        const seq = nextSeq - 1;
        const pages = pending;
        pending = [];
        if (!pool.alive(binding)) {
          nextSeq = committedSeq + 1;
          throw fencedError('its producer was replaced');
        }
        committing += 1;
        try {
          const at = await pool.commit(binding, {
            sliceKey,
            seq,
            pages,
            checkpoint: {
              topic: o.checkpointTopic,
              partition: await checkpoints.partitionOf(sliceKey),
              message: { key: sliceKey, value: JSON.stringify({ seq, state }) },
            },
          });
          committedSeq = seq;
          return { sliceKey, seq, state, partition: at.partition, offset: at.offset };
        } catch (error) {
          // Nothing of this transaction is visible; the slice must be opened again to go on.
          nextSeq = committedSeq + 1;
          if (error instanceof PoolCommitError && error.fenced) throw fencedError('commit', error.error);
          throw unwrap(error, sliceKey, `commit of slice ${sliceKey}`);
        } finally {
          committing -= 1;
        }
      },
      async close() {
        if (closed) return;
        closed = true;
        pending = [];
        pool.unbind(binding, sliceKey);
        // Pages are sent only inside a commit, and every commit of this session has ended (committed, aborted, or
        // its producer replaced: a replaced generation commits nothing more; a commit whose EndTxn was already on
        // the broker is waited for by the next owner's recovery read). So our id no longer holds anything of this
        // slice that a new owner would have to fence.
        if (committing === 0) await owners.leave(sliceKey, [id]).catch(() => undefined);
      },
    };
  }

  /** The error to throw for a failure of the pool (its committers' view) or of Kafka. */
  function unwrap(error: unknown, sliceKey: string, action: string): Error {
    if (error instanceof PoolCommitError)
      return error.fenced
        ? new SliceFencedError(`${action}: ${error.message}`, sliceKey, { cause: error.error })
        : error.error;
    if (error instanceof SliceFencedError) return error;
    if (isFencingError(error))
      return new SliceFencedError(`${action}: ${errorText(error).trim()}`, sliceKey, { cause: error });
    return kafkaError(error, action);
  }

  return {
    openSlice,
    fence,
    fenceWriter,
    readCommitted,
    lastStableOffset,
    stats: () => ({ ...pool.stats, fences }),
    async close() {
      await pool.close();
      await checkpoints.close();
    },
  };
}
