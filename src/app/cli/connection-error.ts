/**
 * Whether an error a worker's slices report is a lost or refused connection (the service monitor says those, once
 * per change of state) rather than an error worth a line of its own. Decided by class and code (issue 48), never by
 * the message, with one exception: ioredis rejects commands on a closed connection with a plain `Error` that has no
 * code (`Connection is closed.`, `Stream isn't writeable ...`), so those two are matched by their text, and only
 * those.
 */
import { NetworkError } from '../../foundation/errors/index.js';
import { CONNECT_FAILURE_CODES } from '../../upstream/client/index.js';

/** Errno codes of a connection lost after it was made (those never made are `CONNECT_FAILURE_CODES`). */
const LOST_CONNECTION_CODES: ReadonlySet<string> = new Set([
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ECONNABORTED',
]);

/** kafkajs's errors for a broker it cannot reach or lost (their `name`, a class property). */
const KAFKAJS_CONNECTION_ERRORS: ReadonlySet<string> = new Set([
  'KafkaJSConnectionError',
  'KafkaJSConnectionClosedError',
  'KafkaJSBrokerNotFound',
]);

/** ioredis's messages for a command on a closed connection: no code or class of their own (see above). */
const IOREDIS_CLOSED = /^Connection is closed\.?$|^Stream isn't writeable/;

function isConnectionErrorAt(error: unknown, depth: number): boolean {
  if (depth > 5 || !(error instanceof Error)) return false;
  if (error instanceof NetworkError && error.unreachable) return true;
  const code = (error as NodeJS.ErrnoException).code;
  if (typeof code === 'string' && (CONNECT_FAILURE_CODES.has(code) || LOST_CONNECTION_CODES.has(code)))
    return true;
  if (KAFKAJS_CONNECTION_ERRORS.has(error.name)) return true;
  if (error.constructor === Error && IOREDIS_CLOSED.test(error.message)) return true;
  return isConnectionErrorAt((error as { cause?: unknown }).cause, depth + 1);
}

/** A lost or refused connection (by class, errno / undici code, or kafkajs error name), here or in its causes. */
export function isConnectionError(error: unknown): boolean {
  return isConnectionErrorAt(error, 0);
}
