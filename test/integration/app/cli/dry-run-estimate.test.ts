/**
 * `gamedata backfill --dry-run` says what a full history will cost before it is spent (issue 32): its transaction
 * pages, checked against the pages the simulator's truth needs (every walk's rows in full pages, the partial one and
 * the empty page that ends it) for both plans, and nothing enqueued. The bench (bench/full-history.ts) checks the
 * same estimate against measured runs.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Queue } from 'bullmq';
import { createHarness, type Harness } from '../../../e2e/pipeline-harness.js';
import { walkPages } from '../../../../src/pipeline/planner/index.js';
import { QUEUE_NAMES } from '../../../../src/pipeline/contract/queue-names.js';

const ROOT = fileURLToPath(new URL('../../../..', import.meta.url));

function dryRun(
  h: Harness,
  partition: string,
  extra: readonly string[] = [],
): Promise<{ code: number | null; out: string }> {
  const until = new Date(h.sim.now()).toISOString();
  return gamedata(h, [
    'backfill',
    'transactions',
    '--full-history',
    '--until',
    until,
    '--partition',
    partition,
    '--dry-run',
    ...extra,
  ]);
}

function gamedata(h: Harness, argv: readonly string[]): Promise<{ code: number | null; out: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/app/cli/main.ts', ...argv], {
    cwd: ROOT,
    env: h.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, out })));
}

/** The transactions line: `transactions  slices planned sampled pages requests feed`. */
function transactionPages(out: string): { slices: number; sampled: number; pages: number } {
  const m = /^transactions\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+\d+\s+\d+$/m.exec(out);
  if (m === null) throw new Error(`no transactions line in:\n${out}`);
  return { slices: Number(m[1]), sampled: Number(m[3]), pages: Number(m[4]) };
}

describe('backfill --dry-run: the estimate of a full history', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness('dry-run');
  });
  afterAll(async () => {
    await h?.cleanup();
  });

  const rowsBy = (key: string): Map<string, number> => {
    const by = new Map<string, number>();
    for (const t of h.sim.truth('transactions')) {
      const v = t[key];
      if (typeof v === 'string') by.set(v, (by.get(v) ?? 0) + 1);
    }
    return by;
  };

  it('per country: the walks it samples within 15 % of the pages the truth needs; nothing enqueued', async () => {
    const { code, out } = await dryRun(h, 'countryId');
    expect({ code, out }).toMatchObject({ code: 0 });
    const est = transactionPages(out);
    const truth = [...rowsBy('countryId').values()].reduce((n, r) => n + walkPages(r, 100), 0);
    expect(est.sampled).toBeGreaterThan(0);
    expect(est.pages / truth).toBeGreaterThan(0.85);
    expect(est.pages / truth).toBeLessThan(1.15);
    expect(out).toMatch(/this estimate's samples: \d+ probe pages \(not spent by the run\)/);
    expect(out).toMatch(
      /sampled: transactions:countryId: \d+ walks at [\d.]+x their rows in the proof's window/,
    );
    const queue = new Queue(QUEUE_NAMES.slices, {
      connection: { url: h.settings.redisUrl },
      prefix: h.settings.queuePrefix,
    });
    try {
      expect(await queue.count()).toBe(0);
    } finally {
      await queue.close();
    }
  }, 120_000);

  it('per user: within 15 % of the pages and the records the truth needs (a trade under its buyer and its seller)', async () => {
    const { code, out } = await dryRun(h, 'off', ['--cpu-per-record', '25']);
    expect({ code, out }).toMatchObject({ code: 0 });
    const est = transactionPages(out);
    const rows = new Map<string, number>();
    for (const t of h.sim.truth('transactions'))
      for (const u of new Set([t['buyerId'], t['sellerId']]))
        if (typeof u === 'string') rows.set(u, (rows.get(u) ?? 0) + 1);
    const users = h.sim.truth('users').map((u) => u['_id'] as string);
    const truth = users.reduce((n, u) => n + walkPages(rows.get(u) ?? 0, 100), 0);
    expect(est.slices).toBe(users.length);
    expect(est.pages / truth).toBeGreaterThan(0.85);
    expect(est.pages / truth).toBeLessThan(1.15);
    // The workers' CPU is priced by the records the walks fetch (each trade under each of its users), at the µs given.
    const m = /worker CPU: (\d+) records fetched .*, (\d+) µs each/.exec(out);
    expect(m, out).not.toBeNull();
    const fetched = users.reduce((n, u) => n + (rows.get(u) ?? 0), 0);
    expect(Number(m?.[1]) / fetched).toBeGreaterThan(0.85);
    expect(Number(m?.[1]) / fetched).toBeLessThan(1.15);
    expect(Number(m?.[2])).toBe(25);
    expect(out).toMatch(
      /worker CPU: about \d+ core-seconds \(\d+ core-seconds for the records, \d+ core-seconds for \d+ slices\): one worker process keeps pace with the key/,
    );
    // Issue 51: what the run costs the one Redis every worker shares, as a share of its core at the key's pace.
    expect(out).toMatch(/Redis CPU: about \d+ core-seconds: \d+ % of one core at the key's pace/);
  }, 120_000);

  it('--plan-for: for requests, slices of --target-rows (fewer at more rows); for rounds, one page each whatever the target', async () => {
    const donations = h.sim.truth('donations').length;
    const slices = async (planFor: string, target: number): Promise<number> => {
      const { code, out } = await gamedata(h, [
        'backfill',
        'donations',
        '--full-history',
        '--plan-for',
        planFor,
        '--target-rows',
        String(target),
        '--dry-run',
      ]);
      expect({ code, out }).toMatchObject({ code: 0 });
      const m = /^donations\s+(\d+)\s/m.exec(out);
      expect(m, out).not.toBeNull();
      return Number(m?.[1]);
    };
    const [coarse, fine, rounds, roundsFine] = [
      await slices('requests', 1000),
      await slices('requests', 200),
      await slices('rounds', 1000),
      await slices('rounds', 200),
    ];
    expect(donations).toBeGreaterThan(1000);
    // A density estimate cuts at about the target: within 2x of rows / target either way.
    expect(coarse).toBeGreaterThanOrEqual(Math.floor(donations / 1000 / 2));
    expect(coarse).toBeLessThanOrEqual(Math.ceil((donations / 1000) * 2));
    expect(fine).toBeGreaterThan(coarse);
    expect(fine).toBeGreaterThanOrEqual(Math.floor(donations / 200 / 2));
    expect(fine).toBeLessThanOrEqual(Math.ceil((donations / 200) * 2));
    // For rounds the target is not used: slices of at most one page's rows, so at least rows / 99.
    expect(rounds).toBe(roundsFine);
    expect(rounds).toBeGreaterThanOrEqual(Math.ceil(donations / 99));
  }, 120_000);
});
