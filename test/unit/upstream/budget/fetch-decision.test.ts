/**
 * The fetcher's step (`decideFetch`): whether a partial batch is held for calls still to come. A planner's round
 * (no slice running or queued anywhere, nothing in flight) goes at once, even on a key that binds over a window ahead
 * (issue 32: each of a full history's three planning rounds waited a quarter of the latency for calls nobody sent).
 */
import { describe, expect, it } from 'vitest';
import { decideFetch, type FetchInput } from '../../../../src/upstream/budget/fetch-decision.js';

const input = (over: Partial<FetchInput> = {}): FetchInput => ({
  waiting: 20,
  urgent: 0,
  binds: true,
  work: { coming: 0, running: 0, queued: 0 },
  tokensLeft: 490,
  tokensAhead: 990,
  latencyMs: 1000,
  chains: 461,
  active: 0,
  now: 50_000,
  heldSince: undefined,
  bindingSince: undefined,
  demandKeptAt: 0,
  maxBatch: 50,
  maxHoldMs: 3000,
  gatherShare: 0.25,
  growthGraceMs: 2000,
  ...over,
});

describe('decideFetch', () => {
  it("a planner's round on a binding key, nothing running, queued or in flight: sent at once", () => {
    expect(decideFetch(input()).step).toMatchObject({ action: 'send', size: 20 });
  });

  it('slices queued but not running yet: their first calls are gathered (a quarter of the latency)', () => {
    expect(decideFetch(input({ work: { coming: 400, running: 0, queued: 400 } })).step).toMatchObject({
      action: 'hold',
      waitMs: 250,
    });
  });

  it('a request in flight, or slices running without a call each: held; every running slice waiting: sent', () => {
    expect(decideFetch(input({ active: 1 })).step.action).toBe('hold');
    expect(decideFetch(input({ work: { coming: 40, running: 40, queued: 0 } })).step.action).toBe('hold');
    expect(decideFetch(input({ work: { coming: 20, running: 20, queued: 0 } })).step).toMatchObject({
      action: 'send',
      size: 20,
    });
  });

  it('the work unknown: held as before', () => {
    expect(decideFetch(input({ work: undefined })).step.action).toBe('hold');
  });
});
