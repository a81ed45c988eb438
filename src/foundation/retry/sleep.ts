/** The retry loop's pause: a timer that rejects with an `AbortedError` as soon as the signal aborts. */
import { AbortedError } from '../errors/index.js';

/**
 * Resolves after `ms` (at once for `ms <= 0`).
 * @throws AbortedError when `signal` is or becomes aborted before then
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(new AbortedError('aborted', { cause: signal.reason }));
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new AbortedError('aborted', { cause: signal?.reason }));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
