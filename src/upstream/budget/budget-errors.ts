/**
 * The shared budget's one error normalisation (Redis failures become retriable `ServiceError`s) and the one pause of
 * its background loops after a failure they report ({@link BACKGROUND_FAILURE_BACKOFF}).
 */
import { GamedataError, ServiceError } from '../../foundation/errors/index.js';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from '../../foundation/retry/index.js';

/** `error` as a `GamedataError`: kept when it is one, else a retriable `ServiceError` of Redis naming `what`. */
export const asService = (error: unknown, what: string): GamedataError =>
  error instanceof GamedataError
    ? error
    : new ServiceError(
        `budget: ${what}: ${error instanceof Error ? error.message : String(error)}`,
        'redis',
        {
          cause: error,
          retriable: true,
        },
      );

/** Reports an error that reaches no caller (a background loop's Redis hiccup). */
export type ReportError = (error: unknown, what: string) => void;

/**
 * The pause of a background loop (the reply reader, the fetch loop) after a failure it reported, through
 * `createBackoff`: 200 ms after the first (the fixed pause it was before), doubling per failure in a row up to 1 s,
 * half of it jittered (processes that lost Redis together do not come back in step); a success resets it.
 */
export const BACKGROUND_FAILURE_BACKOFF: Readonly<RetryPolicy> = {
  ...DEFAULT_RETRY_POLICY,
  retries: Infinity,
  initialMs: 200,
  maxMs: 1_000,
  jitter: 0.5,
};
