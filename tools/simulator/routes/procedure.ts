/**
 * The one tRPC instance of the simulator and its base procedure: every call is counted, key-checked, may be
 * failed by per-slot 5xx fault injection, and waits the configured per-procedure latency.
 */
import { initTRPC, TRPCError } from '@trpc/server';
import type { RuntimeSettings } from '../options.js';

/** Per-request context, made by the HTTP layer. */
export interface SimContext {
  /** `X-API-Key` header, `undefined` when absent or empty. */
  apiKey: string | undefined;
  /** Settings as they were when the request arrived. */
  settings: RuntimeSettings;
  /** Batch indexes whose call must fail with a 500 (fault injection). */
  failingSlots: ReadonlySet<number>;
  /** Counts one procedure call (stats). */
  countCall(path: string): void;
  /** Waits out one unfiltered feed call of `costMs` on the key's serialised lane (`feed-lane.ts`). */
  feedCall(costMs: number): Promise<void>;
  /** Waits out one filtered listing page of `costMs`, side by side with the request's others (staggered). */
  filteredCall(costMs: number): Promise<void>;
  /** Marks the request as carrying a filtered transaction page (stats: `firstFilteredTransactionMs`). */
  filteredTransactionPage(): void;
}

// isDev false: no stack traces in error envelopes, as a production service. Plain JSON (no transformer), as upstream.
export const t = initTRPC.context<SimContext>().create({ isDev: false });

export const sleep = (ms: number): Promise<void> =>
  ms > 0 ? new Promise((r) => setTimeout(r, ms)) : Promise.resolve();

/** Stats, key check and per-slot 5xx faults, for every call. */
export const baseProcedure = t.procedure.use(async (opts) => {
  opts.ctx.countCall(opts.path);
  const { apiKeys } = opts.ctx.settings;
  if (apiKeys !== undefined && opts.ctx.apiKey !== undefined && !apiKeys.includes(opts.ctx.apiKey))
    throw new TRPCError({ code: 'UNAUTHORIZED', message: 'Invalid API token' });
  if (opts.ctx.failingSlots.has(opts.batchIndex))
    throw new TRPCError({ code: 'INTERNAL_SERVER_ERROR', message: 'Internal server error' });
  if (opts.ctx.settings.latency.procedureMs > 0) await sleep(opts.ctx.settings.latency.procedureMs);
  return opts.next();
});

/** The NOT_FOUND the service answers for an unknown id. */
export const notFound = (what: string, value: string): TRPCError =>
  new TRPCError({ code: 'NOT_FOUND', message: `${what} not found: ${value}` });
