/**
 * Reads one partition's offsets `[from, to)` as a read_committed consumer, through a throw-away kafkajs consumer
 * group that is deleted afterwards: the one range reader of the checkpoint recovery read
 * (`checkpoint-reader.ts`) and of `recordOffsets` (`read-topic.ts`).
 *
 * - Progress is tracked on END_BATCH_PROCESS, not in `eachBatch`: a batch that read_committed filtering emptied (only
 *   markers or aborted records, which is how a partition ends after a transaction) never reaches `eachBatch`.
 * - Each offset reaches `onMessage` at most once and in order: kafkajs starts a partition again from the group's
 *   committed offset (here: the beginning) when the group is joined again, and those messages are skipped.
 * - A read that makes no progress for `idleTimeoutMs` fails with `stalled()`'s error.
 */
import type { Consumer, Kafka, KafkaMessage } from 'kafkajs';
import { installKafkajsPatches } from '../kafkajs-patches/index.js';

export interface PartitionRangeOptions {
  kafka: Kafka;
  topic: string;
  partition: number;
  /** First offset (inclusive). */
  from: bigint;
  /** End offset (exclusive): at most the partition's last stable offset, or one past a record known to be there. */
  to: bigint;
  /** Id of the throw-away group (deleted after the read). */
  groupId: string;
  /** A read that makes no progress this long fails. */
  idleTimeoutMs: number;
  /** The error a read that made no progress for `idleTimeoutMs` fails with. */
  stalled: () => Error;
  /** Deletes the throw-away group (errors are ignored: a group left behind only costs the coordinator a little). */
  deleteGroup: (groupId: string) => Promise<unknown>;
  /** How long a fetch from a broker with nothing more to give waits (the read's end waits for it). */
  maxWaitTimeInMs: number;
  /** The consumer's retries. @default kafkajs' */
  retries?: number;
}

/** Calls `onMessage` for every record of `[from, to)` a read_committed consumer gets, once each, in offset order. */
export async function readPartitionRange(
  o: PartitionRangeOptions,
  onMessage: (m: KafkaMessage) => void,
): Promise<void> {
  if (o.to <= o.from) return;
  // kafkajs 2.2.4 lets records of some aborted transactions through a read_committed read (read-committed-filter.ts).
  // The client normally comes from createKafkaClient, which installed the patches; one made elsewhere (a test's)
  // gets them here, so the read stays exact (idempotent).
  installKafkajsPatches();
  const consumer: Consumer = o.kafka.consumer({
    groupId: o.groupId,
    readUncommitted: false,
    maxWaitTimeInMs: o.maxWaitTimeInMs,
    ...(o.retries === undefined ? {} : { retry: { retries: o.retries } }),
  });
  let next = o.from;
  let idle: NodeJS.Timeout | undefined;
  try {
    await consumer.connect();
    await consumer.subscribe({ topic: o.topic, fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      const arm = (): void => {
        if (idle) clearTimeout(idle);
        idle = setTimeout(() => reject(o.stalled()), o.idleTimeoutMs);
      };
      arm();
      consumer.on(consumer.events.END_BATCH_PROCESS, (e) => {
        if (e.payload.topic !== o.topic || e.payload.partition !== o.partition) return;
        arm();
        if (BigInt(e.payload.lastOffset) + 1n >= o.to) {
          clearTimeout(idle);
          resolve();
        }
      });
      consumer
        .run({
          autoCommit: false,
          eachBatch: async ({ batch }) => {
            if (batch.topic !== o.topic || batch.partition !== o.partition) return;
            for (const m of batch.messages) {
              const offset = BigInt(m.offset);
              if (offset >= o.to) break;
              if (offset < next) continue;
              next = offset + 1n;
              onMessage(m);
            }
            await Promise.resolve();
          },
        })
        .catch(reject);
      // After run() was called (kafkajs wants that), before its first fetch.
      consumer.seek({ topic: o.topic, partition: o.partition, offset: o.from.toString() });
    });
  } finally {
    clearTimeout(idle);
    await consumer.disconnect().catch(() => undefined);
    // One-off groups would otherwise pile up in the group coordinator.
    await o.deleteGroup(o.groupId).catch(() => undefined);
  }
}
