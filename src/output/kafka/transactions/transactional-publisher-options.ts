/**
 * The transactional slice publisher's options (`TransactionalSlicePublisherOptions`), their defaults, and
 * `resolvePublisherOptions`: checked once, each bad value a ConfigError naming the option.
 */
import { ConfigError } from '../../../foundation/errors/index.js';
import { resolveKafkaOptions } from '../kafka-options.js';
import type { KafkaSinkOptions, ResolvedKafkaOptions } from '../kafka-options.js';
import type { SliceOwners } from './slice-owners.js';

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
  /**
   * Told when a fence targets a live producer of this publisher's own pool (`SliceFencing.onSelfFence`): counted and
   * logged by the worker (`gamedata_self_fences_total`). Must not throw. @default none
   */
  onSelfFence?: ((transactionalId: string, sliceKey: string) => void) | undefined;
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

/** The options resolved: the Kafka settings, the publisher's own with their defaults, the producers' retry. */
export interface ResolvedPublisherOptions {
  resolved: ResolvedKafkaOptions;
  o: TransactionalSlicePublisherOptions & {
    -readonly [K in keyof typeof DEFAULT_TRANSACTIONAL_SLICE_PUBLISHER_OPTIONS]: number;
  };
  retry: { initialRetryTime: number; retries: number; maxRetryTime: number };
}

/** @throws ConfigError naming the option, the rule and the value */
export function resolvePublisherOptions(
  options: TransactionalSlicePublisherOptions,
): ResolvedPublisherOptions {
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
  return { resolved, o, retry };
}
