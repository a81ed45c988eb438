/**
 * Reads a topic from the beginning up to the ends taken at the start (so the read ends even while producers keep
 * writing), with a throw-away consumer group that is deleted afterwards. It reads as a read_committed consumer:
 * up to the last stable offset (`fetchTopicOffsets().high` is the LSO in kafkajs), records of aborted or open
 * transactions skipped. A batch that filtering emptied (only commit markers or aborted records, which is how a
 * partition ends after a transaction) never reaches `eachBatch`, so progress is tracked on END_BATCH_PROCESS.
 * `recordOffsets` reads one partition's range through `readPartitionRange` (read-partition-range.ts), as the
 * checkpoint recovery read does.
 *
 * A commit returns before its markers are on the partitions: Kafka's coordinator answers the producer once the commit
 * is decided and writes the markers after, so for a moment the LSO still stops before the records of a transaction
 * that has committed (a test that read right after its last commit once got 8 of 12 records). The ends are therefore
 * looked at a second time when the read is done, and what lies between the two looks is read too: a read started
 * after a commit returned gets its records.
 */
import { randomUUID } from 'node:crypto';
import type { Admin, Consumer, Kafka, KafkaMessage } from 'kafkajs';
import { securityFailure } from '../../../foundation/config/index.js';
import { createKafkaClient } from '../kafka-client.js';
import { resolveKafkaOptions } from '../kafka-options.js';
import { toKafkaError } from '../kafka-error.js';
import { ServiceError } from '../../../foundation/errors/index.js';
import { readPartitionRange } from './read-partition-range.js';
import { fetchTopicOffsets, retryRetriable } from '../admin/retry-retriable.js';

export interface TopicMessage {
  partition: number;
  offset: string;
  key: Buffer | null;
  value: Buffer | null;
  headers: Record<string, string>;
  /** The record's timestamp (ms, as the producer set it). */
  timestamp: string;
  /** The producer id of its record batch ('-1' when not idempotent): which producer wrote it. */
  producerId: string;
  /** The producer epoch of its record batch (-1 when not idempotent): which owner of a transactional.id. */
  producerEpoch: number;
}

export interface ReadTopicOptions {
  brokers: readonly string[];
  topic: string;
  /** Give up when no progress for this long. @default 60000 */
  idleTimeoutMs?: number;
  /**
   * Read records of aborted transactions too (read_uncommitted), e.g. to show that a test really aborted some.
   * Still only up to the ends taken at the start (the LSO). @default false
   */
  readUncommitted?: boolean;
  /**
   * Filled in as the read goes: how often the reader's group was joined again (kafkajs then fetches from the last
   * committed offset) and how many messages came again that way (skipped, never delivered twice).
   */
  stats?: ReadTopicStats;
}

/** What {@link readTopic} met on its way (see {@link ReadTopicOptions.stats}). */
export interface ReadTopicStats {
  rejoins: number;
  refetched: number;
}

/** The record batch fields kafkajs decodes but does not type. */
/** A fetched record as {@link TopicMessage}: header values as strings, the producer from its batch. */
function topicMessage(partition: number, m: KafkaMessage): TopicMessage {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(m.headers ?? {})) if (v !== undefined) headers[k] = v.toString();
  return {
    partition,
    offset: m.offset,
    key: m.key,
    value: m.value,
    headers,
    timestamp: m.timestamp,
    producerId: batchContext(m)?.producerId ?? '-1',
    producerEpoch: batchContext(m)?.producerEpoch ?? -1,
  };
}

function batchContext(m: object): { producerId?: string; producerEpoch?: number } | undefined {
  return (m as { batchContext?: { producerId?: string; producerEpoch?: number } }).batchContext;
}

/**
 * Throws a ServiceError (not retriable) when the topic is missing from the list because the user is not authorised
 * to see it; a topic that does not exist passes (no retries: it is asked once, and never auto-created by an admin).
 */
async function assertNotForbidden(kafka: Kafka, options: ReadTopicOptions): Promise<void> {
  const probe = kafka.admin({ retry: { retries: 0 } });
  await probe.connect();
  try {
    await probe.fetchTopicMetadata({ topics: [options.topic] });
  } catch (error) {
    if (securityFailure(error)?.kind === 'authorisation')
      throw toKafkaError(error, options.brokers, `reading ${options.topic}`);
  } finally {
    await probe.disconnect();
  }
}

/**
 * Runs `consumer` (subscribed to nothing yet) over the topic until every partition in `remaining` reached its end
 * offset, calling `onMessage` once per record; returns how many.
 * @throws ServiceError when the read makes no progress for `idleTimeoutMs`
 */
async function consumeToEnd(
  consumer: Consumer,
  options: ReadTopicOptions,
  remaining: Map<number, bigint>,
  onMessage: (m: TopicMessage) => void | Promise<void>,
): Promise<number> {
  let count = 0;
  // The offset after the last message delivered, per partition. kafkajs starts a partition again from the group's
  // committed offset whenever the group is joined again (a rebalance), and a medium chaos run's verification once
  // read 648 k of 1 M transactions twice that way (its "duplicates", and minutes): so progress is committed as the
  // read goes (the group is thrown away afterwards) and a message below this mark is never delivered twice.
  const delivered = new Map<number, bigint>();
  await consumer.connect();
  await consumer.subscribe({ topic: options.topic, fromBeginning: true });
  await new Promise<void>((resolve, reject) => {
    let idle: NodeJS.Timeout | undefined;
    const arm = (): void => {
      if (idle) clearTimeout(idle);
      idle = setTimeout(
        () =>
          reject(
            new ServiceError(
              `reading ${options.topic} made no progress for ${options.idleTimeoutMs ?? 60_000} ms`,
              'kafka',
            ),
          ),
        options.idleTimeoutMs ?? 60_000,
      );
    };
    arm();
    const reached = (partition: number, lastOffset: string): void => {
      const high = remaining.get(partition);
      if (high === undefined || BigInt(lastOffset) + 1n < high) return;
      remaining.delete(partition);
      if (remaining.size === 0) {
        if (idle) clearTimeout(idle);
        resolve();
      }
    };
    let joins = 0;
    consumer.on(consumer.events.GROUP_JOIN, () => {
      joins += 1;
      if (joins > 1 && options.stats) options.stats.rejoins += 1;
    });
    consumer.on(consumer.events.END_BATCH_PROCESS, (e) => {
      if (e.payload.topic !== options.topic) return;
      arm();
      reached(e.payload.partition, e.payload.lastOffset);
    });
    consumer
      .run({
        autoCommit: true,
        eachBatchAutoResolve: true,
        eachBatch: async ({ batch }) => {
          const high = remaining.get(batch.partition);
          if (high === undefined) return;
          for (const m of batch.messages) {
            const offset = BigInt(m.offset);
            if (offset >= high) break;
            if (offset < (delivered.get(batch.partition) ?? 0n)) {
              if (options.stats) options.stats.refetched += 1;
              continue;
            }
            delivered.set(batch.partition, offset + 1n);
            await onMessage(topicMessage(batch.partition, m));
            count += 1;
          }
          arm();
          const last = batch.messages[batch.messages.length - 1];
          if (last !== undefined) reached(batch.partition, last.offset);
        },
      })
      .catch(reject);
  });
  return count;
}

/** Each partition's first and end offsets (the end is the LSO). */
type Ends = Map<number, { low: bigint; high: bigint }>;

async function readEnds(kafka: Kafka, admin: Admin, topic: string): Promise<Ends> {
  // Right after a broker stop the partitions' leaders move: a ListOffsets answer of NOT_LEADER_FOR_PARTITION (seen
  // failing a chaos run's verification in CI) is retried through a fresh admin client, which reads fresh metadata.
  let attempt = 0;
  const offsets = await retryRetriable(async () => {
    if (attempt++ === 0) return fetchTopicOffsets(admin, topic);
    const fresh = kafka.admin();
    await fresh.connect();
    try {
      return await fetchTopicOffsets(fresh, topic);
    } finally {
      await fresh.disconnect().catch(() => undefined);
    }
  });
  return new Map(offsets.map((p) => [p.partition, { low: BigInt(p.low), high: BigInt(p.high) }]));
}

/**
 * The second look at the ends (see the module's comment): reads, per partition, what lies between the first ends and
 * the ends now, through `readPartitionRange`. Returns how many messages it delivered.
 */
async function readPastFirstEnds(
  kafka: Kafka,
  admin: Admin,
  options: ReadTopicOptions,
  first: Ends,
  onMessage: (m: TopicMessage) => void | Promise<void>,
): Promise<number> {
  const now = await readEnds(kafka, admin, options.topic);
  const idleMs = options.idleTimeoutMs ?? 60_000;
  let count = 0;
  for (const [partition, end] of now) {
    const from = first.get(partition)?.high ?? end.low;
    if (end.high <= from) continue;
    const found: KafkaMessage[] = [];
    await readPartitionRange(
      {
        kafka,
        topic: options.topic,
        partition,
        from,
        to: end.high,
        groupId: `gamedata-verify-${randomUUID()}`,
        idleTimeoutMs: idleMs,
        stalled: () =>
          new ServiceError(
            `reading ${options.topic}[${partition}] made no progress for ${idleMs} ms`,
            'kafka',
          ),
        deleteGroup: (groupId) => admin.deleteGroups([groupId]),
        maxWaitTimeInMs: 200,
      },
      (m) => found.push(m),
    );
    for (const m of found) await onMessage(topicMessage(partition, m));
    count += found.length;
  }
  return count;
}

/**
 * Calls `onMessage` for every message of the topic up to its current end. Returns the count. Read committed, with the
 * project's filter (kafkajs-patches/read-committed-filter.ts), which `createKafkaClient` installs.
 */
export async function readTopic(
  options: ReadTopicOptions,
  onMessage: (m: TopicMessage) => void | Promise<void>,
): Promise<number> {
  const kafka = createKafkaClient(
    resolveKafkaOptions({ clientId: 'gamedata-verify', brokers: options.brokers }),
  );
  const admin = kafka.admin();
  await admin.connect();
  try {
    const topics = await admin.listTopics();
    if (!topics.includes(options.topic)) {
      // Brokers with ACLs leave out of the list the topics a user may not describe: that is not an empty topic.
      await assertNotForbidden(kafka, options);
      return 0;
    }
    const first = await readEnds(kafka, admin, options.topic);
    const remaining = new Map<number, bigint>();
    for (const [partition, end] of first) if (end.high > end.low) remaining.set(partition, end.high);
    let count = 0;
    if (remaining.size > 0) {
      const groupId = `gamedata-verify-${randomUUID()}`;
      const consumer = kafka.consumer({
        groupId,
        maxBytes: 20 * 1024 * 1024,
        readUncommitted: options.readUncommitted ?? false,
        // A fetch to a broker with nothing more to give waits this long; the read's end waits for it.
        maxWaitTimeInMs: 200,
      });
      try {
        count = await consumeToEnd(consumer, options, remaining, onMessage);
      } finally {
        await consumer.disconnect().catch(() => undefined);
        await admin.deleteGroups([groupId]).catch(() => undefined);
      }
    }
    if (options.readUncommitted === true) return count;
    return count + (await readPastFirstEnds(kafka, admin, options, first, onMessage));
  } finally {
    await admin.disconnect();
  }
}

export interface RecordOffsetsOptions {
  brokers: readonly string[];
  topic: string;
  partition: number;
  /** First offset (inclusive). */
  from: number;
  /** End offset (exclusive), at most the partition's last stable offset. */
  to: number;
  /** Give up when no progress for this long. @default 30000 */
  idleTimeoutMs?: number;
}

/**
 * The offsets of the records a read_committed consumer gets in `[from, to)` of one partition: transaction markers
 * and records of aborted transactions take offsets too, and are not among them. (A sink's committed offset stops
 * before the commit marker that ends a partition; this tells such a gap from one that still holds records.)
 */
export async function recordOffsets(options: RecordOffsetsOptions): Promise<number[]> {
  if (options.to <= options.from) return [];
  const kafka = createKafkaClient(
    resolveKafkaOptions({ clientId: 'gamedata-offsets', brokers: options.brokers }),
  );
  const admin = kafka.admin();
  const found: number[] = [];
  const idleMs = options.idleTimeoutMs ?? 30_000;
  try {
    await admin.connect();
    await readPartitionRange(
      {
        kafka,
        topic: options.topic,
        partition: options.partition,
        from: BigInt(options.from),
        to: BigInt(options.to),
        groupId: `gamedata-offsets-${randomUUID()}`,
        idleTimeoutMs: idleMs,
        stalled: () =>
          new ServiceError(
            `reading ${options.topic}[${options.partition}] ${options.from}..${options.to} made no progress for ${idleMs} ms`,
            'kafka',
            { retriable: true },
          ),
        deleteGroup: (groupId) => admin.deleteGroups([groupId]),
        maxWaitTimeInMs: 100,
      },
      (m) => found.push(Number(m.offset)),
    );
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
  return found;
}
