/**
 * Whether a failed HTTP exchange reached the upstream at all: a connection that could not be made (refused, no such
 * host, no route, connect timeout) reached no upstream; a reset, a timeout after connecting or a bad answer did. Read
 * from the errno / undici `code` of the error and its causes (an `AggregateError` of several addresses included),
 * never from message text.
 */

/** Codes of a connection that was never made. */
export const CONNECT_FAILURE_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EAI_NONAME',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** The `code` of `error` or of one of its causes that says no connection was made; undefined otherwise. */
export function connectFailureCode(error: unknown, depth = 0): string | undefined {
  if (depth > 5 || typeof error !== 'object' || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && CONNECT_FAILURE_CODES.has(code)) return code;
  const inner = (error as { errors?: unknown }).errors;
  if (Array.isArray(inner)) {
    for (const e of inner) {
      const found = connectFailureCode(e, depth + 1);
      if (found !== undefined) return found;
    }
  }
  return connectFailureCode((error as { cause?: unknown }).cause, depth + 1);
}
