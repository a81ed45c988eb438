/** Properties of the worker's slots while the key binds: grow by the batches' shortfall, bounded, back when free. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  decideConcurrency,
  FULL_BATCH_GROWTH_LATENCY_MS,
  encodeBudgetDemand,
  isShortBatch,
  keyChains,
  MAX_GROWTH_UTILIZATION,
  MIN_UPSTREAM_SHARE,
  parseBudgetDemand,
  SLOT_HEADROOM,
  SPARE_STEP_BUSY,
  SPARE_STEP_MAX_FACTOR,
  spareStep,
  type BudgetDemand,
  type ConcurrencyInput,
} from '../../../../src/upstream/budget/concurrency-decision.js';

const demand = fc.record({
  at: fc.integer({ min: 0, max: 1_000_000 }),
  binds: fc.boolean(),
  calls: fc.integer({ min: 1, max: 50 }),
  maxBatch: fc.constant(50),
  tail: fc.boolean(),
  queued: fc.option(fc.integer({ min: 0, max: 10_000 }), { nil: undefined }),
  chains: fc.option(fc.integer({ min: 0, max: 2_000 }), { nil: undefined }),
  latencyMs: fc.option(fc.integer({ min: 0, max: 3_000 }), { nil: undefined }),
});

const input = fc
  .record({
    base: fc.integer({ min: 1, max: 64 }),
    extra: fc.integer({ min: 0, max: 128 }),
    current: fc.integer({ min: 1, max: 256 }),
    demand: fc.option(demand, { nil: undefined }),
    changedAt: fc.integer({ min: 0, max: 1_000_000 }),
    settleMs: fc.integer({ min: 0, max: 5000 }),
    busy: fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { nil: undefined }),
  })
  .map(({ base, extra, ...rest }): ConcurrencyInput => ({ ...rest, base, max: base + extra }));

const starved = (over: Partial<BudgetDemand> = {}): BudgetDemand => ({
  at: 10_000,
  binds: true,
  calls: 32,
  maxBatch: 50,
  tail: false,
  ...over,
});

describe('decideConcurrency', () => {
  it('stays in [base, max]', () => {
    const queued = fc.option(fc.integer({ min: 0, max: 10_000 }), { nil: undefined });
    fc.assert(
      fc.property(input, queued, (given, queuedWhileFull) => {
        const i = { ...given, queuedWhileFull };
        const { concurrency } = decideConcurrency(i);
        expect(concurrency).toBeGreaterThanOrEqual(i.base);
        expect(concurrency).toBeLessThanOrEqual(i.max);
        expect(Number.isInteger(concurrency)).toBe(true);
      }),
    );
  });

  it('is the configured concurrency when nothing was sent lately, and halves toward it once per settled change while the key does not bind and no slice waits', () => {
    fc.assert(
      fc.property(input, (i) => {
        if (i.demand !== undefined && (i.demand.binds || (i.demand.queued ?? 0) > 0)) return;
        const current = Math.min(i.max, Math.max(i.base, i.current));
        const next = decideConcurrency(i);
        if (i.demand === undefined || current === i.base)
          expect(next).toEqual({ concurrency: i.base, reason: 'free' });
        else if (i.demand.at < i.changedAt + i.settleMs)
          expect(next).toEqual({ concurrency: current, reason: 'kept' });
        else expect(next).toEqual({ concurrency: Math.max(i.base, Math.ceil(current / 2)), reason: 'free' });
      }),
    );
  });

  it('a spare step doubles, or more only while the CPU is nearly idle: never past the slots the last busy share projects to SPARE_STEP_BUSY', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 512 }),
        fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { nil: undefined }),
        (current, busy) => {
          const step = spareStep(current, busy);
          expect(step).toBeGreaterThanOrEqual(2 * current);
          expect(step).toBeLessThanOrEqual(SPARE_STEP_MAX_FACTOR * current);
          if (step > 2 * current) {
            expect(busy).toBeDefined();
            expect(busy! * (step / current)).toBeLessThanOrEqual(SPARE_STEP_BUSY + 1e-9);
          }
          if (busy === undefined || busy === 0 || busy >= SPARE_STEP_BUSY / 2) expect(step).toBe(2 * current);
        },
      ),
    );
  });

  it('grows only on a short batch (or a full one with slow requests and the key to spare), sent after the last change settled (a spare step in half the time): at most doubling while the key binds, by the slices waiting up to the chains that spend the key while it does not', () => {
    fc.assert(
      fc.property(input, (i) => {
        const current = Math.min(i.max, Math.max(i.base, i.current));
        const next = decideConcurrency(i);
        if (next.concurrency > current) {
          const d = i.demand!;
          // While the key binds: on short batches, or (`chains`) on any batch while slices wait and the slots are
          // fewer than the chains that spend the key; while it does not: by the slices waiting (`spare`).
          expect(next.reason).toBe(d.binds ? (next.reason === 'chains' ? 'chains' : 'short') : 'spare');
          const stepped = next.reason === 'spare' || next.reason === 'chains';
          if (stepped) expect(d.queued).toBeGreaterThan(0);
          if (next.reason === 'chains') expect(current).toBeLessThan(d.chains!);
          expect(isShortBatch(d) || stepped).toBe(true);
          // A full batch grows the slots only while slices wait and requests are slow.
          if (d.calls >= d.maxBatch) {
            expect(stepped).toBe(true);
            expect(d.latencyMs).toBeGreaterThanOrEqual(FULL_BATCH_GROWTH_LATENCY_MS);
          }
          expect(d.tail).toBe(false);
          // A spare step settles in half the time: the key had requests to spare, so a step too far costs little.
          expect(d.at).toBeGreaterThanOrEqual(i.changedAt + (stepped ? i.settleMs / 2 : i.settleMs));
          expect(next.concurrency).toBeLessThanOrEqual(stepped ? spareStep(current, i.busy) : 2 * current);
          if (i.busy !== undefined) expect(i.busy).toBeLessThan(MAX_GROWTH_UTILIZATION);
          if (next.reason === 'short') {
            if (d.chains !== undefined)
              expect(next.concurrency).toBeLessThanOrEqual(Math.ceil(Math.max(50, d.chains) * SLOT_HEADROOM));
          } else {
            expect(next.concurrency).toBeLessThanOrEqual(current + (d.queued ?? 0));
            if (d.chains !== undefined)
              expect(next.concurrency).toBeLessThanOrEqual(Math.ceil(d.chains * SLOT_HEADROOM));
          }
        }
        // While the key binds it never shrinks: shrinking would bring the short batches back.
        if (i.demand?.binds === true) expect(next.concurrency).toBeGreaterThanOrEqual(current);
      }),
    );
  });

  it('a short batch that settled always grows the slots until max', () => {
    fc.assert(
      fc.property(input, demand, (i, d) => {
        const current = Math.min(i.max, Math.max(i.base, i.current));
        const short = {
          ...d,
          binds: true,
          tail: false,
          calls: Math.min(d.calls, 49),
          at: i.changedAt + i.settleMs,
        };
        const next = decideConcurrency({ ...i, busy: undefined, demand: short });
        const cap = Math.min(
          i.max,
          d.chains === undefined ? i.max : Math.ceil(Math.max(50, d.chains) * SLOT_HEADROOM),
        );
        // Below the chains that spend the key, with slices waiting and slow requests, it grows as a spare step does.
        const chains =
          (d.queued ?? 0) > 0 &&
          d.chains !== undefined &&
          current < d.chains &&
          (d.latencyMs ?? 0) >= FULL_BATCH_GROWTH_LATENCY_MS;
        if (current < cap) expect(next).toMatchObject({ reason: chains ? 'chains' : 'short' });
        if (current < cap) expect(next.concurrency).toBeGreaterThan(current);
        else expect(next).toEqual({ concurrency: current, reason: 'kept' });
      }),
    );
  });

  it("a key with requests to spare and slices waiting for a slot: a short batch grows the slots by the slices waiting, at most doubling, up to max and the chains that spend the key (Little's law); none waiting gives base", () => {
    fc.assert(
      fc.property(input, demand, fc.integer({ min: 1, max: 10_000 }), (i, d, queued) => {
        const current = Math.min(i.max, Math.max(i.base, i.current));
        const spare = {
          ...d,
          binds: false,
          tail: false,
          calls: Math.min(d.calls, 49),
          at: i.changedAt + i.settleMs,
          queued,
        };
        const next = decideConcurrency({ ...i, busy: undefined, demand: spare });
        const enough = d.chains === undefined ? i.max : Math.ceil(d.chains * SLOT_HEADROOM);
        const target = Math.min(i.max, enough, 2 * current, current + queued);
        if (target > current) expect(next).toEqual({ concurrency: target, reason: 'spare' });
        else expect(next).toEqual({ concurrency: current, reason: 'kept' });
        expect(decideConcurrency({ ...i, demand: { ...spare, queued: 0 } })).toEqual({
          concurrency: Math.max(i.base, Math.ceil(current / 2)),
          reason: 'free',
        });
      }),
    );
  });

  it('short batches do not grow the slots while fewer than half the running slices wait on the key (they wait elsewhere)', () => {
    fc.assert(
      fc.property(input, demand, fc.double({ min: 0, max: 1, noNaN: true }), (i, d, share) => {
        const current = Math.min(i.max, Math.max(i.base, i.current));
        const short = {
          ...d,
          tail: false,
          calls: Math.min(d.calls, 49),
          at: i.changedAt + i.settleMs,
          queued: 10,
        };
        const grown = decideConcurrency({ ...i, demand: short });
        const next = decideConcurrency({ ...i, demand: short, upstreamShare: share });
        if (share < MIN_UPSTREAM_SHARE) expect(next).toEqual({ concurrency: current, reason: 'elsewhere' });
        else expect(next).toEqual(grown);
      }),
    );
    // The chaos run's stall: 512 slots, ~3 of 50 calls a batch, ~800 slices running of which almost none wait.
    const stalled = starved({ binds: true, calls: 3 });
    const o = { base: 16, max: 512, settleMs: 2000, changedAt: 0 };
    expect(decideConcurrency({ ...o, current: 64, demand: stalled, upstreamShare: 4 / 300 })).toEqual({
      concurrency: 64,
      reason: 'elsewhere',
    });
    expect(decideConcurrency({ ...o, current: 64, demand: stalled, upstreamShare: 0.9 }).concurrency).toBe(
      128,
    );
  });

  it('the issue-32 runs: 32 slots and 524 slices queued double to the cap at the real latency, and stay near the base with latency off', () => {
    const o = { base: 32, max: 512, settleMs: 2000, changedAt: 0, current: 32 };
    // 500 requests a minute, ~1.2 s a request, 50 calls a request: ~500 chains spend the key.
    const real = keyChains(500, 60_000, 1200, 50);
    expect(real).toBe(500);
    const small = starved({ binds: false, calls: 20, queued: 524, chains: real });
    const seen: number[] = [];
    let current = 32;
    for (let i = 0; i < 5; i++) {
      current = decideConcurrency({ ...o, current, demand: small, busy: 0.3 }).concurrency;
      seen.push(current);
    }
    expect(seen).toEqual([64, 128, 256, 512, 512]);
    // The small run's own readings (64 slots, the CPU 14 % busy): one step to the slices waiting, not another doubling.
    expect(decideConcurrency({ ...o, current: 64, demand: { ...small, queued: 304 }, busy: 0.14 })).toEqual({
      concurrency: 228,
      reason: 'spare',
    });
    // A slot per slice waiting at most: 20 queued -> 52.
    expect(decideConcurrency({ ...o, demand: { ...small, queued: 20 } }).concurrency).toBe(52);
    // With latency off (~30 ms a request) ~13 chains spend the key: 16 slots are nearly enough.
    const off = keyChains(500, 60_000, 30, 50);
    expect(off).toBe(13);
    const chaos = starved({ binds: false, calls: 12, queued: 1_600, chains: off });
    expect(decideConcurrency({ ...o, base: 16, current: 16, demand: chaos })).toEqual({
      concurrency: 20,
      reason: 'spare',
    });
    expect(decideConcurrency({ ...o, base: 16, current: 20, demand: chaos })).toEqual({
      concurrency: 20,
      reason: 'kept',
    });
    // A 429 storm binds the key with latency off: short batches grow to a full batch's calls with headroom, no more.
    const storm = starved({ binds: true, calls: 1, chains: off });
    expect(decideConcurrency({ ...o, base: 16, current: 64, demand: storm })).toEqual({
      concurrency: 75,
      reason: 'short',
    });
    expect(decideConcurrency({ ...o, base: 16, current: 75, demand: storm })).toEqual({
      concurrency: 75,
      reason: 'kept',
    });
    expect(keyChains(undefined, 60_000, 30, 50)).toBeUndefined();
    expect(keyChains(500, undefined, 30, 50)).toBeUndefined();
  });

  it('a small full history with 578 slices planned: the work binds the key, yet its full POSTs go one a round from 64 slots; the slots grow by the slices waiting up to the chains that spend the key', () => {
    const o = { base: 32, max: 512, settleMs: 2000, changedAt: 0 };
    const bound = starved({ calls: 50, queued: 490, chains: 492, latencyMs: 1200 });
    expect(decideConcurrency({ ...o, current: 64, demand: bound, busy: 0.3 })).toEqual({
      concurrency: 128,
      reason: 'chains',
    });
    // The CPU nearly idle: one step to the slices waiting (at most 8x), as a spare step.
    expect(decideConcurrency({ ...o, current: 64, demand: bound, busy: 0.05 })).toEqual({
      concurrency: 512,
      reason: 'chains',
    });
    expect(decideConcurrency({ ...o, current: 98, demand: { ...bound, queued: 10 }, busy: 0.05 })).toEqual({
      concurrency: 108,
      reason: 'chains',
    });
    // At the chains, with fast requests, a tail batch, no slice waiting or a busy box: kept, as before.
    expect(decideConcurrency({ ...o, current: 492, demand: bound })).toEqual({
      concurrency: 492,
      reason: 'kept',
    });
    expect(decideConcurrency({ ...o, current: 64, demand: { ...bound, latencyMs: 30 } })).toEqual({
      concurrency: 64,
      reason: 'kept',
    });
    expect(decideConcurrency({ ...o, current: 64, demand: { ...bound, tail: true } })).toEqual({
      concurrency: 64,
      reason: 'kept',
    });
    expect(decideConcurrency({ ...o, current: 64, demand: { ...bound, queued: 0 } })).toEqual({
      concurrency: 64,
      reason: 'kept',
    });
    expect(decideConcurrency({ ...o, current: 64, demand: bound, busy: 0.9 })).toEqual({
      concurrency: 64,
      reason: 'busy',
    });
    // Not before half a settle after the last change.
    expect(decideConcurrency({ ...o, current: 64, changedAt: 9_500, demand: bound })).toEqual({
      concurrency: 64,
      reason: 'kept',
    });
  });

  it('the medium chaos run: a key of a million requests a minute, 1 600 slices waiting and a busy event loop: no growth', () => {
    const o = { base: 16, max: 512, settleMs: 2000, changedAt: 0, current: 16 };
    const chaos = starved({
      binds: false,
      calls: 12,
      queued: 1_600,
      chains: keyChains(1_000_000, 60_000, 30, 50),
    });
    expect(decideConcurrency({ ...o, demand: chaos, busy: 0.95 })).toEqual({
      concurrency: 16,
      reason: 'busy',
    });
    expect(decideConcurrency({ ...o, demand: chaos, busy: MAX_GROWTH_UTILIZATION })).toEqual({
      concurrency: 16,
      reason: 'busy',
    });
    expect(decideConcurrency({ ...o, demand: chaos, busy: 0.5 })).toEqual({
      concurrency: 32,
      reason: 'spare',
    });
    // Busy does not shrink (the slices running stay until they end) and a free key still goes back toward the base.
    expect(decideConcurrency({ ...o, current: 64, demand: chaos, busy: 1 })).toEqual({
      concurrency: 64,
      reason: 'busy',
    });
    expect(decideConcurrency({ ...o, current: 64, demand: { ...chaos, queued: 0 }, busy: 1 })).toEqual({
      concurrency: 32,
      reason: 'free',
    });
    // A nearly idle moment of that box (16 slots, 10 % busy) grows to the step the share projects, no further.
    expect(decideConcurrency({ ...o, demand: chaos, busy: 0.1 })).toEqual({
      concurrency: 80,
      reason: 'spare',
    });
  });

  it('a spare step projects from the busy share since the last change, and settles in half the time', () => {
    // The small full history's first step (issue 32): 32 slots, 368 slices waiting; the 500 ms after its first
    // slices started read 33 % busy, the whole time since the worker started 13 %.
    const o = { base: 32, max: 512, settleMs: 2000, changedAt: 0, current: 32 };
    const first = starved({ binds: false, calls: 32, queued: 368, chains: 461 });
    expect(decideConcurrency({ ...o, demand: first, busy: 0.33 })).toEqual({
      concurrency: 64,
      reason: 'spare',
    });
    expect(decideConcurrency({ ...o, demand: first, busy: 0.33, stepBusy: 0.13 })).toEqual({
      concurrency: 123,
      reason: 'spare',
    });
    // The recent share still stops growth while the CPU binds, whatever the share since the change.
    expect(decideConcurrency({ ...o, demand: first, busy: 0.9, stepBusy: 0.1 })).toEqual({
      concurrency: 32,
      reason: 'busy',
    });
    // A spare key's step settles after settleMs / 2; a binding key's after settleMs.
    const later = { ...o, current: 123, changedAt: 9000 };
    // (a slot for each of the 368 slices waiting: 123 + 368)
    expect(decideConcurrency({ ...later, demand: { ...first, at: 10_000 }, stepBusy: 0.1 })).toEqual({
      concurrency: 491,
      reason: 'spare',
    });
    expect(decideConcurrency({ ...later, demand: { ...first, at: 9_900 }, stepBusy: 0.1 })).toEqual({
      concurrency: 123,
      reason: 'kept',
    });
    expect(decideConcurrency({ ...later, demand: starved({ at: 10_000 }) })).toEqual({
      concurrency: 123,
      reason: 'kept',
    });
    // A full batch grows the slots only while requests are slow (a slice waits on the upstream): the chaos box (latency
    // off, 79 % busy) keeps its slots on full batches (a short batch there still doubles); at the real latency they grow.
    const full = starved({ binds: false, calls: 50, queued: 1_269 });
    const chaos = { ...o, base: 16, current: 64 };
    expect(decideConcurrency({ ...chaos, demand: { ...full, latencyMs: 30 }, busy: 0.79 })).toEqual({
      concurrency: 64,
      reason: 'kept',
    });
    expect(
      decideConcurrency({ ...chaos, demand: { ...full, calls: 40, latencyMs: 30 }, busy: 0.79 }),
    ).toEqual({
      concurrency: 128,
      reason: 'spare',
    });
    expect(
      decideConcurrency({
        ...chaos,
        demand: { ...full, latencyMs: FULL_BATCH_GROWTH_LATENCY_MS },
        busy: 0.3,
      }),
    ).toEqual({ concurrency: 128, reason: 'spare' });
  });

  it('every slot taken and slices queued by a count made now: grown at once on a spare key with slow requests, whatever the last batch says; not with fast requests, a binding key or a busy CPU', () => {
    // The small full history (issue 32): 105 slots all taken, the user listing's 305 slices queued after the last
    // batch went (it counted none, and it went before the last change). Before, the slots waited for the next batch.
    const o = { base: 32, max: 512, settleMs: 2000, changedAt: 9000, current: 105, stepBusy: 0.13 };
    const last = starved({ at: 8_800, binds: false, calls: 34, queued: 0, chains: 495, latencyMs: 1186 });
    expect(decideConcurrency({ ...o, demand: last })).toEqual({ concurrency: 105, reason: 'kept' });
    // A spare step: at most 403 (the CPU projection), a slot for each slice waiting (410), the chains (743).
    expect(decideConcurrency({ ...o, demand: last, queuedWhileFull: 305 })).toEqual({
      concurrency: 403,
      reason: 'full',
    });
    expect(decideConcurrency({ ...o, demand: last, queuedWhileFull: 0 })).toEqual({
      concurrency: 105,
      reason: 'kept',
    });
    // Fast requests (slices wait on the CPU), a key that binds, a busy CPU: not this way.
    expect(
      decideConcurrency({ ...o, demand: { ...last, latencyMs: 30 }, queuedWhileFull: 305 }).reason,
    ).not.toBe('full');
    expect(
      decideConcurrency({ ...o, demand: { ...last, binds: true }, queuedWhileFull: 305 }).reason,
    ).not.toBe('full');
    expect(decideConcurrency({ ...o, demand: last, queuedWhileFull: 305, busy: 0.9 })).toEqual({
      concurrency: 105,
      reason: 'busy',
    });
  });

  it('4 workers x 8 slots: POSTs of 32 calls grow each worker to 16 (proportional 13, with headroom 19, at most x2), then on to the cap of 64', () => {
    const base = { base: 8, max: 64, settleMs: 2000 };
    expect(decideConcurrency({ ...base, current: 8, changedAt: 0, demand: starved() })).toEqual({
      concurrency: 16,
      reason: 'short',
    });
    // A short batch sent before the change settled does not grow again.
    expect(
      decideConcurrency({ ...base, current: 16, changedAt: 9000, demand: starved({ at: 10_000 }) }),
    ).toEqual({ concurrency: 16, reason: 'kept' });
    // A batch just short: the proportional target with headroom (16 x 50 / 45 x 1.5 = 26.7).
    expect(
      decideConcurrency({ ...base, current: 16, changedAt: 0, demand: starved({ calls: 45 }) }).concurrency,
    ).toBe(27);
    // Very short batches at most double; the cap holds.
    expect(
      decideConcurrency({ ...base, current: 13, changedAt: 0, demand: starved({ calls: 3 }) }).concurrency,
    ).toBe(26);
    expect(
      decideConcurrency({ ...base, current: 48, changedAt: 0, demand: starved({ calls: 30 }) }).concurrency,
    ).toBe(64);
  });

  it('full batches and tail batches keep the slots (full ones on a spare key with slow requests grow them); a free key brings them back, halfway per settled change', () => {
    const base = { base: 8, max: 64, settleMs: 2000, changedAt: 0, current: 26 };
    expect(decideConcurrency({ ...base, demand: starved({ calls: 50 }) })).toEqual({
      concurrency: 26,
      reason: 'kept',
    });
    expect(decideConcurrency({ ...base, demand: starved({ tail: true, calls: 1 }) })).toEqual({
      concurrency: 26,
      reason: 'kept',
    });
    expect(decideConcurrency({ ...base, demand: starved({ binds: false, calls: 1 }) })).toEqual({
      concurrency: 13,
      reason: 'free',
    });
    expect(decideConcurrency({ ...base, current: 13, demand: starved({ binds: false, calls: 1 }) })).toEqual({
      concurrency: 8,
      reason: 'free',
    });
    expect(
      decideConcurrency({ ...base, changedAt: 9000, demand: starved({ binds: false, calls: 1 }) }),
    ).toEqual({ concurrency: 26, reason: 'kept' });
    expect(decideConcurrency({ ...base, demand: undefined })).toEqual({ concurrency: 8, reason: 'free' });
    // A full batch on a spare key keeps the slots while slices wait; with slow requests it grows them by the slices
    // waiting (several requests a round, the key still has requests left); a tail batch keeps them either way.
    const full = starved({ binds: false, calls: 50, queued: 10 });
    expect(decideConcurrency({ ...base, demand: full })).toEqual({ concurrency: 26, reason: 'kept' });
    expect(decideConcurrency({ ...base, demand: { ...full, latencyMs: 1000 } })).toEqual({
      concurrency: 36,
      reason: 'spare',
    });
    expect(decideConcurrency({ ...base, demand: { ...full, latencyMs: 1000, tail: true } })).toEqual({
      concurrency: 26,
      reason: 'kept',
    });
  });
});

describe('budget demand codec', () => {
  it('round-trips', () => {
    fc.assert(
      fc.property(demand, (d) => {
        expect(parseBudgetDemand(encodeBudgetDemand(d))).toEqual(d);
      }),
    );
  });

  it('reads anything else as no demand', () => {
    for (const raw of [
      null,
      undefined,
      '',
      'x',
      '1',
      'null',
      '{}',
      '{"at":1,"binds":"yes","calls":1,"maxBatch":50}',
    ])
      expect(parseBudgetDemand(raw)).toBeUndefined();
  });
});
