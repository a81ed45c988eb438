/**
 * Fencing by recorded owners (the KIP-618 part of exactly-once, per slice): the transactional.ids that may hold a
 * slice's records are recorded (`slice-owners.ts`); fencing one is an InitProducerId with it, which aborts (or
 * completes) whatever it left open and bumps its epoch, so its producer's next request fails as fenced.
 */
import type { Kafka, Producer } from 'kafkajs';
import type { ProducerPool } from './producer-pool.js';
import type { SliceOwners } from './slice-owners.js';
import { controlDeadlineMs, withDeadline } from './control-deadline.js';
import { PoolCommitError, SliceFencedError } from '../../../foundation/errors/index.js';

/** Retries of a fencing client (the publisher's producers may retry more). */
const FENCE_RETRIES = 5;

/**
 * kafkajs protocol types of a producer that a newer producer of its transactional.id fenced (or whose id the
 * coordinator no longer maps): INVALID_PRODUCER_EPOCH (47), INVALID_PRODUCER_ID_MAPPING (49), PRODUCER_FENCED (90).
 */
const FENCED_TYPES: ReadonlySet<string> = new Set([
  'INVALID_PRODUCER_EPOCH',
  'INVALID_PRODUCER_ID_MAPPING',
  'PRODUCER_FENCED',
]);
/** The broker's error codes of the same. */
const FENCED_CODES: ReadonlySet<number> = new Set([47, 49, 90]);
/**
 * kafkajs 2.2.4 does not know error code 90 (PRODUCER_FENCED, sent by newer brokers): it makes such an answer a
 * `KafkaJSProtocolError` of type `KAFKAJS_UNKNOWN_ERROR_CODE` and code -99, and keeps the broker's code only in its
 * message. The one place a message decides here, because the library gives nothing else.
 */
const UNKNOWN_CODE_MESSAGE = /^Unknown error code (\d+)$/;

/** The name, type and message of an error, for a line that says what failed (never for a decision). */
export function errorText(error: unknown): string {
  const e = error as { name?: string; message?: string; type?: string; cause?: { message?: string } } | null;
  return `${e?.name ?? ''} ${e?.type ?? ''} ${e?.message ?? String(error)} ${e?.cause?.message ?? ''}`;
}

/** `error` and its causes (kafkajs' retrier wraps: KafkaJSNonRetriableError, KafkaJSNumberOfRetriesExceeded). */
function causes(error: unknown): object[] {
  const out: object[] = [];
  for (let e: unknown = error, depth = 0; e !== null && typeof e === 'object' && depth < 6; depth += 1) {
    out.push(e);
    e = (e as { cause?: unknown }).cause;
  }
  return out;
}

/**
 * Whether another producer of the transactional.id fenced this one, decided by class, flag and kafkajs protocol
 * type along the cause chain (issue 48, item 7): a {@link SliceFencedError}; a {@link PoolCommitError} by the flag the
 * pool set where it made it; a kafkajs protocol error of a fenced type (or the unknown code 90, see above).
 */
export function isFencingError(error: unknown): boolean {
  for (const e of causes(error)) {
    if (e instanceof SliceFencedError) return true;
    if (e instanceof PoolCommitError) return e.fenced;
    const { type, message } = e as { type?: unknown; message?: unknown };
    if (typeof type === 'string' && FENCED_TYPES.has(type)) return true;
    if (type === 'KAFKAJS_UNKNOWN_ERROR_CODE' && typeof message === 'string') {
      const code = UNKNOWN_CODE_MESSAGE.exec(message)?.[1];
      if (code !== undefined && FENCED_CODES.has(Number(code))) return true;
    }
  }
  return false;
}

export interface SliceFencingDeps {
  kafka: Kafka;
  transactionTimeoutMs: number;
  retry: { initialRetryTime: number; retries: number; maxRetryTime: number };
  /** This process's pool: a member of it that cannot commit the slice's records is not fenced. */
  pool: Pick<ProducerPool, 'find'>;
  owners: SliceOwners;
  /** A failure as the error to throw (`toKafkaError`, fencing errors kept). */
  kafkaError: (error: unknown, action: string) => Error;
  /**
   * Told when a fence targets a producer of this pool that is alive (issue 47: a worker must never fence its own live
   * producer; the only path left is a session of this process re-opening a slice its older session still holds).
   * Must not throw. @default none
   */
  onSelfFence?: ((transactionalId: string, sliceKey: string) => void) | undefined;
}

export interface SliceFencing {
  /**
   * Fences the recorded owners of a slice other than `self`, then forgets them (a fenced epoch commits nothing more).
   * A member of this pool that is initialised in its current generation and has no session of this slice is skipped:
   * nothing of it can commit this slice's records (a session's commits end before it closes).
   */
  fenceOwners: (sliceKey: string, ids: readonly string[], self?: string) => Promise<void>;
  /**
   * Makes sure `writer` commits nothing more of the slice, for resolving a page it wrote that no live session of this
   * process holds: nothing to do when a member of this pool holds the id now, initialised in its current generation
   * (that InitProducerId fenced every earlier producer of the id, this process's older generations and the process
   * that held the member label before); else fences it when it is still recorded as an owner of the slice (an id no
   * longer recorded was fenced by a new owner already, or left with nothing open).
   */
  fenceWriter: (sliceKey: string, writer: string) => Promise<void>;
  /** Fences every recorded owner of the slice. */
  fence: (sliceKey: string) => Promise<void>;
  /**
   * Fences the recorded owners of slices taken from a dead worker, before they go back to wait: each id once, however
   * many of the slices it owned, and none of this pool's (the caller is not the slices' new owner). The dead owner's
   * open transaction is aborted at once, not after its timeout: until then it holds back every recovery read on its
   * checkpoint partition. Returns the ids fenced.
   */
  fenceTaken: (sliceKeys: readonly string[]) => Promise<string[]>;
  /** Fences sent. */
  fences: () => number;
  /** Fences of a live producer of this pool (see `onSelfFence`): 0 is the guarantee the crash tests hold it to. */
  selfFences: () => number;
}

export function createSliceFencing(d: SliceFencingDeps): SliceFencing {
  let fences = 0;
  let selfFences = 0;

  /**
   * InitProducerId with `transactionalId`; the transaction begun is local (nothing added): no EndTxn. Within a
   * deadline and a few retries: fences run one after another, so one that hangs would hold every slice behind it.
   */
  async function fenceId(transactionalId: string): Promise<void> {
    const producer: Producer = d.kafka.producer({
      transactionalId,
      transactionTimeout: d.transactionTimeoutMs,
      idempotent: true,
      maxInFlightRequests: 1,
      allowAutoTopicCreation: false,
      retry: { ...d.retry, retries: Math.min(d.retry.retries, FENCE_RETRIES) },
    });
    const fence = async (): Promise<void> => {
      await producer.connect();
      const txn = await producer.transaction();
      fences += 1;
      await txn.abort();
    };
    try {
      await withDeadline(`fencing ${transactionalId}`, controlDeadlineMs(d.transactionTimeoutMs), fence());
    } catch (error) {
      throw d.kafkaError(error, `fencing ${transactionalId}`);
    } finally {
      await producer.disconnect().catch(() => undefined);
    }
  }

  async function fenceOwners(sliceKey: string, ids: readonly string[], self?: string): Promise<void> {
    const fenced: string[] = [];
    for (const id of ids) {
      if (id === self) continue;
      const mine = d.pool.find(id, sliceKey);
      if (mine?.alive === true && mine.hasSlice) {
        selfFences += 1;
        d.onSelfFence?.(id, sliceKey);
      }
      if (mine === undefined || !mine.alive || mine.hasSlice) await fenceId(id);
      fenced.push(id);
    }
    if (fenced.length > 0) await d.owners.leave(sliceKey, fenced);
  }

  return {
    fenceOwners,
    fenceWriter: async (sliceKey, writer) => {
      // Never our own live producer: fencing it failed every slice sharing it (the exactly-once crash test's long
      // tails, 2026-11-29), and its init already fenced whoever wrote the page under this id before.
      if (d.pool.find(writer, sliceKey)?.alive === true) return;
      try {
        if ((await d.owners.list(sliceKey)).includes(writer)) await fenceOwners(sliceKey, [writer]);
      } catch (error) {
        throw d.kafkaError(error, `fencing ${writer} of slice ${sliceKey}`);
      }
    },
    fence: async (sliceKey) => {
      try {
        await fenceOwners(sliceKey, await d.owners.list(sliceKey));
      } catch (error) {
        throw d.kafkaError(error, `fencing slice ${sliceKey}`);
      }
    },
    fenceTaken: async (sliceKeys) => {
      const recorded = await Promise.all(
        sliceKeys.map(async (key) => ({
          key,
          ids: (await d.owners.list(key)).filter((id) => d.pool.find(id, key) === undefined),
        })),
      );
      const ids = [...new Set(recorded.flatMap((r) => r.ids))];
      for (const id of ids) await fenceId(id);
      for (const r of recorded) if (r.ids.length > 0) await d.owners.leave(r.key, r.ids);
      return ids;
    },
    fences: () => fences,
    selfFences: () => selfFences,
  };
}
