/**
 * The client's pricing of calls by the key's serialised feed time (issue 32): only unfiltered feed pages cost the
 * lane, by their depth below the head this process has seen (never below the feed's 72 h), and the batch loader keeps
 * the serial work in flight within its cap while every call still goes out, the first one always.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createBatchLoader } from '../../../../src/upstream/client/batch-loader.js';
import {
  createCallCostEstimator,
  isFeedCall,
  requestTimeoutMs,
} from '../../../../src/upstream/client/call-cost.js';
import { encodeCursorV2 } from '../../../../src/upstream/client/cursor.js';
import type {
  ProcedureCall,
  SendOptions,
  SlotResult,
  Transport,
} from '../../../../src/upstream/client/transport.js';
import { feedPageMs } from '../../../../src/foundation/models/call-cost.js';

const FEED = 'transaction.getPaginatedTransactions';
const HOUR = 3_600_000;
const HEAD = Date.parse('2026-11-01T00:00:00.000Z');
const at = (hours: number): ProcedureCall => ({
  procedure: FEED,
  input: { limit: 100, cursor: encodeCursorV2(HEAD - hours * HOUR, '0'.repeat(24)) },
});

describe('call cost', () => {
  it('prices only unfiltered feed pages, by depth below the newest time seen, capped at the feed window', () => {
    const cost = createCallCostEstimator();
    expect(isFeedCall({ procedure: FEED, input: { limit: 10 } })).toBe(true);
    expect(isFeedCall({ procedure: FEED, input: { limit: 10, transactionType: 'wage' } })).toBe(true);
    for (const k of ['userId', 'itemCode', 'countryId', 'muId', 'partyId'])
      expect(isFeedCall({ procedure: FEED, input: { [k]: 'x' } })).toBe(false);
    expect(cost.serialMs({ procedure: 'user.getUserById', input: { userId: 'u' } })).toBe(0);
    expect(cost.serialMs({ procedure: FEED, input: { limit: 10 } })).toBe(240);
    // The head is learned: the newest bound (or item) seen, not this machine's clock.
    cost.observe(HEAD);
    expect(cost.serialMs(at(0))).toBe(240);
    expect(cost.serialMs(at(24))).toBeCloseTo(240 + 24 * 90);
    // Below the feed's 72 h: an empty page, priced as the deepest.
    expect(cost.serialMs(at(24 * 365 * 50))).toBeCloseTo(240 + 72 * 90);
    cost.observeAnswer(at(5), { items: [{ createdAt: new Date(HEAD + HOUR).toISOString() }] });
    expect(cost.serialMs(at(0))).toBeCloseTo(240 + 90);
  });

  it('a timeout covers the serial work ahead and its own with 50 % headroom', () => {
    fc.assert(
      fc.property(fc.nat(60_000), fc.nat(600_000), fc.nat(600_000), (base, ahead, own) => {
        const t = requestTimeoutMs(base, ahead, own);
        expect(t).toBeGreaterThanOrEqual(base + 1.5 * (ahead + own) - 1);
        expect(t).toBeLessThanOrEqual(base + 1.5 * (ahead + own) + 1);
      }),
    );
  });
});

/** A fake upstream with the service's lane: each request answers after its own feed work. */
function laneTransport(): Transport & {
  requests: { calls: number; serial: number; timeoutSerial: number }[];
} {
  const requests: { calls: number; serial: number; timeoutSerial: number }[] = [];
  return {
    requests,
    async send(
      calls: readonly ProcedureCall[],
      _signal?: AbortSignal,
      o?: SendOptions,
    ): Promise<SlotResult[]> {
      const serial = calls.reduce((n, c) => n + (c.serialMs ?? 0), 0);
      requests.push({ calls: calls.length, serial, timeoutSerial: o?.serialMs ?? 0 });
      await new Promise((r) => setTimeout(r, 5));
      return calls.map(() => ({ ok: true, data: { items: [] } }));
    },
  };
}

describe('batch loader: serial feed work per request', () => {
  it('keeps each request and the work in flight within maxSerialMs, answers every call, and tells the transport', async () => {
    const cost = createCallCostEstimator();
    cost.observe(HEAD);
    const t = laneTransport();
    const loader = createBatchLoader(t, { cost, maxSerialMs: 10_000, maxInFlight: 4 });
    // 60 deep feed pages (24 h: 2.4 s each) and 60 filtered calls, all at once.
    const calls = [
      ...Array.from({ length: 60 }, (_, i) => loader.load(FEED, at(24 + i / 100).input)),
      ...Array.from({ length: 60 }, (_, i) => loader.load(FEED, { userId: `u${i}` })),
    ];
    await Promise.all(calls);
    const page = feedPageMs(24 * HOUR);
    for (const r of t.requests) {
      expect(r.serial).toBeLessThanOrEqual(10_000 + page);
      expect(r.timeoutSerial).toBeGreaterThanOrEqual(r.serial);
    }
    // Every feed page went, 4 of them at most per request (4 x 2.4 s within 10 s), the filtered calls unhindered.
    expect(t.requests.reduce((n, r) => n + r.calls, 0)).toBe(120);
    expect(Math.max(...t.requests.map((r) => Math.round(r.serial / page)))).toBeLessThanOrEqual(4);
  });

  it('a feed page costlier than the cap still goes, alone on the lane', async () => {
    const cost = createCallCostEstimator();
    cost.observe(HEAD);
    const t = laneTransport();
    const loader = createBatchLoader(t, { cost, maxSerialMs: 1_000 });
    await Promise.all([loader.load(FEED, at(48).input), loader.load(FEED, at(49).input)]);
    expect(t.requests.map((r) => r.calls)).toEqual([1, 1]);
  });
});
