/**
 * What the service refuses before any work: over the rate limit (429, its headers on every answer) and a batch of
 * more than 50 procedures (413).
 */
import type http from 'node:http';
import { errorEnvelope } from './error-envelope.js';
import type { RuntimeSettings } from './options.js';
import type { RateLimiter } from './rate-limiter.js';
import type { StatsRecorder } from './stats.js';

/** Most procedures one batch may carry (upstream answers 413 above). */
export const MAX_BATCH_SIZE = 50;

/**
 * Takes the request's place in the rate limit (setting its headers) and answers 429 or 413 when refused.
 * @returns true when the request was refused (answered here), false when it goes on.
 */
export function refuseRequest(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  current: RuntimeSettings,
  at: {
    limiter: RateLimiter;
    stats: StatsRecorder;
    apiKey: string | undefined;
    isBatch: boolean;
    /** Procedures in the request. */
    procedures: number;
  },
): boolean {
  const { limiter, stats, apiKey, isBatch, procedures } = at;
  if (current.rateLimit.enabled) {
    const decision = limiter.take(
      { apiKey, address: req.socket.remoteAddress ?? 'unknown' },
      current.rateLimit,
      Date.now(),
    );
    for (const [name, value] of Object.entries(decision.headers)) res.setHeader(name, value);
    if (!decision.allowed) {
      stats.rateLimited();
      res.setHeader('retry-after', String(decision.resetSeconds));
      res.writeHead(429, { 'content-type': 'application/json' });
      res.end(errorEnvelope('Too many requests, please try again later.', -32029, 'TOO_MANY_REQUESTS', 429));
      return true;
    }
  }
  if (isBatch && procedures > MAX_BATCH_SIZE) {
    res.writeHead(413, { 'content-type': 'application/json' });
    res.end(errorEnvelope(`Batch size too large (max ${MAX_BATCH_SIZE})`, -32013, 'PAYLOAD_TOO_LARGE', 413));
    return true;
  }
  return false;
}
