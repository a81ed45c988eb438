import type http from 'node:http';
import type { StatsRecorder } from './stats.js';

/**
 * Counts a request whose client went away (timed out, aborted) before the service answered it: the service still
 * works it through (its feed calls occupy the lane), and the answer goes nowhere.
 */
export function countAnswersAfterClientGone(res: http.ServerResponse, stats: StatsRecorder): void {
  const arrived = performance.now();
  let gone = false;
  res.on('close', () => {
    if (!res.writableFinished) gone = true;
  });
  const end = res.end.bind(res) as (...args: unknown[]) => http.ServerResponse;
  res.end = ((...args: unknown[]) => {
    if (gone || res.destroyed) stats.answeredAfterClientGone(performance.now() - arrived);
    return end(...args);
  }) as typeof res.end;
}
