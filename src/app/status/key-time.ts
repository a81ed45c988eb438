/**
 * The key's time as `status` shows it (issue 32): what the key has spent (the shared budget's counters) and, per run,
 * its plan's estimate (`planner/run-key-time.ts`) with what is left of it by the share of its slices still to do.
 */
import type { RunKeyTime } from '../../pipeline/planner/index.js';

/** One line: the run's estimate and, while it runs, what is left of it by its slices still to do. */
export function formatRunKeyTime(t: RunKeyTime, slices?: { completed: number; pending: number }): string {
  const plan = `key time by the plan: ~${t.requests} requests, ${t.feedSeconds} s of serial feed, ~${t.minutesOnOneKey.toFixed(1)} min on one key`;
  const total = slices === undefined ? 0 : slices.completed + slices.pending;
  if (slices === undefined || total === 0 || slices.pending === 0) return plan;
  const left = (t.minutesOnOneKey * slices.pending) / total;
  return `${plan}; ~${left.toFixed(1)} min left (${slices.pending} of ${total} slices to do)`;
}

/** What a key has spent: its requests at `requestsPerMinute` and the serial feed work they carried. */
export function formatKeySpent(
  b: { requests: number; serialMs: number; limit: number | undefined },
  windowMs = 60_000,
): string {
  const perMinute = b.limit === undefined ? 500 : (b.limit * 60_000) / windowMs;
  const minutes = b.requests / Math.max(1, perMinute);
  return `key time spent: ${b.requests} requests (${minutes.toFixed(1)} min at ${Math.round(perMinute)} a minute), ${(b.serialMs / 1000).toFixed(0)} s of serial feed (estimated when sent)`;
}
