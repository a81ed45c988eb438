/**
 * Retries a Kafka admin call that failed with an error Kafka itself calls retriable (a leader not elected yet, a
 * partition moving after a broker stopped, metadata behind a topic just created). kafkajs' admin retries some of
 * these but not all (ListOffsets and the leader wait of CreateTopics give up at once). Anything else fails at once.
 */
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

/**
 * kafkajs 2.2.4's `admin.fetchTopicOffsets` throws this TypeError when a ListOffsets round came back with no answer
 * for the topic (its partitions' leaders were moving: a broker had just stopped). It is the same transient state
 * as a retriable "not the leader", so it is retried like one (seen in the chaos runs: a slice's recovery read
 * failed this way while a broker was down, and the slice then waited out BullMQ's backoff).
 */
const KAFKAJS_EMPTY_OFFSETS = /Cannot destructure property 'partitions' of '(?:high|low)\.pop\(\.\.\.\)'/;

/** Whether kafkajs marked the error (or its cause) retriable. */
export function isRetriableKafkaError(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e !== null && typeof e === 'object' && depth < 5; depth += 1) {
    if ((e as { retriable?: unknown }).retriable === true) return true;
    if (e instanceof TypeError && KAFKAJS_EMPTY_OFFSETS.test(e.message)) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

export async function retryRetriable<T>(
  call: () => Promise<T>,
  options: RetryRetriableOptions = {},
): Promise<T> {
  const o = { ...DEFAULT_RETRY_RETRIABLE_OPTIONS, ...options };
  let delay = o.firstDelayMs;
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await call();
    } catch (error) {
      if (attempt >= o.attempts || !isRetriableKafkaError(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, delay));
      delay = Math.min(delay * 2, o.maxDelayMs);
    }
  }
}
