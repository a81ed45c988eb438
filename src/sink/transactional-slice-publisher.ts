/**
 * Exactly-once publishing of slices for read_committed consumers (the KIP-618 pattern of Kafka Connect's
 * exactly-once sources): each slice has its own transactional.id, and one Kafka transaction carries K pages' records,
 * their dead letters and ONE checkpoint record of the slice (compacted `<prefix>.__slices`, key = slice key, value =
 * `{ seq, state }`). All of it commits or none of it does.
 *
 * Opening a slice FENCES every earlier owner: InitProducerId with the slice's transactional.id aborts (or completes)
 * whatever an earlier owner left open and bumps the epoch, so a zombie's later commit fails with
 * {@link SliceFencedError}. Only after the fence is the checkpoint read (read_committed, up to a probe record appended
 * after the fence, NOT up to the partition's last stable offset, which another slice's open transaction can hold
 * below this slice's newest checkpoint), so the read is exact: a retry publishes exactly what did not commit.
 *
 * Pages are buffered in memory and sent at `commit()`, so a transaction is open on the broker only for the few
 * milliseconds of its commit (an open transaction holds back every read_committed reader of its partitions).
 *
 * kafkajs pitfalls handled here (measured, see docs/guarantees.md "Exactly-once"):
 * - `producer.connect()` does NOT fence (it sends a non-transactional InitProducerId); `producer.transaction()` does.
 * - kafkajs retries CONCURRENT_TRANSACTIONS (the previous commit's markers still being written) with the producer's
 *   generic backoff; its default 300 ms first retry turns a few-ms window into a 300 ms stall, hence 10 ms here.
 * - kafkajs does not know PRODUCER_FENCED (90); Kafka 4 answers its old request versions with INVALID_PRODUCER_EPOCH.
 * - Batches emptied by read_committed filtering never reach `eachBatch`: progress is tracked on END_BATCH_PROCESS.
 */
import { randomUUID } from 'node:crypto';
import { Partitioners } from 'kafkajs';
import type { Admin, Consumer, Producer, Transaction } from 'kafkajs';
import { ConfigError, ServiceError, SliceFencedError } from '../errors.js';
import { chunkBySize, createKafkaClient, partitionForKey, resolveKafkaOptions, toKafkaError, toWire } from './kafka-sink.js';
import type { KafkaSinkOptions, SinkMessage } from './kafka-sink.js';
import { retryRetriable } from './retry-retriable.js';
import { installReadCommittedFilter } from './read-committed-filter.js';

// kafkajs 2.2.4 lets records of some aborted transactions through a read_committed read (see read-committed-filter.ts).
installReadCommittedFilter();

export interface TransactionalSlicePublisherOptions extends KafkaSinkOptions {
  /** The compacted checkpoint topic, `<prefix>.__slices` (`checkpointTopicName`). Required. */
  checkpointTopic: string;
  /** Prefix of every transactional.id; the slice key follows it. Required (e.g. `<topicPrefix>.tx`). */
  transactionalIdPrefix: string;
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
  /** Test hook: runs after the transaction's records were sent and before EndTxn. @default undefined */
  beforeEndTxn?: (sliceKey: string, seq: number) => Promise<void>;
}

export const DEFAULT_TRANSACTIONAL_SLICE_PUBLISHER_OPTIONS = {
  transactionTimeoutMs: 20_000,
  initialRetryTimeMs: 10,
  transactionalRetries: 15,
  maxRetryTimeMs: 5_000,
  recoveryTimeoutMs: 45_000,
} as const;

/**
 * Key of the probe record `readCommitted` writes to the checkpoint partition (a tombstone: the compacted topic keeps
 * nothing of it): its offset bounds every record written before, whatever transactions are still open.
 */
export const CHECKPOINT_PROBE_KEY = '__end-probe';

/** The last committed checkpoint of a slice, as a read_committed consumer sees it. */
export interface SliceCheckpoint<S> {
  sliceKey: string;
  /** Sequence number of the last committed page (0-based); -1 when only state was committed. */
  seq: number;
  /** The caller's state, as given to `commit` (JSON). */
  state: S;
  /** Where the checkpoint record sits: a later recovery read may start there (inclusive). */
  partition: number;
  offset: string;
}

/** One page for the open transaction: the good records and the dead letters. */
export interface TransactionalPage {
  topic: string;
  records: readonly SinkMessage[];
  dlqTopic: string;
  deadLetters: readonly SinkMessage[];
}

export interface SliceSession<S> {
  /** The last committed checkpoint found when the slice was opened (after the fence); null = none. */
  readonly recovered: SliceCheckpoint<S> | null;
  /** Sequence number the next page gets. */
  readonly nextSeq: number;
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
  /** Drops the pending pages and disconnects this slice's producer (nothing open stays behind). */
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
  /** Fences a slice's producers without taking the slice (resolving another slice's orphaned dedup locks). */
  fence(sliceKey: string): Promise<void>;
  /**
   * The last committed checkpoint of a slice (exact after a fence), read from `readFrom` (inclusive) to the end of
   * the partition as it is after the fence: waits while transactions of other slices that began before it are open.
   */
  readCommitted<S>(sliceKey: string, readFrom?: string): Promise<SliceCheckpoint<S> | null>;
  /** The last stable offset of the slice key's checkpoint partition: a safe `readFrom` before its first commit. */
  lastStableOffset(sliceKey: string): Promise<string>;
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

/** The transactional.id of a slice. */
export function transactionalIdFor(prefix: string, sliceKey: string): string {
  return `${prefix}.${sliceKey}`;
}

/**
 * @example
 * const publisher = createTransactionalSlicePublisher({ brokers, checkpointTopic: 'gamedata.__slices', transactionalIdPrefix: 'gamedata.tx' });
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
  ] as const) {
    if (!Number.isInteger(o[key]) || o[key] < 1) {
      throw new ConfigError(`${key} must be a positive integer, got ${String(o[key])}`);
    }
  }
  const retry = {
    initialRetryTime: o.initialRetryTimeMs,
    retries: o.transactionalRetries,
    maxRetryTime: o.maxRetryTimeMs,
  };
  const kafka = createKafkaClient(resolved, { clientId: `${resolved.clientId}-txn`, retry });
  let admin: Promise<Admin> | undefined;
  let partitions: number | undefined;
  const partitioner = Partitioners.DefaultPartitioner();

  const getAdmin = (): Promise<Admin> => {
    admin ??= (async () => {
      const a = kafka.admin();
      try {
        await a.connect();
      } catch (error) {
        admin = undefined;
        throw error;
      }
      return a;
    })();
    return admin;
  };

  // Partition counts of the page topics (the checkpoint topic's is `partitions`), read once per topic.
  const topicPartitions = new Map<string, number>();
  async function partitionsOf(topic: string): Promise<number> {
    if (topic === o.checkpointTopic) {
      await partitionOf('');
      return partitions ?? 0;
    }
    const known = topicPartitions.get(topic);
    if (known !== undefined) return known;
    const meta = await (await getAdmin()).fetchTopicMetadata({ topics: [topic] });
    const n = meta.topics[0]?.partitions.length ?? 0;
    if (n === 0)
      throw new ServiceError(`topic ${topic} has no partitions (run \`gamedata topics create\`)`, 'kafka');
    topicPartitions.set(topic, n);
    return n;
  }
  let keyless = 0;

  async function partitionOf(sliceKey: string): Promise<number> {
    if (partitions === undefined) {
      const meta = await (await getAdmin()).fetchTopicMetadata({ topics: [o.checkpointTopic] });
      const n = meta.topics[0]?.partitions.length ?? 0;
      if (n === 0) {
        throw new ServiceError(
          `the checkpoint topic ${o.checkpointTopic} has no partitions (run \`gamedata topics create\`)`,
          'kafka',
        );
      }
      partitions = n;
    }
    // The murmur2 partition the producer's default partitioner picks for this key.
    return partitioner({
      topic: o.checkpointTopic,
      partitionMetadata: Array.from({ length: partitions }, (_, i) => ({
        partitionId: i,
        leader: 0,
        replicas: [0],
        isr: [0],
        partitionErrorCode: 0,
      })),
      message: { key: sliceKey, value: null },
    });
  }

  const kafkaError = (error: unknown, action: string): Error =>
    error instanceof SliceFencedError ? error : toKafkaError(error, resolved.brokers, action);

  async function lastStableOffset(sliceKey: string): Promise<string> {
    try {
      const partition = await partitionOf(sliceKey);
      // `high` from ListOffsets(read_committed) is the last stable offset.
      const offsets = await retryRetriable(async () =>
        (await getAdmin()).fetchTopicOffsets(o.checkpointTopic),
      );
      return offsets.find((x) => x.partition === partition)?.high ?? '0';
    } catch (error) {
      throw kafkaError(error, `reading the end of ${o.checkpointTopic}`);
    }
  }

  // A plain producer for the end probes of recovery reads (acks all, not transactional).
  let probeProducer: Promise<Producer> | undefined;
  const getProbeProducer = (): Promise<Producer> => {
    probeProducer ??= (async () => {
      const p = kafka.producer({ allowAutoTopicCreation: false, retry });
      try {
        await p.connect();
      } catch (error) {
        probeProducer = undefined;
        throw error;
      }
      return p;
    })();
    return probeProducer;
  };

  /**
   * The end of an exact recovery read of `partition`: one past a probe record (a tombstone under
   * {@link CHECKPOINT_PROBE_KEY}) appended now. Every record written before the call (every checkpoint of a slice
   * fenced before it) lies below it. The last stable offset is NOT such an end: it stops at the first record of the
   * oldest transaction still open on the partition, and another slice's transaction (a worker killed mid-commit
   * leaves one open until its slice is taken again or the broker times it out) can sit below this slice's newest
   * committed checkpoint: a read up to the LSO then finds an older checkpoint, and the slice re-publishes committed
   * pages (the duplicates of the chaos test). The read_committed reader passes the probe only once every transaction
   * that began before it has ended, so it waits for those (milliseconds, up to a dead owner's transaction timeout).
   */
  async function probeEnd(partition: number): Promise<bigint> {
    const answers = await retryRetriable(async () =>
      (await getProbeProducer()).send({
        topic: o.checkpointTopic,
        acks: -1,
        timeout: resolved.requestTimeoutMs,
        messages: [{ key: CHECKPOINT_PROBE_KEY, value: null, partition }],
      }),
    );
    const answer = answers.find((a) => a.topicName === o.checkpointTopic && a.partition === partition);
    if (answer?.baseOffset === undefined)
      throw new ServiceError(
        `Kafka did not acknowledge the end probe of ${o.checkpointTopic}[${partition}]`,
        'kafka',
        { retriable: true },
      );
    return BigInt(answer.baseOffset) + 1n;
  }

  async function readCommitted<S>(sliceKey: string, readFrom?: string): Promise<SliceCheckpoint<S> | null> {
    try {
      const partition = await partitionOf(sliceKey);
      const offsets = await retryRetriable(async () =>
        (await getAdmin()).fetchTopicOffsets(o.checkpointTopic),
      );
      const p = offsets.find((x) => x.partition === partition);
      if (p === undefined) return null;
      const low = BigInt(p.low);
      const from = readFrom === undefined ? low : BigInt(readFrom) > low ? BigInt(readFrom) : low;
      const end = await probeEnd(partition);
      if (from >= end) return null;
      return await readRange<S>(sliceKey, partition, from, end);
    } catch (error) {
      throw kafkaError(error, `reading the checkpoint of slice ${sliceKey}`);
    }
  }

  async function readRange<S>(
    sliceKey: string,
    partition: number,
    from: bigint,
    end: bigint,
  ): Promise<SliceCheckpoint<S> | null> {
    const groupId = `${o.transactionalIdPrefix}.recover.${randomUUID()}`;
    const consumer: Consumer = kafka.consumer({
      groupId,
      readUncommitted: false,
      maxWaitTimeInMs: 50,
      retry: { retries: 3 },
    });
    let last: SliceCheckpoint<S> | null = null;
    try {
      await consumer.connect();
      await consumer.subscribe({ topic: o.checkpointTopic, fromBeginning: true });
      await new Promise<void>((resolve, reject) => {
        let timer: NodeJS.Timeout | undefined;
        const arm = (): void => {
          if (timer) clearTimeout(timer);
          timer = setTimeout(
            () =>
              reject(
                new ServiceError(
                  `the recovery read of slice ${sliceKey} made no progress for ${o.recoveryTimeoutMs} ms (offset < ${end})`,
                  'kafka',
                  { retriable: true },
                ),
              ),
            o.recoveryTimeoutMs,
          );
        };
        arm();
        const progress = (lastOffset: string): void => {
          arm();
          if (BigInt(lastOffset) + 1n >= end) {
            clearTimeout(timer);
            resolve();
          }
        };
        // Batches emptied by filtering (only markers or aborted records) never reach eachBatch: watch the events.
        consumer.on(consumer.events.END_BATCH_PROCESS, (e) => {
          if (e.payload.topic === o.checkpointTopic && e.payload.partition === partition)
            progress(e.payload.lastOffset);
        });
        consumer
          .run({
            autoCommit: false,
            eachBatch: async ({ batch }) => {
              if (batch.partition !== partition) return;
              for (const m of batch.messages) {
                if (BigInt(m.offset) >= end) break;
                if (m.key?.toString() !== sliceKey || m.value === null) continue;
                const v = JSON.parse(m.value.toString()) as { seq: number; state: S };
                last = { sliceKey, seq: v.seq, state: v.state, partition, offset: m.offset };
              }
              await Promise.resolve();
            },
          })
          .catch(reject);
        // After run() was called (kafkajs wants that), before its first fetch.
        consumer.seek({ topic: o.checkpointTopic, partition, offset: from.toString() });
      });
    } finally {
      await consumer.disconnect().catch(() => undefined);
      // One-off groups would otherwise pile up in the group coordinator.
      await (await getAdmin()).deleteGroups([groupId]).catch(() => undefined);
    }
    return last;
  }

  function newProducer(sliceKey: string): Producer {
    return kafka.producer({
      transactionalId: transactionalIdFor(o.transactionalIdPrefix, sliceKey),
      transactionTimeout: o.transactionTimeoutMs,
      idempotent: true,
      maxInFlightRequests: 1,
      allowAutoTopicCreation: false,
      createPartitioner: Partitioners.DefaultPartitioner,
      retry,
    });
  }

  /**
   * connect() alone fences nothing (kafkajs sends a non-transactional InitProducerId); the first `transaction()`
   * sends InitProducerId with the transactional.id: it aborts or completes what earlier owners left and bumps the
   * epoch. The transaction it begins is local only (no partition added yet).
   */
  async function fencedProducer(sliceKey: string): Promise<{ producer: Producer; txn: Transaction }> {
    const producer = newProducer(sliceKey);
    try {
      await producer.connect();
      const txn = await producer.transaction();
      return { producer, txn };
    } catch (error) {
      await producer.disconnect().catch(() => undefined);
      throw kafkaError(error, `fencing slice ${sliceKey}`);
    }
  }

  async function fence(sliceKey: string): Promise<void> {
    const { producer, txn } = await fencedProducer(sliceKey);
    try {
      await txn.abort(); // nothing was added: no EndTxn goes out
    } finally {
      await producer.disconnect().catch(() => undefined);
    }
  }

  async function openSlice<S>(
    sliceKey: string,
    openOptions: OpenSliceOptions = {},
  ): Promise<SliceSession<S>> {
    // Fence first: afterwards everything earlier owners did is committed or aborted, so the read below is exact.
    const { producer, txn: first } = await fencedProducer(sliceKey);
    let txn: Transaction | undefined = first;
    let recovered: SliceCheckpoint<S> | null;
    try {
      const readFrom = await openOptions.readFrom?.();
      recovered = readFrom === undefined ? null : await readCommitted<S>(sliceKey, readFrom);
    } catch (error) {
      await producer.disconnect().catch(() => undefined);
      throw error;
    }
    let nextSeq = recovered === null ? 0 : recovered.seq + 1;
    let committedSeq = recovered === null ? -1 : recovered.seq;
    let pending: TransactionalPage[] = [];
    let closed = false;

    const failed = async (error: unknown, action: string): Promise<never> => {
      const t = txn;
      txn = undefined;
      pending = [];
      nextSeq = committedSeq + 1;
      if (isFencingError(error)) {
        throw new SliceFencedError(
          `slice ${sliceKey} was taken by another owner (${action}): ${errorText(error).trim()}`,
          sliceKey,
          { cause: error },
        );
      }
      // Kafka failed mid-transaction: abort what we can (the broker aborts it on timeout or on the next fence).
      await t?.abort().catch(() => undefined);
      throw kafkaError(error, `${action} of slice ${sliceKey}`);
    };

    return {
      recovered,
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
        try {
          txn ??= await producer.transaction();
          const wire = toWire();
          const checkpoint: SinkMessage = { key: sliceKey, value: JSON.stringify({ seq, state }) };
          const counts = new Map<string, number>();
          for (const page of pages)
            for (const topic of [page.topic, page.dlqTopic])
              if (topic !== '' && !counts.has(topic)) counts.set(topic, await partitionsOf(topic));
          const requests = transactionRequests(
            pages,
            { topic: o.checkpointTopic, partition: await partitionOf(sliceKey), message: checkpoint },
            // Explicit partitions (the producer's murmur2 rule; keyless ones round-robin).
            (topic, m) => partitionForKey(m.key, counts.get(topic) ?? 1, m.key === null ? keyless++ : 0),
            resolved.maxBatchBytes,
          );
          let answers: { topicName: string; partition: number; baseOffset?: string }[] = [];
          for (const r of requests) {
            answers = await txn.sendBatch({
              acks: -1,
              timeout: resolved.requestTimeoutMs,
              topicMessages: [
                { topic: r.topic, messages: r.messages.map((m) => ({ ...wire(m), partition: r.partition })) },
              ],
            });
            // kafkajs 2.2.4 can resolve a send that skipped a partition whose leader moved to a broker that had
            // already answered (see kafka-sink.ts); committing then would lose its records, so abort instead.
            if (!answers.some((a) => a.topicName === r.topic && a.partition === r.partition))
              throw new ServiceError(
                `Kafka did not acknowledge ${r.topic}#${r.partition} (a leader moved during the send)`,
                'kafka',
                { retriable: true },
              );
          }
          const ck = answers.find((r) => r.topicName === o.checkpointTopic);
          const meta = {
            partition: ck?.partition ?? (await partitionOf(sliceKey)),
            offset: ck?.baseOffset ?? '0',
          };
          if (o.beforeEndTxn !== undefined) await o.beforeEndTxn(sliceKey, seq);
          await txn.commit();
          txn = undefined;
          pending = [];
          committedSeq = seq;
          return { sliceKey, seq, state, partition: meta.partition, offset: meta.offset };
        } catch (error) {
          return failed(error, 'commit');
        }
      },
      async close() {
        if (closed) return;
        closed = true;
        pending = [];
        const t = txn;
        txn = undefined;
        // Nothing was added to a transaction between commits (pages are sent at commit): a local abort only.
        await t?.abort().catch(() => undefined);
        await producer.disconnect().catch(() => undefined);
      },
    };
  }

  return {
    openSlice,
    fence,
    readCommitted,
    lastStableOffset,
    async close() {
      const a = admin;
      admin = undefined;
      if (a !== undefined) await (await a.catch(() => undefined))?.disconnect();
      const p = probeProducer;
      probeProducer = undefined;
      if (p !== undefined) await (await p.catch(() => undefined))?.disconnect();
    },
  };
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
 * sequence numbers, which the broker deduplicates.
 */
export function transactionRequests(
  pages: readonly TransactionalPage[],
  checkpoint: { topic: string; partition: number; message: SinkMessage },
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
  out.push({ topic: checkpoint.topic, partition: checkpoint.partition, messages: [checkpoint.message] });
  return out;
}
