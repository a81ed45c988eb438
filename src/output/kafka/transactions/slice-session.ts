/**
 * One slice's session on the exactly-once path: opening it (record this producer's id as an owner, fence every
 * earlier owner, initialise the producer, then read the last committed checkpoint, exact after the fence), its pages
 * buffered until `commit()` hands them and the checkpoint to the pool's next shared transaction, and its close.
 */
import { randomBytes } from 'node:crypto';
import { PoolCommitError, ServiceError, SliceFencedError } from '../../../foundation/errors/index.js';
import type { SliceCheckpoint } from './checkpoint-reader.js';
import type { PoolBinding, ProducerPool } from './producer-pool.js';
import { errorText, isFencingError } from './slice-fencing.js';
import type { SliceFencing } from './slice-fencing.js';
import type { SliceOwners } from './slice-owners.js';
import type { TransactionalPage } from './transaction-requests.js';

export interface SliceSession<S> {
  /** The last committed checkpoint found when the slice was opened (after the fence); null = none. */
  readonly recovered: SliceCheckpoint<S> | null;
  /** Sequence number the next page gets. */
  readonly nextSeq: number;
  /** The transactional.id this session's pages commit through (a page key's writer, see `fenceWriter`). */
  readonly owner: string;
  /**
   * This session's own name (12 hex digits, new for every session): written into each checkpoint it commits and into
   * its page keys, so whoever resolves a page knows whether the checkpoint was committed by the page's session.
   */
  readonly token: string;
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

/** What a session works with (the publisher's parts). */
export interface SliceSessionDeps {
  pool: ProducerPool;
  owners: SliceOwners;
  fenceOwners: SliceFencing['fenceOwners'];
  /** The recovery read (errors as the publisher throws them). */
  readCommitted<S>(sliceKey: string, readFrom?: string): Promise<SliceCheckpoint<S> | null>;
  /** The checkpoint partition of a slice key. */
  partitionOf(sliceKey: string): Promise<number>;
  checkpointTopic: string;
  kafkaError: (error: unknown, action: string) => Error;
  /**
   * The tokens of this process's sessions that may still commit (open, or closed with a commit on its way): the
   * publisher's `sessionLive`.
   */
  live: Set<string>;
}

/** Takes a slice: fences every earlier owner, then reads its last committed checkpoint (read_committed). */
export async function openSliceSession<S>(
  d: SliceSessionDeps,
  sliceKey: string,
  openOptions: OpenSliceOptions = {},
): Promise<SliceSession<S>> {
  const binding = d.pool.bind(sliceKey);
  const recovered = await takeSlice<S>(d, sliceKey, binding, openOptions);
  return sliceSession(d, sliceKey, binding, recovered);
}

/** The fence, then the recovery read; on failure the binding and the recorded id are given back. */
async function takeSlice<S>(
  d: SliceSessionDeps,
  sliceKey: string,
  binding: PoolBinding,
  openOptions: OpenSliceOptions,
): Promise<SliceCheckpoint<S> | null> {
  const id = binding.transactionalId;
  try {
    // Our id is recorded before anything of this slice goes into a transaction of ours; then every earlier owner
    // is fenced, so the read below is exact: nothing can commit a checkpoint of this slice behind it.
    const others = await d.owners.enter(sliceKey, id);
    await d.fenceOwners(sliceKey, others, id);
    // The member's InitProducerId (once per producer) before the read: a failure to reach Kafka shows here.
    await d.pool.ready(binding);
    const readFrom = await openOptions.readFrom?.();
    return readFrom === undefined ? null : await d.readCommitted<S>(sliceKey, readFrom);
  } catch (error) {
    d.pool.unbind(binding, sliceKey);
    await d.owners.leave(sliceKey, [id]).catch(() => undefined);
    throw unwrap(d, error, sliceKey, `opening slice ${sliceKey}`);
  }
}

/** The session of a taken slice: pages buffered until `commit()`, which hands them to the pool. */
function sliceSession<S>(
  d: SliceSessionDeps,
  sliceKey: string,
  binding: PoolBinding,
  recovered: SliceCheckpoint<S> | null,
): SliceSession<S> {
  const id = binding.transactionalId;
  const token = randomBytes(6).toString('hex');
  d.live.add(token);
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
    token,
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
      if (!d.pool.alive(binding)) {
        nextSeq = committedSeq + 1;
        throw fencedError('its producer was replaced');
      }
      committing += 1;
      try {
        const at = await d.pool.commit(binding, {
          sliceKey,
          seq,
          pages,
          checkpoint: {
            topic: d.checkpointTopic,
            partition: await d.partitionOf(sliceKey),
            message: { key: sliceKey, value: JSON.stringify({ seq, state, session: token }) },
          },
        });
        committedSeq = seq;
        return { sliceKey, seq, state, partition: at.partition, offset: at.offset };
      } catch (error) {
        // Nothing of this transaction is visible; the slice must be opened again to go on.
        nextSeq = committedSeq + 1;
        if (error instanceof PoolCommitError && error.fenced) throw fencedError('commit', error.error);
        throw unwrap(d, error, sliceKey, `commit of slice ${sliceKey}`);
      } finally {
        committing -= 1;
        if (closed && committing === 0) d.live.delete(token);
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      pending = [];
      d.pool.unbind(binding, sliceKey);
      // Pages are sent only inside a commit, and every commit of this session has ended (committed, aborted, or
      // its producer replaced: a replaced generation commits nothing more; a commit whose EndTxn was already on
      // the broker is waited for by the next owner's recovery read). So our id no longer holds anything of this
      // slice that a new owner would have to fence.
      if (committing > 0) return;
      d.live.delete(token);
      await d.owners.leave(sliceKey, [id]).catch(() => undefined);
    },
  };
}

/** The error to throw for a failure of the pool (its committers' view) or of Kafka. */
function unwrap(d: SliceSessionDeps, error: unknown, sliceKey: string, action: string): Error {
  if (error instanceof PoolCommitError)
    return error.fenced
      ? new SliceFencedError(`${action}: ${error.message}`, sliceKey, { cause: error.error })
      : error.error;
  if (error instanceof SliceFencedError) return error;
  if (isFencingError(error))
    return new SliceFencedError(`${action}: ${errorText(error).trim()}`, sliceKey, { cause: error });
  return d.kafkaError(error, action);
}
