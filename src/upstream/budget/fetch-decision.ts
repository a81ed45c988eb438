/**
 * The fetcher's pure step, once it has a request slot and a token: from the calls waiting, whether the key and the
 * work bind, and the work coming, decide to stay idle, hold a partial batch, or send (`decideSend`), and what demand
 * to publish for the workers' slots. The fetch loop (`fetch-loop.ts`) reads the inputs and carries out the step.
 *
 * Every running slice having a call waiting while nothing is in flight (`saturated`; or no slice running or queued
 * anywhere: a planner's round) means no call can join before this batch is sent, so a hold only costs time (4 workers
 * x 8 slots: 32 calls, held 3 s each time), unless the workers are starting slices and adding slots at the start of
 * a binding stretch (`growthGraceMs`): then the hold itself is published as a short demand every 500 ms, so the
 * workers grow now, not after the batch.
 */
import type { BudgetDemand } from './concurrency-decision.js';
import { decideSend } from './send-decision.js';
import { workFill } from './work-binds.js';
import type { WorkEstimate } from './work-estimate.js';

/** How often a hold at the start of a binding stretch is published as a demand, ms. */
const HOLD_DEMAND_EVERY_MS = 500;

export interface FetchInput {
  /** Calls waiting, all priorities. */
  waiting: number;
  /** Of `waiting`, tail calls. */
  urgent: number;
  /** Whether the key binds over a whole window ahead (`bindsAhead`). */
  binds: boolean;
  /** The work coming (`undefined`: unknown). */
  work: WorkEstimate | undefined;
  tokensLeft: number | undefined;
  tokensAhead: number | undefined;
  /** Measured request latency, ms. */
  latencyMs: number;
  /** The calls in flight that would spend the key (`keyChains`; `undefined` until its limit and window are known). */
  chains?: number | undefined;
  /** Requests in flight. */
  active: number;
  now: number;
  /** When the current partial batch began to be held (`undefined`: none is). */
  heldSince: number | undefined;
  /** When the current binding stretch began (`undefined`: the work does not ask for full batches). */
  bindingSince: number | undefined;
  /** When the demand was last published or extended. */
  demandKeptAt: number;
  maxBatch: number;
  maxHoldMs: number;
  gatherShare: number;
  growthGraceMs: number;
}

export type FetchStep =
  | { action: 'idle' }
  | { action: 'hold'; waitMs: number; demand: BudgetDemand | undefined }
  | { action: 'send'; size: number; fullAsked: boolean; demand: BudgetDemand };

/** The step, and the binding stretch's start after it. */
export function decideFetch(input: FetchInput): { step: FetchStep; bindingSince: number | undefined } {
  const { waiting, urgent, binds, work, now, maxBatch } = input;
  // As full as the work asks: everything at once when the calls waiting and coming fit in the tokens, full batches
  // when they need more than the key grants (see `workFill`).
  const minFill = binds
    ? workFill({
        waiting,
        coming: work?.coming,
        tokensLeft: input.tokensLeft,
        tokensAhead: input.tokensAhead,
        maxBatch,
      })
    : 1;
  const fullAsked = binds && minFill >= maxBatch;
  const bindingSince = fullAsked ? (input.bindingSince ?? now) : undefined;
  const growing = bindingSince !== undefined && now - bindingSince < input.growthGraceMs;
  // With no slice running or queued anywhere, the calls waiting are a planner's round, all routed in one tick: a
  // gather hold (a quarter of the latency then, ~250 ms at the real service's) waited for calls nobody would send, once
  // per planning round (three at a full history's start).
  const saturated =
    work !== undefined &&
    input.active === 0 &&
    !growing &&
    (work.running > 0 ? waiting >= work.running : work.queued === 0);
  const decision = decideSend({
    waiting,
    urgent,
    heldMs: input.heldSince === undefined ? 0 : now - input.heldSince,
    binds,
    minFill,
    saturated,
    gatherMs: input.gatherShare * input.latencyMs,
    maxBatch,
    maxHoldMs: input.maxHoldMs,
  });
  if (decision.action === 'idle') return { step: decision, bindingSince };
  if (decision.action === 'hold') {
    const publish = growing && urgent === 0 && now - input.demandKeptAt >= HOLD_DEMAND_EVERY_MS;
    const demand = publish
      ? {
          at: now,
          binds: true,
          calls: waiting,
          maxBatch,
          tail: false,
          queued: work?.queued,
          chains: input.chains,
          latencyMs: input.latencyMs,
        }
      : undefined;
    return { step: { action: 'hold', waitMs: decision.waitMs, demand }, bindingSince };
  }
  const demand = {
    at: now,
    binds: fullAsked,
    calls: decision.size,
    maxBatch,
    tail: urgent > 0,
    queued: work?.queued,
    chains: input.chains,
    latencyMs: input.latencyMs,
  };
  return { step: { action: 'send', size: decision.size, fullAsked, demand }, bindingSince };
}
