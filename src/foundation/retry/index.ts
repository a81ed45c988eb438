/**
 * Retry: the one retry policy (`RetryPolicy`: retries, initialMs, maxMs, factor, jitter, isRetriable, maxElapsedMs)
 * and the one loop (`retry`), the one sleep, and the pause of a loop that never gives up (`createBackoff`). A foundation: importable from every folder, imports only `errors/`.
 */
export { retry } from './retry.js';
export type { RetryContext, RetryOptions } from './retry.js';
export { DEFAULT_RETRY_POLICY, backoffDelay, isRetriableError, resolveRetryPolicy } from './retry-policy.js';
export type { RetryPolicy } from './retry-policy.js';
export { sleep } from './sleep.js';
export { createBackoff } from './backoff.js';
export type { Backoff, BackoffOptions } from './backoff.js';
