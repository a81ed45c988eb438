/** The shared budget's one error normalisation: Redis failures become retriable `ServiceError`s. */
import { GamedataError, ServiceError } from '../../foundation/errors.js';

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
