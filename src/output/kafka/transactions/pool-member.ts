/**
 * One member of the producer pool (`producer-pool.ts`): a transactional producer under one transactional.id, its
 * generation, the slices bound to it and the commits queued for its next transaction. Here: its producer's life —
 * connected once, InitProducerId once per generation (its first transaction), replaced when fenced or when a
 * transaction's end is unknown, renewed under the member label in force — and the two flags of its drain (one drain
 * at a time, a linger that can be woken early). A member's fields are assigned only here; the pool binds slices and
 * queues commits in the member's collections.
 */
import type { Kafka, Producer, Transaction } from 'kafkajs';
import { givenPartitioner } from '../producer/partitioner.js';
import { controlDeadlineMs, withDeadline } from './control-deadline.js';
import type { SliceCommit } from './transaction-requests.js';

/** A commit waiting for the member's next transaction. */
export interface Queued {
  commit: SliceCommit;
  generation: number;
  resolve: (at: { partition: number; offset: string }) => void;
  reject: (error: Error) => void;
}

export interface Member {
  index: number;
  transactionalId: string;
  generation: number;
  alive: boolean;
  initialized: boolean;
  producer: Producer | undefined;
  connecting: Promise<Producer> | undefined;
  txn: Promise<Transaction> | undefined;
  slices: Map<string, number>;
  queue: Queued[];
  /** A drain of the queue runs ({@link beginDrain}). */
  draining: boolean;
  /** Ends the linger before the member's next transaction (set while it lingers). */
  wake: (() => void) | undefined;
}

/** What a member's producer is made with (the pool's options). */
export interface MemberProducerOptions {
  kafka: Kafka;
  transactionTimeoutMs: number;
  retry: { retries: number; initialRetryTime: number; maxRetryTime: number };
}

/** A new member, not connected. */
export function newMember(index: number, transactionalId: string): Member {
  return {
    index,
    transactionalId,
    generation: 0,
    alive: true,
    initialized: false,
    producer: undefined,
    connecting: undefined,
    txn: undefined,
    slices: new Map(),
    queue: [],
    draining: false,
    wake: undefined,
  };
}

/** The member's producer, connected once (`stats.producers` counts the producers made). */
export function connectMember(
  m: Member,
  o: MemberProducerOptions,
  stats: { producers: number },
): Promise<Producer> {
  m.connecting ??= (async () => {
    const producer = o.kafka.producer({
      transactionalId: m.transactionalId,
      transactionTimeout: o.transactionTimeoutMs,
      idempotent: true,
      maxInFlightRequests: 1,
      allowAutoTopicCreation: false,
      createPartitioner: givenPartitioner,
      retry: o.retry,
    });
    try {
      await producer.connect();
    } catch (error) {
      m.connecting = undefined;
      await producer.disconnect().catch(() => undefined);
      throw error;
    }
    stats.producers += 1;
    m.producer = producer;
    return producer;
  })();
  return m.connecting;
}

/** The member's current transaction, begun once (InitProducerId on the generation's first). */
export function memberTransaction(
  m: Member,
  o: MemberProducerOptions,
  stats: { producers: number },
): Promise<Transaction> {
  m.txn ??= withDeadline(
    `beginning a transaction of ${m.transactionalId}`,
    controlDeadlineMs(o.transactionTimeoutMs),
    (async () => {
      const producer = m.producer ?? (await connectMember(m, o, stats));
      const txn = await producer.transaction();
      m.initialized = true;
      return txn;
    })(),
  ).catch((error: unknown) => {
    m.txn = undefined;
    throw error;
  });
  return m.txn;
}

/** The member's transaction committed: its next commit begins another. */
export function endCommittedTransaction(m: Member): void {
  m.txn = undefined;
}

/** Marks a drain of the member's queue as running; false when one already runs (one drain at a time). */
export function beginDrain(m: Member): boolean {
  if (m.draining) return false;
  m.draining = true;
  return true;
}

/** The drain {@link beginDrain} started has ended. */
export function endDrain(m: Member): void {
  m.draining = false;
}

/** Waits up to `ms` for the member's `wake()` (its linger before its next transaction). */
export function lingerMember(m: Member, ms: number): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(() => m.wake?.(), ms);
    m.wake = () => {
      clearTimeout(timer);
      m.wake = undefined;
      resolve();
    };
  });
}

/** Ends the member's generation: the producer goes; the next use makes a new one under the label in force. */
export async function replaceMember(m: Member): Promise<void> {
  const producer = m.producer;
  const connecting = m.connecting;
  m.alive = false;
  m.initialized = false;
  m.producer = undefined;
  m.connecting = undefined;
  m.txn = undefined;
  if (producer !== undefined) await producer.disconnect().catch(() => undefined);
  else await (await connecting?.catch(() => undefined))?.disconnect().catch(() => undefined);
}

/** A replaced member's next generation, under the transactional.id its label gives now. */
export function renewMember(m: Member, transactionalId: (index: number) => string): void {
  if (m.alive) return;
  m.generation += 1;
  m.alive = true;
  m.transactionalId = transactionalId(m.index);
}

/**
 * After a failed transaction of `generation`: a fenced member is replaced; otherwise, if the member still serves
 * that generation, the transaction is aborted, and the member replaced when the abort is not confirmed (the new
 * generation's InitProducerId ends the transaction).
 */
export async function endFailedTransaction(
  m: Member,
  generation: number,
  fenced: boolean,
  deadlineMs: number,
): Promise<void> {
  if (fenced) {
    await replaceMember(m);
    return;
  }
  if (m.generation !== generation || !m.alive) return;
  const txn = await m.txn?.catch(() => undefined);
  const aborted =
    txn === undefined
      ? false
      : await withDeadline(`aborting a transaction of ${m.transactionalId}`, deadlineMs, txn.abort()).then(
          () => true,
          () => false,
        );
  m.txn = undefined;
  if (!aborted) await replaceMember(m);
}
