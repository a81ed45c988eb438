/**
 * A correct read_committed filter for kafkajs 2.2.4 consumers (our topic readers and the checkpoint recovery read).
 *
 * Kafka does not filter aborted records for a read_committed fetch: it returns the records and, per partition, the
 * aborted transactions that overlap them (`{ producerId, firstOffset }`), in the order their ABORT MARKERS were
 * written (the transaction index), not by first offset. kafkajs' `filterAbortedMessages` assumes first-offset order
 * and activates at most one aborted transaction per record, so when a transaction that began earlier was aborted
 * later than another one (two slices' transactions on one partition, the later one aborted first), the earlier
 * transaction's records before the later one's first offset pass as committed. Measured in the chaos run (3
 * brokers, broker 2 stopped): 27 records of one aborted transaction read by kafkajs and not by Kafka's Java consumer
 * (its `CompletedFetch` keeps the aborted transactions in a priority queue by first offset, as here).
 *
 * {@link markAbortedRecords} is the Java consumer's rule; {@link installReadCommittedFilter} applies it to every fetch
 * response of this process's kafkajs consumers before kafkajs builds its batches: aborted records are flagged as
 * control records (kafkajs drops those from `batch.messages` and still counts their offsets, so progress events and
 * offsets move as for markers) and the aborted-transaction list is emptied, which makes kafkajs' own filter a no-op.
 */
import { patchKafkajsMethod } from './patch-kafkajs.js';

/** A record as kafkajs' fetch decoder returns it (the fields this filter reads and sets). */
export interface FetchedRecord {
  offset: string;
  key: Buffer | null;
  isControlRecord?: boolean;
  batchContext?: { producerId?: string; inTransaction?: boolean };
}

/** One aborted transaction of a fetch response's partition. */
export interface AbortedTransaction {
  producerId: string;
  firstOffset: string;
}

const ABORT_MARKER_KEY = Buffer.from([0, 0, 0, 0]);

/**
 * Flags the records of aborted transactions as control records (in place) and returns how many: a transactional
 * record is aborted when its producer has an aborted transaction whose first offset is at or before it and whose
 * abort marker comes after it. `records` are one partition's, in offset order.
 */
export function markAbortedRecords(records: FetchedRecord[], aborted: readonly AbortedTransaction[]): number {
  if (aborted.length === 0) return 0;
  const queue = [...aborted].sort((a, b) => {
    const d = BigInt(a.firstOffset) - BigInt(b.firstOffset);
    return d < 0n ? -1 : d > 0n ? 1 : 0;
  });
  const open = new Set<string>();
  let next = 0;
  let marked = 0;
  for (const r of records) {
    const offset = BigInt(r.offset);
    while (next < queue.length && BigInt(queue[next]!.firstOffset) <= offset)
      open.add(queue[next++]!.producerId);
    const producerId = r.batchContext?.producerId;
    if (producerId === undefined || r.batchContext?.inTransaction !== true) continue;
    if (r.isControlRecord === true) {
      // The abort marker ends the producer's aborted transaction; a commit marker changes nothing here.
      if (r.key !== null && Buffer.from(r.key).equals(ABORT_MARKER_KEY)) open.delete(producerId);
      continue;
    }
    if (open.has(producerId)) {
      r.isControlRecord = true;
      marked += 1;
    }
  }
  return marked;
}

interface FetchPartition {
  messages?: FetchedRecord[];
  abortedTransactions?: AbortedTransaction[] | null;
}
type FetchResponse = { responses?: { partitions?: FetchPartition[] }[] };

/**
 * Applies {@link markAbortedRecords} to every kafkajs fetch response in this process (kafkajs' Broker.fetch, the one
 * call its consumers fetch through). Idempotent.
 * @throws Error when kafkajs has no Broker.fetch (a kafkajs other than 2.x): the readers would not be exact.
 */
export function installReadCommittedFilter(): void {
  type Fetch = (this: unknown, ...args: unknown[]) => Promise<FetchResponse>;
  patchKafkajsMethod<Fetch>(
    'kafkajs/src/broker/index.js',
    'fetch',
    'gamedata.readCommittedFilter',
    'the read_committed filter',
    (original) =>
      async function (this: unknown, ...args: unknown[]): Promise<FetchResponse> {
        const response = await original.apply(this, args);
        for (const topic of response.responses ?? []) {
          for (const p of topic.partitions ?? []) {
            if (p.abortedTransactions === undefined || p.abortedTransactions === null) continue;
            if (p.abortedTransactions.length === 0 || p.messages === undefined) continue;
            markAbortedRecords(p.messages, p.abortedTransactions);
            p.abortedTransactions = [];
          }
        }
        return response;
      },
  );
}
