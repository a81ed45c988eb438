/**
 * Reading a slice's last committed checkpoint from the compacted `<prefix>.__slices` topic (read_committed), for the
 * transactional slice publisher: after a fence, the read is exact.
 *
 * The end of a recovery read is one past a probe record appended now, NOT the partition's last stable offset:
 * another slice's transaction left open on the checkpoint partition (a worker killed mid-commit leaves one until the
 * broker times it out) holds the LSO below this slice's newest committed checkpoint, and a read up to the LSO then
 * finds an older checkpoint (the chaos test's duplicates). The read itself is `readPartitionRange`
 * (read-partition-range.ts).
 */
import { randomUUID } from 'node:crypto';
import { loadKafkajs } from '../kafkajs-loader.js';
import type { Admin, Kafka, Producer } from 'kafkajs';
import { ServiceError } from '../../../foundation/errors/index.js';
import { fetchTopicOffsets, retryRetriable } from '../admin/retry-retriable.js';
import { readPartitionRange } from '../readers/read-partition-range.js';

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
  /**
   * The session that committed it (`SliceSession.token`; absent in checkpoints written before sessions had tokens): a
   * page is committed only by the session that wrote it, so a page of another session at the same seq is not.
   */
  session?: string;
  /** Where the checkpoint record sits: a later recovery read may start there (inclusive). */
  partition: number;
  offset: string;
}

/**
 * A kafkajs client connected on first use, made again after a failed connect. After `close()` it connects nothing
 * more: a slice still finishing its recovery read when its worker closed (a zombie's, woken after its locks went)
 * would otherwise connect a fresh client that nobody closes, and that socket kept a drained worker alive for minutes.
 */
export function lazyConnected<T extends { connect(): Promise<void>; disconnect(): Promise<void> }>(
  make: () => T,
  what = 'a Kafka client',
): { get(): Promise<T>; close(): Promise<void> } {
  let current: Promise<T> | undefined;
  let closed = false;
  return {
    get() {
      if (closed) return Promise.reject(new ServiceError(`${what} was used after it was closed`, 'kafka'));
      current ??= (async () => {
        const client = make();
        try {
          await client.connect();
        } catch (error) {
          current = undefined;
          throw error;
        }
        return client;
      })();
      return current;
    },
    async close() {
      closed = true;
      const c = current;
      current = undefined;
      if (c !== undefined) await (await c.catch(() => undefined))?.disconnect();
    },
  };
}

export interface CheckpointReaderOptions {
  kafka: Kafka;
  checkpointTopic: string;
  /** Prefix of the one-off recovery groups' ids. */
  groupIdPrefix: string;
  requestTimeoutMs: number;
  /** A read that makes no progress this long fails (retriable). */
  recoveryTimeoutMs: number;
  retry: { retries: number; initialRetryTime: number; maxRetryTime: number };
  /** How old a last stable offset handed out by `lastStableOffset` may be. */
  lsoMaxAgeMs: number;
}

export interface CheckpointReader {
  /** The checkpoint partition of a slice key (the producer's murmur2 rule). */
  partitionOf(sliceKey: string): Promise<number>;
  /** Partitions of a topic, read once. */
  partitionsOf(topic: string): Promise<number>;
  /** The last stable offset of the slice key's checkpoint partition, as of at most `lsoMaxAgeMs` ago. */
  lastStableOffset(sliceKey: string): Promise<string>;
  /** The last committed checkpoint of a slice from `readFrom` (inclusive) to a probe appended now. */
  readCommitted<S>(sliceKey: string, readFrom?: string): Promise<SliceCheckpoint<S> | null>;
  close(): Promise<void>;
}

/**
 * The last stable offsets of the checkpoint partitions, read at most every `lsoMaxAgeMs`: an older one is still a
 * safe start for a slice that has not committed yet (its first checkpoint lands above the LSO of now, which is above
 * any earlier one), and a slice open no longer costs a ListOffsets (+ Metadata) round trip.
 */
function lastStableOffsets(
  o: CheckpointReaderOptions,
  admin: { get(): Promise<Admin> },
  partitionOf: (sliceKey: string) => Promise<number>,
): (sliceKey: string) => Promise<string> {
  let lso: { at: number; offsets: Promise<Map<number, string>> } | undefined;
  return async (sliceKey) => {
    const partition = await partitionOf(sliceKey);
    const now = Date.now();
    if (lso === undefined || now - lso.at >= o.lsoMaxAgeMs) {
      const entry = {
        at: now,
        // `high` from ListOffsets(read_committed) is the last stable offset.
        offsets: retryRetriable(async () => fetchTopicOffsets(await admin.get(), o.checkpointTopic)).then(
          (list) => new Map(list.map((x) => [x.partition, x.high])),
        ),
      };
      entry.offsets.catch(() => {
        if (lso === entry) lso = undefined;
      });
      lso = entry;
    }
    return (await lso.offsets).get(partition) ?? '0';
  };
}

/**
 * One past a probe record (a tombstone under {@link CHECKPOINT_PROBE_KEY}) appended now: every checkpoint of a
 * slice fenced before the call lies below it. The read_committed reader passes the probe only once every
 * transaction that began before it has ended (milliseconds, up to a dead owner's transaction timeout).
 */
async function probeEnd(
  o: CheckpointReaderOptions,
  probeProducer: { get(): Promise<Producer> },
  partition: number,
): Promise<bigint> {
  const answers = await retryRetriable(async () =>
    (await probeProducer.get()).send({
      topic: o.checkpointTopic,
      acks: -1,
      timeout: o.requestTimeoutMs,
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

/** The slice's last checkpoint in `[from, end)` of its partition (read_committed, one throw-away group). */
async function readRange<S>(
  o: CheckpointReaderOptions,
  admin: { get(): Promise<Admin> },
  sliceKey: string,
  partition: number,
  from: bigint,
  end: bigint,
): Promise<SliceCheckpoint<S> | null> {
  let last: SliceCheckpoint<S> | null = null;
  await readPartitionRange(
    {
      kafka: o.kafka,
      topic: o.checkpointTopic,
      partition,
      from,
      to: end,
      groupId: `${o.groupIdPrefix}.recover.${randomUUID()}`,
      idleTimeoutMs: o.recoveryTimeoutMs,
      stalled: () =>
        new ServiceError(
          `the recovery read of slice ${sliceKey} made no progress for ${o.recoveryTimeoutMs} ms (offset < ${end})`,
          'kafka',
          { retriable: true },
        ),
      deleteGroup: async (groupId) => (await admin.get()).deleteGroups([groupId]),
      maxWaitTimeInMs: 50,
      retries: 3,
    },
    (m) => {
      if (m.key?.toString() !== sliceKey || m.value === null) return;
      const v = JSON.parse(m.value.toString()) as { seq: number; state: S; session?: string };
      last = {
        sliceKey,
        seq: v.seq,
        state: v.state,
        ...(typeof v.session === 'string' ? { session: v.session } : {}),
        partition,
        offset: m.offset,
      };
    },
  );
  return last;
}

export function createCheckpointReader(o: CheckpointReaderOptions): CheckpointReader {
  const admin = lazyConnected<Admin>(() => o.kafka.admin(), "the checkpoint reader's admin client");
  // A plain producer for the end probes of recovery reads (acks all, not transactional).
  const probeProducer = lazyConnected<Producer>(
    () => o.kafka.producer({ allowAutoTopicCreation: false, retry: o.retry }),
    "the checkpoint reader's probe producer",
  );
  const partitioner = loadKafkajs().Partitioners.DefaultPartitioner();
  const topicPartitions = new Map<string, number>();

  async function partitionsOf(topic: string): Promise<number> {
    const known = topicPartitions.get(topic);
    if (known !== undefined) return known;
    const meta = await (await admin.get()).fetchTopicMetadata({ topics: [topic] });
    const n = meta.topics[0]?.partitions.length ?? 0;
    if (n === 0)
      throw new ServiceError(`topic ${topic} has no partitions (run \`gamedata topics create\`)`, 'kafka');
    topicPartitions.set(topic, n);
    return n;
  }

  async function partitionOf(sliceKey: string): Promise<number> {
    const partitions = await partitionsOf(o.checkpointTopic);
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

  const lastStableOffset = lastStableOffsets(o, admin, partitionOf);

  async function readCommitted<S>(sliceKey: string, readFrom?: string): Promise<SliceCheckpoint<S> | null> {
    const partition = await partitionOf(sliceKey);
    const offsets = await retryRetriable(async () => fetchTopicOffsets(await admin.get(), o.checkpointTopic));
    const p = offsets.find((x) => x.partition === partition);
    if (p === undefined) return null;
    const low = BigInt(p.low);
    const from = readFrom === undefined ? low : BigInt(readFrom) > low ? BigInt(readFrom) : low;
    const end = await probeEnd(o, probeProducer, partition);
    if (from >= end) return null;
    return readRange<S>(o, admin, sliceKey, partition, from, end);
  }

  return {
    partitionOf,
    partitionsOf,
    lastStableOffset,
    readCommitted,
    async close() {
      await admin.close();
      await probeProducer.close();
    },
  };
}
