/**
 * The worker's life, apart from what it runs: wait for the services -> connect with retry -> (the caller starts the
 * slice workers) -> wait for the stop -> drain within a deadline. A light module on purpose (errors and retry only):
 * the worker command imports it before kafkajs and BullMQ load, which happens only once the services answer.
 */
import { AbortedError, GamedataError, ServiceError } from '../../foundation/errors/index.js';
import { retry } from '../../foundation/retry/index.js';
import type { RetryPolicy } from '../../foundation/retry/index.js';

/**
 * Pauses between connection attempts: 500 ms doubling to 5 s, no jitter, for as long as `giveUpAfterMs` allows.
 * Only a retriable `ServiceError` is worth another attempt (a broker still starting: reachable to the probe, but the
 * producer could not start); anything else ends the worker.
 */
export const CONNECT_RETRY_POLICY: Readonly<Omit<RetryPolicy, 'maxElapsedMs'>> = {
  retries: Infinity,
  initialMs: 500,
  maxMs: 5_000,
  factor: 2,
  jitter: 0,
  isRetriable: (error) => error instanceof ServiceError && error.retriable,
};

export interface ConnectWithRetryOptions<T> {
  /** The stop (signal, give-up): no more attempts or pauses once aborted. */
  signal: AbortSignal;
  /** Resolves true once the services answer, false when `signal` aborted first (the service monitor's). */
  waitUntilReady(signal: AbortSignal): Promise<boolean>;
  /** One attempt: load what runs, connect it. */
  connect(): Promise<T>;
  /** Throw the last failure once connecting has failed for this long (since the first failure). */
  giveUpAfterMs: number;
  /** Before each pause after a failure worth another attempt (the worker re-checks Kafka). @default none */
  onRetry?: ((error: GamedataError) => void) | undefined;
}

/**
 * Waits for the services, then connects, retrying per {@link CONNECT_RETRY_POLICY}.
 * @returns what `connect` made, or undefined when stopped first (nothing to drain)
 * @throws the attempt's failure as a GamedataError when it is not worth another attempt or the time ran out
 */
export async function connectWithRetry<T>(o: ConnectWithRetryOptions<T>): Promise<T | undefined> {
  try {
    return await retry(
      async () => {
        if (!(await o.waitUntilReady(o.signal))) return undefined;
        try {
          return await o.connect();
        } catch (error) {
          throw GamedataError.from(error);
        }
      },
      { ...CONNECT_RETRY_POLICY, maxElapsedMs: o.giveUpAfterMs },
      { signal: o.signal, onRetry: (error) => o.onRetry?.(error as GamedataError) },
    );
  } catch (error) {
    // Stopped during a pause: as stopped before the services answered.
    if (error instanceof AbortedError && o.signal.aborted) return undefined;
    throw error;
  }
}

/** Resolves once `signal` aborts (at once when it has). */
export function waitForStop(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

/**
 * Runs the drain's steps in order; false when they did not finish within `ms` (they are left running: the caller
 * exits). A failing step ends the drain as finished (what is left is closed by the exit).
 */
export async function drainWithin(ms: number, steps: readonly (() => Promise<unknown>)[]): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  const done = (async () => {
    for (const step of steps) await step();
  })().then(
    () => true,
    () => true,
  );
  const result = await Promise.race([done, late]);
  clearTimeout(timer);
  return result;
}
