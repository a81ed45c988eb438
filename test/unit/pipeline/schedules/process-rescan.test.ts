/* eslint-disable @typescript-eslint/require-await -- in-memory fakes of async interfaces */
import { describe, expect, it } from 'vitest';
import type { ResourceName } from '../../../../src/foundation/models/resources.js';
import {
  parseRescanShare,
  processRescan,
  rescanParts,
  type BudgetSpend,
  type RescanDeps,
} from '../../../../src/pipeline/schedules/process-rescan.js';
import type { RescanState, RescanStateStore } from '../../../../src/pipeline/schedules/rescan-state.js';
import type { ScheduleTickData } from '../../../../src/pipeline/schedules/process-tick.js';

function memoryRescans(): RescanStateStore {
  const states = new Map<string, Record<string, number | string | undefined>>();
  return {
    async get(r) {
      const h = states.get(r) ?? {};
      const n = (k: string): number | undefined => (h[k] === undefined ? undefined : Number(h[k]));
      return {
        cursor: n('cursor'),
        passTop: n('passTop'),
        passStartedAt: n('passStartedAt'),
        passRequests: n('passRequests'),
        passRescanRequests: n('passRescanRequests'),
        runId: h['runId'] as string | undefined,
        from: n('from'),
        to: n('to'),
        lastPassAt: n('lastPassAt'),
        completedParts: n('completedParts') ?? 0,
        cappedTicks: n('cappedTicks') ?? 0,
      } satisfies RescanState;
    },
    async set(r, fields) {
      states.set(r, { ...states.get(r), ...fields });
    },
    async incr(r, field) {
      const h = states.get(r) ?? {};
      states.set(r, { ...h, [field]: Number(h[field] ?? 0) + 1 });
    },
    async lock() {
      return async () => undefined;
    },
  };
}

function harness(watermark: number | undefined) {
  const runs = new Map<string, string>();
  const started: { since: number; until: number; runId: string; priority: string }[] = [];
  let spend: BudgetSpend | undefined;
  let t = 1_000;
  const deps: RescanDeps = {
    rescans: memoryRescans(),
    watermark: async () => watermark,
    runStatus: async (id) => (runs.has(id) ? { state: runs.get(id) ?? 'active' } : undefined),
    async startRun(request) {
      started.push({
        since: request.since ?? -1,
        until: request.until ?? -1,
        runId: request.runId,
        priority: request.priority,
      });
      runs.set(request.runId, 'active');
      return { slices: 1 };
    },
    spend: async () => spend,
  };
  return {
    deps,
    started,
    runs,
    now: () => (t += 1000),
    setSpend: (s: BudgetSpend) => (spend = s),
  };
}

const tick = (resource: ResourceName, extra: Partial<ScheduleTickData> = {}): ScheduleTickData => ({
  kind: 'tail',
  resource,
  lookbackMs: 0,
  rescanEveryMs: -1,
  rescanParts: 4,
  rescanShare: 0.2,
  replay: false,
  fullHistory: false,
  since: 0,
  ...extra,
});

describe('processRescan', () => {
  it('covers [since, watermark) once per pass in equal parts, newest first, at rescan priority', async () => {
    const h = harness(4000);
    const ranges: [number, number][] = [];
    for (let i = 0; i < 4; i++) {
      const out = await processRescan(tick('users'), h.deps, { now: h.now });
      expect(out.action).toBe('started');
      // A tick while the part runs starts nothing.
      expect(await processRescan(tick('users'), h.deps, { now: h.now })).toMatchObject({ action: 'running' });
      const last = h.started.at(-1)!;
      expect(last.priority).toBe('rescan');
      ranges.push([last.since, last.until]);
      h.runs.set(last.runId, 'completed');
    }
    expect(ranges).toEqual([
      [3000, 4000],
      [2000, 3000],
      [1000, 2000],
      [0, 1000],
    ]);
    expect(await processRescan(tick('users'), h.deps, { now: h.now })).toEqual({ action: 'pass-completed' });
    // The next pass starts again at the watermark.
    expect(await processRescan(tick('users'), h.deps, { now: h.now })).toMatchObject({
      from: 3000,
      to: 4000,
    });
  });

  it('retries a failed part', async () => {
    const h = harness(4000);
    await processRescan(tick('parties'), h.deps, { now: h.now });
    h.runs.set(h.started[0]!.runId, 'failed');
    expect(await processRescan(tick('parties'), h.deps, { now: h.now })).toMatchObject({
      action: 'started',
      from: 3000,
      to: 4000,
      settled: 'failed',
    });
  });

  it('holds parts while rescans spent more than their share of a busy key, not of an idle one', async () => {
    const h = harness(4000);
    h.setSpend({ requests: 100, rescanRequests: 0, limit: 500, remaining: 10 });
    await processRescan(tick('users'), h.deps, { now: h.now });
    h.runs.set(h.started[0]!.runId, 'completed');
    // Since the pass began: 50 requests, 20 of them rescans (40 % > 20 %), and the key is busy.
    h.setSpend({ requests: 150, rescanRequests: 20, limit: 500, remaining: 10 });
    expect(await processRescan(tick('users'), h.deps, { now: h.now })).toMatchObject({ action: 'capped' });
    // Idle key (more than 80 % of the window left): the part goes.
    h.setSpend({ requests: 150, rescanRequests: 20, limit: 500, remaining: 450 });
    expect(await processRescan(tick('users'), h.deps, { now: h.now })).toMatchObject({ action: 'started' });
    // Within the share: the part goes on a busy key too.
    h.runs.set(h.started[1]!.runId, 'completed');
    h.setSpend({ requests: 400, rescanRequests: 40, limit: 500, remaining: 10 });
    expect(await processRescan(tick('users'), h.deps, { now: h.now })).toMatchObject({ action: 'started' });
  });

  it('is off for append-only feeds, cron backfills, and without parts', async () => {
    const h = harness(4000);
    expect(await processRescan(tick('transactions'), h.deps)).toEqual({ action: 'off' });
    expect(await processRescan(tick('users', { kind: 'backfill' }), h.deps)).toEqual({ action: 'off' });
    expect(await processRescan(tick('users', { rescanParts: 0 }), h.deps)).toEqual({ action: 'off' });
    expect(await processRescan(tick('users'), harness(undefined).deps)).toEqual({ action: 'no-watermark' });
  });

  it('parses the options', () => {
    expect(rescanParts(24 * 3600_000, 30_000)).toBe(2880);
    expect(rescanParts(10_000, 30_000)).toBe(1);
    expect(parseRescanShare('--rescan-budget', '20%')).toBeCloseTo(0.2);
    expect(parseRescanShare('--rescan-budget', '0.5')).toBe(0.5);
    expect(() => parseRescanShare('--rescan-budget', '0')).toThrow(/--rescan-budget/);
    expect(() => parseRescanShare('--rescan-budget', '150%')).toThrow(/--rescan-budget/);
  });
});
