/**
 * A process's few long-lived transactional producers, each committing the slices bound to it in SHARED transactions
 * (group commit: the shape of Kafka Streams' EOS v2, one producer per thread and one transaction across its tasks).
 * Before, every slice made its own producer with its own transactional.id (connect, InitProducerId, disconnect:
 * ~11 ms of worker CPU a slice) and committed alone (AddPartitionsToTxn, a produce per partition, EndTxn per page);
 * now a transaction carries whatever the bound slices asked to commit while the previous one was on its way, so its
 * requests are paid once for many slices' pages, and the transactional.ids on the brokers are processes x pool size.
 *
 * Member `i` has the transactional.id `<prefix>.<member>.<i>` (`member`: the process's label leased in Redis,
 * `jobs/producer-member-lease.ts`). A member is one kafkajs producer, connected once, InitProducerId once per
 * generation (its first transaction). Its generation ends when it is fenced (another owner of a slice bound to it
 * fenced its id) or when a transaction's end is unknown (an abort that failed): the producer is replaced, and every
 * commit of the old generation fails, so a replaced producer never commits anything of a slice it served before.
 *
 * Transactions of one member run one at a time; commits queued meanwhile go into the next one, which lingers a
 * little for the member's other slices ({@link transactionLinger}). One partition per produce request
 * (`transaction-requests.ts`), the checkpoints last.
 *
 * The parts: a member's producer life in `pool-member.ts`, a transaction's produce requests in
 * `produce-transaction.ts`; here the binding of slices to members, the queue, the linger and the EndTxn.
 */
import type { Kafka } from 'kafkajs';
import {
  ClosedError,
  ControlCallTimeoutError,
  PoolCommitError,
  ProducerReplacedError,
  ServiceError,
} from '../../../foundation/errors/index.js';
import type { TransactionPartitions } from '../kafkajs-patches/transaction-partitions.js';
import type { SinkMessage } from '../producer/wire-format.js';
import {
  beginDrain,
  endCommittedTransaction,
  endDrain,
  endFailedTransaction,
  lingerMember,
  memberTransaction,
  newMember,
  renewMember,
  replaceMember,
} from './pool-member.js';
import type { Member, Queued } from './pool-member.js';
import { produceTransaction } from './produce-transaction.js';
import { controlDeadlineMs, withDeadline } from './control-deadline.js';
import type { SliceCommit } from './transaction-requests.js';

export type { SliceCommit } from './transaction-requests.js';

export interface ProducerPoolOptions {
  /** The one kafkajs client of the publisher (`createKafkaClient`). */
  kafka: Kafka;
  /** The transactional.id of member `index` (read again for each generation: the member label may move). */
  transactionalId: (index: number) => string;
  /** Members (producers) of the pool; slices are spread over them. */
  size: number;
  /** The broker aborts a transaction open this long. */
  transactionTimeoutMs: number;
  /** The transactional producer's retry settings. */
  retry: { retries: number; initialRetryTime: number; maxRetryTime: number };
  /** Produce request timeout (acks = all). */
  requestTimeoutMs: number;
  /** Largest produce request. */
  maxBatchBytes: number;
  /** Partitions of a topic. */
  partitionsOf: (topic: string) => Promise<number>;
  /** The partition of a message (the producer's murmur2 rule; keyless ones round-robin). */
  partitionFor: (topic: string, message: SinkMessage, partitions: number) => number;
  /** A transaction waits up to this long for more slices' commits ({@link transactionLinger}). */
  lingerMs: number;
  /** Commits that start a transaction at once. */
  lingerCommits: number;
  /** Test hook: after a transaction's records were sent, before EndTxn, once per slice commit in it. */
  beforeEndTxn?: ((sliceKey: string, seq: number) => Promise<void>) | undefined;
  /**
   * The announcements the AddPartitionsToTxn patch answers from (`installKafkajsPatches().transactionPartitions`):
   * each transaction's partitions are announced before its first send and forgotten after its end.
   */
  transactionPartitions: TransactionPartitions;
  /** Turns a failure into the error the committers get. */
  toError: (error: unknown, action: string) => Error;
  /** Whether a failure says the producer was fenced. */
  isFenced: (error: unknown) => boolean;
}

/** A slice's place on a member: the id and generation its commits must go through. */
export interface PoolBinding {
  readonly index: number;
  readonly transactionalId: string;
  readonly generation: number;
}

export interface ProducerPool {
  /** Binds a slice to the member with the fewest slices. */
  bind(sliceKey: string): PoolBinding;
  /** Unbinds it. */
  unbind(binding: PoolBinding, sliceKey: string): void;
  /** Whether the binding's generation still stands. */
  alive(binding: PoolBinding): boolean;
  /** Initialises the member's producer (InitProducerId: the fence of earlier generations); no-op once done. */
  ready(binding: PoolBinding): Promise<void>;
  /**
   * Commits a slice's pages and checkpoint in the member's next transaction (shared with the other slices' commits
   * queued meanwhile); resolves with the checkpoint's partition and offset once the transaction committed.
   * @throws PoolCommitError (nothing of the transaction is visible to read_committed readers)
   */
  commit(binding: PoolBinding, commit: SliceCommit): Promise<{ partition: number; offset: string }>;
  /** This pool's member with that id: `alive` (initialised in its current generation) and whether it has the slice. */
  find(transactionalId: string, sliceKey: string): { alive: boolean; hasSlice: boolean } | undefined;
  /** Producers made (transactional.ids used), transactions committed. */
  readonly stats: { producers: number; transactions: number; commits: number };
  close(): Promise<void>;
}

/**
 * How long a member's next transaction waits for more commits: `lingerMs` while fewer than `lingerCommits` are
 * queued and more of the member's bound slices could still join; 0 when enough are queued, or when every bound
 * slice has asked already (a lone slice waits for nobody). As a producer's linger.ms: fewer, larger transactions,
 * each paying its AddPartitionsToTxn, produce requests, EndTxn and the brokers' markers once for more pages.
 */
export function transactionLinger(
  queued: number,
  boundSlices: number,
  o: { lingerMs: number; lingerCommits: number },
): number {
  return o.lingerMs > 0 && queued < Math.min(o.lingerCommits, boundSlices) ? o.lingerMs : 0;
}

/** The pool's state, shared by its parts below. */
interface PoolState {
  o: ProducerPoolOptions;
  members: Member[];
  stats: { producers: number; transactions: number; commits: number };
  closed: boolean;
}

/** Member `index`, made on first use. */
function memberAt(pool: PoolState, index: number): Member {
  let m = pool.members[index];
  if (m === undefined) {
    m = newMember(index, pool.o.transactionalId(index));
    pool.members[index] = m;
  }
  return m;
}

/** One shared transaction of `batch` on member `m`: produce, EndTxn, each commit told its checkpoint's offset. */
async function runTransaction(pool: PoolState, m: Member, batch: Queued[]): Promise<void> {
  const { o, stats } = pool;
  const generation = m.generation;
  const transactionalId = m.transactionalId;
  const deadlineMs = controlDeadlineMs(o.transactionTimeoutMs);
  try {
    const txn = await memberTransaction(m, o, stats);
    const offsets = await withDeadline(
      `sending a transaction of ${transactionalId}`,
      deadlineMs,
      produceTransaction(
        txn,
        transactionalId,
        batch.map((q) => q.commit),
        o,
      ),
    );
    if (o.beforeEndTxn !== undefined)
      for (const q of batch) await o.beforeEndTxn(q.commit.sliceKey, q.commit.seq);
    await withDeadline(`committing a transaction of ${transactionalId}`, deadlineMs, txn.commit());
    endCommittedTransaction(m);
    stats.transactions += 1;
    stats.commits += batch.length;
    for (const q of batch)
      q.resolve(
        offsets.get(q.commit.checkpoint.message) ?? {
          partition: q.commit.checkpoint.partition,
          offset: '0',
        },
      );
  } catch (error) {
    const fenced = o.isFenced(error);
    // A control call past its deadline: the producer's state is unknown, so it is replaced (not aborted).
    if (error instanceof ControlCallTimeoutError) await replaceMember(m);
    else await endFailedTransaction(m, generation, fenced, deadlineMs);
    const e = new PoolCommitError(o.toError(error, 'committing a transaction'), fenced);
    for (const q of batch) q.reject(e);
  } finally {
    o.transactionPartitions.forget(transactionalId);
  }
}

/** Ends a member's linger once it has nothing more to wait for (enough commits queued, or no slice left to ask). */
function wakeIfReady(pool: PoolState, m: Member): void {
  if (m.wake !== undefined && transactionLinger(m.queue.length, m.slices.size, pool.o) === 0) m.wake();
}

/** Runs the member's queued commits, one transaction at a time, each taking everything queued meanwhile. */
async function drainMember(pool: PoolState, m: Member): Promise<void> {
  if (!beginDrain(m)) return;
  try {
    while (m.queue.length > 0) {
      // Linger for the commits of the other slices bound here; woken early once enough have come.
      const ms = transactionLinger(m.queue.length, m.slices.size, pool.o);
      if (ms > 0 && !pool.closed) await lingerMember(m, ms);
      const batch: Queued[] = [];
      for (const q of m.queue.splice(0)) {
        // Commits of a generation that ended (fenced, replaced) never go through its successor.
        if (m.alive && q.generation === m.generation) batch.push(q);
        else q.reject(new PoolCommitError(new ProducerReplacedError(m.transactionalId), true));
      }
      if (batch.length > 0) await runTransaction(pool, m, batch);
    }
  } finally {
    endDrain(m);
  }
}

/** The member of `binding` while its generation stands. */
function boundMember(pool: PoolState, binding: PoolBinding): Member | undefined {
  const m = pool.members[binding.index];
  return m !== undefined && m.alive && m.generation === binding.generation ? m : undefined;
}

export function createProducerPool(o: ProducerPoolOptions): ProducerPool {
  const pool: PoolState = {
    o,
    members: [],
    stats: { producers: 0, transactions: 0, commits: 0 },
    closed: false,
  };
  const { members } = pool;
  return {
    bind(sliceKey) {
      if (pool.closed) throw new ClosedError('the producer pool is closed');
      // The member with the fewest slices among those without a session of this slice: a second session of one
      // slice in this process (BullMQ gave a stalled job to the worker that still runs it) must not share the id
      // of the first, or opening it would not fence the first. None free: one more member (its own id).
      let best: Member | undefined;
      for (let i = 0; i < Math.max(o.size, members.length); i++) {
        const m = memberAt(pool, i);
        if (m.slices.has(sliceKey)) continue;
        if (best === undefined || m.slices.size < best.slices.size) best = m;
      }
      best ??= memberAt(pool, members.length);
      if (!pool.closed) renewMember(best, o.transactionalId);
      best.slices.set(sliceKey, (best.slices.get(sliceKey) ?? 0) + 1);
      return { index: best.index, transactionalId: best.transactionalId, generation: best.generation };
    },
    unbind(binding, sliceKey) {
      const m = members[binding.index];
      if (m === undefined) return;
      const n = (m.slices.get(sliceKey) ?? 1) - 1;
      if (n <= 0) m.slices.delete(sliceKey);
      else m.slices.set(sliceKey, n);
      // One fewer slice may join: a linger waiting for it ends.
      wakeIfReady(pool, m);
    },
    alive: (binding) => boundMember(pool, binding) !== undefined,
    async ready(binding) {
      const m = boundMember(pool, binding);
      if (m === undefined)
        throw new PoolCommitError(new ProducerReplacedError(binding.transactionalId), true);
      if (m.initialized) return;
      try {
        await memberTransaction(m, o, pool.stats);
      } catch (error) {
        const fenced = o.isFenced(error);
        if (fenced || error instanceof ControlCallTimeoutError) await replaceMember(m);
        throw new PoolCommitError(o.toError(error, `initialising producer ${m.transactionalId}`), fenced);
      }
    },
    commit(binding, commit) {
      const m = boundMember(pool, binding);
      if (m === undefined)
        return Promise.reject(new PoolCommitError(new ProducerReplacedError(binding.transactionalId), true));
      return new Promise((resolve, reject) => {
        m.queue.push({ commit, generation: binding.generation, resolve, reject });
        wakeIfReady(pool, m);
        void drainMember(pool, m);
      });
    },
    find(transactionalId, sliceKey) {
      const m = members.find((x) => x.transactionalId === transactionalId);
      return m === undefined
        ? undefined
        : { alive: m.alive && m.initialized, hasSlice: m.slices.has(sliceKey) };
    },
    get stats() {
      return { ...pool.stats };
    },
    async close() {
      pool.closed = true;
      for (const m of members) m.wake?.();
      // Commits still queued fail (nothing of them was sent); a transaction on its way ends with its producer.
      for (const m of members)
        for (const q of m.queue.splice(0))
          q.reject(new PoolCommitError(new ServiceError('the producer pool was closed', 'kafka'), false));
      await Promise.all(members.map((m) => replaceMember(m)));
    },
  };
}
