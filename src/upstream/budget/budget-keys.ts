/**
 * Redis key names of one API key's shared budget on one upstream. They derive from a SHA-256 of the upstream's
 * origin and the API key, never the key itself (key names show up in `MONITOR`, `KEYS`, slow logs and backups).
 */
import { createHash } from 'node:crypto';
import { CALL_PRIORITIES } from './priority.js';

export interface BudgetKeys {
  /** `<prefix><hash>`: every key below starts with it. */
  base: string;
  /** Waiting calls, one list per priority (index 0 highest). */
  queues: string[];
  /** The fetcher's lease: the holder's id, `SET NX PX`, renewed. */
  leader: string;
  /** A 429's shared pause: the epoch ms before which no request may start. */
  pause: string;
  /** The last token state the fetcher saw (hash), for the next fetcher. */
  state: string;
  /** Counters (hash): requests, slots, calls, status429. */
  stats: string;
  /** Batches taken and not yet answered (hash: batch key -> fetcher id), re-queued when their fetcher dies. */
  batches: string;
  /** Rung after an enqueue: wakes a waiting fetcher. */
  bell: string;
  /** What the fetcher saw at its last batch (`BudgetDemand`, JSON, expires), read by the workers to size their slots. */
  demand: string;
  /** Prefix of the per-process liveness keys. */
  alivePrefix: string;
  alive(processId: string): string;
  /** A process's reply list. */
  replies(processId: string): string;
  /** One taken batch. */
  batch(fetcherId: string, seq: number): string;
}

/**
 * Short stable digest of an API key on an upstream (anonymous callers share the empty key's digest). Without an
 * upstream (`''`) it is the key's alone, as before issue 48.
 */
export function hashApiKey(apiKey: string | undefined, upstream = ''): string {
  return createHash('sha256')
    .update(upstream === '' ? (apiKey ?? '') : `${upstream}\n${apiKey ?? ''}`)
    .digest('hex')
    .slice(0, 20);
}

/** The key names of the budget of `apiKey` on `upstream` (its origin; `''`: any) under `prefix`. */
export function budgetKeys(prefix: string, apiKey: string | undefined, upstream = ''): BudgetKeys {
  return budgetKeysOfBase(`${prefix}${hashApiKey(apiKey, upstream)}`);
}

/** The key names under a known base (`<prefix><digest>`, as `findBudgetBases` returns them). */
export function budgetKeysOfBase(base: string): BudgetKeys {
  return {
    base,
    queues: CALL_PRIORITIES.map((_, i) => `${base}:q:${i}`),
    leader: `${base}:leader`,
    pause: `${base}:pause`,
    state: `${base}:state`,
    stats: `${base}:stats`,
    batches: `${base}:batches`,
    bell: `${base}:bell`,
    demand: `${base}:demand`,
    alivePrefix: `${base}:alive:`,
    alive: (id) => `${base}:alive:${id}`,
    replies: (id) => `${base}:r:${id}`,
    batch: (id, seq) => `${base}:b:${id}:${seq}`,
  };
}
