/** The dedup's Redis failures as one error class: a step of the protocol that failed says which, retriable. */
import { GamedataError, ServiceError } from '../../../foundation/errors/index.js';

/** Runs `run`; a failure that is not already a GamedataError becomes `Redis failed while <what>: ...` (retriable). */
export async function onRedis<T>(what: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof GamedataError) throw error;
    throw new ServiceError(`Redis failed while ${what}: ${(error as Error).message}`, 'redis', {
      cause: error,
      retriable: true,
    });
  }
}
