/* eslint-disable @typescript-eslint/require-await -- in-memory fakes of async interfaces */
import { describe, expect, it } from 'vitest';
import type { ResourceName } from '../../../../src/foundation/models/resources.js';
import type { BackfillRequest } from '../../../../src/pipeline/planner/index.js';
import {
  processTick,
  type ScheduleTickData,
  type TickDeps,
} from '../../../../src/pipeline/schedules/process-tick.js';
import type { ActiveRun, TailState, TailStateStore } from '../../../../src/pipeline/schedules/tail-state.js';
import { UNFILTERED_TRANSACTION_WINDOW_MS } from '../../../../src/pipeline/planner/index.js';

/** An in-memory state store with the same semantics as the Redis one (watermark never moves back). */
function memoryState(): TailStateStore & { locked: Set<string> } {
  const states = new Map<string, TailState>();
  const locked = new Set<string>();
  const empty = (resource: ResourceName): TailState => ({
    resource,
    watermark: undefined,
    watermarkAt: undefined,
    active: undefined,
    lastRunId: undefined,
    lastOutcome: undefined,
    lastFinishedAt: undefined,
    lastError: undefined,
    lastRescanAt: undefined,
    completedRuns: 0,
    failedRuns: 0,
    skippedTicks: 0,
  });
  const get = (r: ResourceName): TailState => states.get(r) ?? empty(r);
  return {
    locked,
    get: async (r) => ({ ...get(r) }),
    list: async () => [...states.values()],
    async setActive(r, run) {
      states.set(r, { ...get(r), active: run });
    },
    async finishActive(r, run, outcome, at, error) {
      const s = get(r);
      const next: TailState = {
        ...s,
        active: undefined,
        lastRunId: run.runId,
        lastOutcome: outcome,
        lastFinishedAt: at,
        lastError: error,
      };
      if (outcome === 'completed') {
        if (s.watermark === undefined || run.to >= s.watermark) {
          next.watermark = run.to;
          next.watermarkAt = run.startedAt;
        }
        if (run.from === undefined) next.lastRescanAt = run.startedAt;
        next.completedRuns += 1;
      } else next.failedRuns += 1;
      states.set(r, next);
    },
    async countSkip(r) {
      const s = get(r);
      states.set(r, { ...s, skippedTicks: s.skippedTicks + 1 });
    },
    async lock(r) {
      if (locked.has(r)) return undefined;
      locked.add(r);
      return async () => {
        locked.delete(r);
      };
    },
    async reset(r) {
      states.delete(r);
    },
  };
}

function harness(head: number | undefined) {
  const state = memoryState();
  const runs = new Map<string, { state: string; failedReason?: string }>();
  const started: (BackfillRequest & { runId: string; gapOnFailure?: boolean })[] = [];
  let clock = 1_000_000;
  let headTime = head;
  const deps: TickDeps = {
    state,
    runStatus: async (id) => runs.get(id),
    head: async () => headTime,
    async startRun(request) {
      started.push(request);
      runs.set(request.runId, { state: 'waiting-children' });
      return { slices: 3 };
    },
  };
  return {
    state,
    runs,
    started,
    deps,
    now: () => clock,
    advance(ms: number) {
      clock += ms;
    },
    setHead(h: number) {
      headTime = h;
    },
    finish(runId: string, outcome: 'completed' | 'failed') {
      runs.set(
        runId,
        outcome === 'completed'
          ? { state: 'completed' }
          : { state: 'failed', failedReason: 'slice x failed' },
      );
    },
  };
}

const tail = (resource: ResourceName, extra: Partial<ScheduleTickData> = {}): ScheduleTickData => ({
  kind: 'tail',
  resource,
  lookbackMs: 60_000,
  rescanEveryMs: 0,
  replay: false,
  fullHistory: false,
  ...extra,
});

describe('processTick', () => {
  it('first run reads from the earliest record (or --since) up to the newest record inclusive', async () => {
    const h = harness(5_000_000);
    const out = await processTick(tail('donations'), h.deps, { now: h.now });
    expect(out).toMatchObject({ action: 'started', from: undefined, to: 5_000_001, slices: 3 });
    expect(h.started[0]).toMatchObject({ resources: ['donations'], until: 5_000_001, replay: false });
    expect(h.started[0]?.since).toBeUndefined();
    const withSince = harness(5_000_000);
    await processTick(tail('donations', { since: 4_000_000 }), withSince.deps, { now: withSince.now });
    expect(withSince.started[0]?.since).toBe(4_000_000);
  });

  it('never starts a second run while one is in flight; the watermark advances only once the run completed', async () => {
    const h = harness(5_000_000);
    const first = await processTick(tail('donations'), h.deps, { now: h.now });
    if (first.action !== 'started') throw new Error('expected a start');
    h.setHead(6_000_000);
    h.advance(30_000);
    expect(await processTick(tail('donations'), h.deps, { now: h.now })).toMatchObject({
      action: 'skipped',
      runId: first.runId,
    });
    expect(h.started).toHaveLength(1);
    expect((await h.state.get('donations')).watermark).toBeUndefined();
    expect((await h.state.get('donations')).skippedTicks).toBe(1);

    h.finish(first.runId, 'completed');
    h.advance(30_000);
    const second = await processTick(tail('donations'), h.deps, { now: h.now });
    expect(second).toMatchObject({
      action: 'started',
      settled: { runId: first.runId, outcome: 'completed' },
    });
    // Catch-up: the next run reaches from the watermark minus the lookback to the newest record now.
    expect(h.started[1]).toMatchObject({ since: 5_000_001 - 60_000, until: 6_000_001 });
    expect((await h.state.get('donations')).watermark).toBe(5_000_001);
  });

  it('a failed run leaves the watermark where it was and the next run covers its range again', async () => {
    const h = harness(5_000_000);
    const a = await processTick(tail('transactions'), h.deps, { now: h.now });
    if (a.action !== 'started') throw new Error('expected a start');
    h.finish(a.runId, 'completed');
    h.setHead(5_100_000);
    h.advance(1000);
    const b = await processTick(tail('transactions'), h.deps, { now: h.now });
    if (b.action !== 'started') throw new Error('expected a start');
    h.finish(b.runId, 'failed');
    h.setHead(5_200_000);
    h.advance(1000);
    const c = await processTick(tail('transactions'), h.deps, { now: h.now });
    expect(c).toMatchObject({
      action: 'started',
      settled: { runId: b.runId, outcome: 'failed', reason: 'slice x failed' },
    });
    const s = await h.state.get('transactions');
    expect(s.watermark).toBe(5_000_001);
    expect(s.failedRuns).toBe(1);
    expect(h.started[2]).toMatchObject({ since: 5_000_001 - 60_000, until: 5_200_001 });
  });

  it('a run id the queue does not know (crash between recording and enqueueing) is settled as failed', async () => {
    const h = harness(5_000_000);
    await h.state.setActive('donations', {
      runId: 'ghost',
      kind: 'tail',
      from: 1,
      to: 2,
      startedAt: 0,
    } satisfies ActiveRun);
    const out = await processTick(tail('donations'), h.deps, { now: h.now });
    expect(out).toMatchObject({ action: 'started', settled: { runId: 'ghost', outcome: 'failed' } });
    expect((await h.state.get('donations')).watermark).toBeUndefined();
  });

  it('changing resources re-read everything when a rescan is due; immutable ones never do', async () => {
    const h = harness(5_000_000);
    const first = await processTick(tail('parties', { rescanEveryMs: 120_000 }), h.deps, { now: h.now });
    if (first.action !== 'started') throw new Error('expected a start');
    h.finish(first.runId, 'completed');
    h.advance(30_000);
    const second = await processTick(tail('parties', { rescanEveryMs: 120_000 }), h.deps, { now: h.now });
    if (second.action !== 'started') throw new Error('expected a start');
    expect(second.from).toBe(5_000_001 - 60_000); // rescan not due yet (first run was a full read)
    h.finish(second.runId, 'completed');
    h.advance(120_000);
    const third = await processTick(tail('parties', { rescanEveryMs: 120_000 }), h.deps, { now: h.now });
    expect(third).toMatchObject({ action: 'started', from: undefined });

    const d = harness(5_000_000);
    const r1 = await processTick(tail('donations', { rescanEveryMs: 0 }), d.deps, { now: d.now });
    if (r1.action !== 'started') throw new Error('expected a start');
    d.finish(r1.runId, 'completed');
    expect(await processTick(tail('donations', { rescanEveryMs: 0 }), d.deps, { now: d.now })).toMatchObject({
      from: 5_000_001 - 60_000,
    });
  });

  it('transactions further behind than the 72 h feed switch to the per-user walk', async () => {
    const h = harness(10 * UNFILTERED_TRANSACTION_WINDOW_MS);
    await h.state.setActive('transactions', { runId: 'old', kind: 'tail', from: 0, to: 1000, startedAt: 0 });
    h.runs.set('old', { state: 'completed' });
    const out = await processTick(tail('transactions'), h.deps, { now: h.now });
    expect(out).toMatchObject({ action: 'started', fullHistory: true, from: 0 });
    expect(h.started[0]?.fullHistory).toBe(true);
  });

  it('cron backfills read everything, honour --replay, and never overlap a tail of the same resource', async () => {
    const h = harness(5_000_000);
    const t = await processTick(tail('users'), h.deps, { now: h.now });
    if (t.action !== 'started') throw new Error('expected a start');
    const cron: ScheduleTickData = { ...tail('users'), kind: 'backfill', replay: true };
    expect(await processTick(cron, h.deps, { now: h.now })).toMatchObject({ action: 'skipped' });
    h.finish(t.runId, 'completed');
    expect(await processTick(cron, h.deps, { now: h.now })).toMatchObject({
      action: 'started',
      kind: 'backfill',
      from: undefined,
    });
    expect(h.started[1]).toMatchObject({ replay: true });
    expect(h.started[1]?.since).toBeUndefined();
    // Issue 48: a tail's run leaves a gap where a slice fails for good and moves on; a cron backfill still fails.
    expect(h.started[0]).toMatchObject({ gapOnFailure: true });
    expect(h.started[1]).toMatchObject({ gapOnFailure: false });
  });

  it('does nothing while another tick holds the lock, and nothing for an empty resource', async () => {
    const h = harness(undefined);
    h.state.locked.add('articles');
    expect(await processTick(tail('articles'), h.deps, { now: h.now })).toEqual({
      action: 'locked',
      resource: 'articles',
    });
    h.state.locked.clear();
    expect(await processTick(tail('articles'), h.deps, { now: h.now })).toEqual({
      action: 'empty',
      resource: 'articles',
    });
    expect(h.started).toHaveLength(0);
    expect(h.state.locked.size).toBe(0);
  });

  it('follows its run for up to settleWithinMs and moves the watermark as soon as it completed', async () => {
    const h = harness(5_000_000);
    let polls = 0;
    const deps: TickDeps = {
      ...h.deps,
      async runStatus(id) {
        polls += 1;
        return polls >= 3 ? { state: 'completed' } : h.runs.get(id);
      },
    };
    const out = await processTick(tail('donations', { settleWithinMs: 5_000 }), deps, {
      now: () => Date.now(),
      pollMs: 5,
    });
    expect(out).toMatchObject({ action: 'started', settled: { outcome: 'completed' } });
    expect((await h.state.get('donations')).watermark).toBe(5_000_001);
    expect((await h.state.get('donations')).active).toBeUndefined();
  });

  it('rejects bad tick data naming the field', async () => {
    const h = harness(1);
    await expect(processTick(tail('users', { lookbackMs: -1 }), h.deps)).rejects.toThrow(/lookbackMs/);
    await expect(processTick(tail('users', { rescanEveryMs: -2 }), h.deps)).rejects.toThrow(/rescanEveryMs/);
  });
});
