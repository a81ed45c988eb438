/**
 * Retries a Kafka admin call that failed with an error Kafka itself calls retriable (a leader not elected yet, a
 * partition moving after a broker stopped, metadata behind a topic just created). kafkajs' admin retries some of
 * these but not all (ListOffsets and the leader wait of CreateTopics give up at once). Anything else fails at once.
 * The loop is the project's one (`src/foundation/retry/`); this module only names the policy and what is retriable.
 */
import type { Admin } from 'kafkajs';
import { ServiceError } from '../../../foundation/errors/index.js';
import { DEFAULT_RETRY_POLICY, retry } from '../../../foundation/retry/index.js';
import type { RetryPolicy } from '../../../foundation/retry/index.js';

export interface RetryRetriableOptions {
  /** Attempts in all. @default 8 */
  attempts?: number;
  /** The first pause; each next one doubles. @default 100 */
  firstDelayMs?: number;
  /** The longest pause. @default 1000 */
  maxDelayMs?: number;
}

export const DEFAULT_RETRY_RETRIABLE_OPTIONS = {
  attempts: 8,
  firstDelayMs: 100,
  maxDelayMs: 1000,
} as const satisfies Required<RetryRetriableOptions>;

/** Whether kafkajs (or our `ServiceError`) marked the error, or one of its causes, retriable. */
export function isRetriableKafkaError(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e !== null && typeof e === 'object' && depth < 5; depth += 1) {
    if ((e as { retriable?: unknown }).retriable === true) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/** The admin retry as a {@link RetryPolicy}: no jitter, doubling pauses, Kafka's own `retriable` flags. */
export function adminRetryPolicy(options: RetryRetriableOptions = {}): RetryPolicy {
  const o = { ...DEFAULT_RETRY_RETRIABLE_OPTIONS, ...options };
  return {
    ...DEFAULT_RETRY_POLICY,
    retries: o.attempts - 1,
    initialMs: o.firstDelayMs,
    maxMs: Math.max(o.maxDelayMs, o.firstDelayMs),
    factor: 2,
    jitter: 0,
    isRetriable: isRetriableKafkaError,
  };
}

export function retryRetriable<T>(call: () => Promise<T>, options: RetryRetriableOptions = {}): Promise<T> {
  return retry(call, adminRetryPolicy(options));
}

/** Whether `error` or one of its causes is a TypeError (kafkajs' code failing on an answer it did not expect). */
function hasTypeError(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e !== null && typeof e === 'object' && depth < 5; depth += 1) {
    if (e instanceof TypeError) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * `admin.fetchTopicOffsets(topic)`. kafkajs 2.2.4 throws a TypeError from it when a ListOffsets round came back
 * without the topic or one of its partitions (`high.pop()` / `low.pop()` empty: the partitions' leaders were moving,
 * a broker had just stopped). That is the same transient state as a retriable "not the leader", so it becomes a
 * retriable `ServiceError` (seen in the chaos runs: a slice's recovery read failed this way while a broker was down,
 * and the slice then waited out BullMQ's backoff). Decided by the error's class and the call it came from, not its
 * message.
 */
export async function fetchTopicOffsets(
  admin: Pick<Admin, 'fetchTopicOffsets'>,
  topic: string,
): ReturnType<Admin['fetchTopicOffsets']> {
  try {
    return await admin.fetchTopicOffsets(topic);
  } catch (error) {
    if (!hasTypeError(error)) throw error;
    throw new ServiceError(
      `Kafka's offsets answer for ${topic} was incomplete (its partitions' leaders are moving)`,
      'kafka',
      { cause: error, retriable: true },
    );
  }
}
