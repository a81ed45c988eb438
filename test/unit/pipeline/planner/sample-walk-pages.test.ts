/**
 * The dry run's samples of the walks a plan cannot price (issue 32): per-user walks by an evenly spread sample's mean,
 * quiet partition walks by the history-to-window ratio of a few probed whole. Checked against fake listings whose rows
 * are known exactly.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { sampleWalkPages, spreadSample, walkPages } from '../../../../src/pipeline/planner/index.js';
import type { ProbePage } from '../../../../src/pipeline/planner/probe-density.js';
import type { SliceJobData } from '../../../../src/pipeline/contract/job-types.js';

const DAY = 86_400_000;
const UNTIL = 1_000 * DAY;

/** A probe over sorted-descending row times: at most `limit` rows strictly older than `before`. */
function probeOf(times: number[]): ProbePage {
  const sorted = [...times].sort((a, b) => b - a);
  return (before, limit) => Promise.resolve(sorted.filter((t) => t < before).slice(0, limit));
}

/** `n` rows spread evenly over `[from, to)`. */
const rowsOver = (n: number, from: number, to: number): number[] =>
  Array.from({ length: n }, (_, i) => from + Math.floor(((to - from) * (i + 0.5)) / n));

function walk(id: string, filters: Record<string, string>): SliceJobData {
  return {
    runId: 'r',
    sliceId: id,
    resource: 'transactions',
    filters,
    start: 0,
    end: UNTIL,
    replay: false,
    depth: 0,
  };
}

describe('walkPages', () => {
  it('a walk reads its full pages and the short (or empty) page that ends it', () => {
    expect(walkPages(0, 100)).toBe(1);
    expect(walkPages(1, 100)).toBe(1);
    expect(walkPages(99, 100)).toBe(1);
    expect(walkPages(100, 100)).toBe(2);
    expect(walkPages(101, 100)).toBe(2);
    expect(walkPages(250, 100)).toBe(3);
  });
});

describe('spreadSample', () => {
  it('takes n items spread evenly, or all of them when there are no more', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 500 }), fc.integer({ min: 1, max: 100 }), (len, n) => {
        const items = Array.from({ length: len }, (_, i) => i);
        const s = spreadSample(items, n);
        expect(s.length).toBe(Math.min(len, n));
        expect(new Set(s).size).toBe(s.length);
        for (let i = 1; i < s.length; i++) expect(s[i]).toBeGreaterThan(s[i - 1] as number);
      }),
    );
  });
});

describe('sampleWalkPages', () => {
  it('per-user walks: the sample mean of their pages, each sampled walk priced by its own rows', async () => {
    // 300 users: every third holds 250 rows over its last 200 days (4 pages), the others 30 rows (2 pages).
    const rows = new Map<string, number[]>();
    const slices: SliceJobData[] = [];
    for (let i = 0; i < 300; i++) {
      const id = `u${i}`;
      rows.set(
        id,
        i % 3 === 0 ? rowsOver(250, UNTIL - 200 * DAY, UNTIL) : rowsOver(30, UNTIL - 50 * DAY, UNTIL),
      );
      slices.push(walk(id, { userId: id }));
    }
    const probe = (_r: string, f: Record<string, unknown>) => probeOf(rows.get(f['userId'] as string) ?? []);
    const s = await sampleWalkPages(slices, probe, { sample: 60 });
    const total = [...s.pages.values()].reduce((n, p) => n + p, 0);
    const truth = 100 * walkPages(250, 100) + 200 * walkPages(30, 100);
    expect(total).toBeGreaterThan(truth * 0.9);
    expect(total).toBeLessThan(truth * 1.1);
    expect(s.pages.size).toBe(300);
    // The rows too: each sampled walk's own, the sample's mean for the rest.
    expect(s.rows.size).toBe(300);
    const rowsTotal = [...s.rows.values()].reduce((n, r) => n + r, 0);
    expect(rowsTotal).toBeGreaterThan((100 * 250 + 200 * 30) * 0.9);
    expect(rowsTotal).toBeLessThan((100 * 250 + 200 * 30) * 1.1);
    expect(s.rows.get('u0')).toBe(250);
    expect(s.rows.get('u5')).toBe(30);
    expect(s.probePages).toBeGreaterThanOrEqual(60);
    expect(s.notes[0]).toMatch(/^transactions:userId: 300 walks at [\d.]+ pages each \(the mean of 60/);
  });

  it('partition walks: each by its window rows times the history-to-window ratio of the probed ones', async () => {
    // 40 countries of different sizes, each with 10x its window rows (the last 3 days) over 300 days.
    const rows = new Map<string, number[]>();
    const windowRows = new Map<string, number>();
    const slices: SliceJobData[] = [];
    for (let i = 0; i < 40; i++) {
      const id = `c${i}`;
      const inWindow = 20 + 15 * i;
      windowRows.set(id, inWindow);
      rows.set(id, [
        ...rowsOver(inWindow, UNTIL - 3 * DAY, UNTIL),
        ...rowsOver(9 * inWindow, UNTIL - 300 * DAY, UNTIL - 3 * DAY),
      ]);
      slices.push(walk(id, { countryId: id }));
    }
    // A priced slice keeps its own estimate and is not sampled.
    slices.push({ ...walk('busy', { countryId: 'busy' }), expectedPages: 77 });
    const probe = (_r: string, f: Record<string, unknown>) =>
      probeOf(rows.get(f['countryId'] as string) ?? []);
    const s = await sampleWalkPages(slices, probe, { windowRows, ratioSample: 8 });
    expect(s.pages.has('busy')).toBe(false);
    for (let i = 0; i < 40; i++) {
      const truth = walkPages(10 * (20 + 15 * i), 100);
      expect(s.pages.get(`c${i}`)).toBeGreaterThanOrEqual(Math.floor(truth * 0.85));
      expect(s.pages.get(`c${i}`)).toBeLessThanOrEqual(Math.ceil(truth * 1.15));
      const rowsTruth = 10 * (20 + 15 * i);
      expect(s.rows.get(`c${i}`)).toBeGreaterThanOrEqual(Math.floor(rowsTruth * 0.85));
      expect(s.rows.get(`c${i}`)).toBeLessThanOrEqual(Math.ceil(rowsTruth * 1.15));
    }
    expect(s.notes[0]).toMatch(
      /^transactions:countryId: 40 walks at (9\.\d|10\.\d)x their rows in the proof's window/,
    );
  });
});
