/**
 * The pages of the walks a plan cannot price, estimated for `backfill --dry-run` (issue 32: the estimate must hold
 * within 25 % of a measured run). Two kinds of slice have no page estimate: the per-user walks (one whole-history slice
 * per user, never probed: a user's first page is its probe) and a partition's quiet walks (one slice per country over
 * the whole history). Their pages are most of a full history, so the dry run samples them:
 *
 * - **Partition walks** by a ratio: a few walks (evenly spread over the walks ordered by their rows in the proof's
 *   window) are probed over their whole range, and their history rows over their window rows, applied to each
 *   walk's window rows (the proof counted them exactly), gives each walk's rows. Assumes the walks' histories are
 *   alike in shape (a country busy now was busy before, in proportion).
 * - **Every other walk** (per-user) by the mean of an evenly spread sample, each sampled walk probed over its range.
 *
 * A walk of `r` rows reads `floor(r / pageSize) + 1` pages: its full pages, then the short (or empty) one that ends it
 * (`GAMEDATA_SHORT_PAGES=end`, the default; `confirm` reads an empty page more after a short one). The split of a busy
 * walk while read adds pages this does not count (measured +5-7 % at small and medium). Only the dry run pays the
 * samples' probe pages (said in its output); the run never does.
 */
import type { ResourceName } from '../../foundation/models/index.js';
import type { SliceJobData, WalkFilters } from '../contract/job-types.js';
import { probeRows, type ProbePage } from './probe-density.js';

/** A one-page probe of one listing (the planner source's `probe`). */
export type ProbeListing = (resource: ResourceName, filters: WalkFilters) => ProbePage;

export interface SampleWalkPagesOptions {
  /** Walks probed of each kind without a ratio (per-user). @default 400 */
  sample?: number;
  /** Partition walks probed for the ratio. @default 12 */
  ratioSample?: number;
  /** Page size of the walks. @default 100 */
  pageSize?: number;
  /** The partition key whose walks are priced by the ratio. @default 'countryId' */
  key?: string;
  /** Each partition walk's rows in the proof's window, by value of the key (absent: no ratio). */
  windowRows?: ReadonlyMap<string, number> | undefined;
  /**
   * Probe rounds per sampled walk (`probeRows`): the fourth round finds where a walk's history starts within a few
   * probes of it (measured at medium: 3 rounds put quiet walks' pages 17 % high, 4 rounds 9 %). @default 4
   */
  maxRounds?: number;
  /** Most probes of one sampled walk's later round. @default 48 */
  maxProbesPerRound?: number;
}

export const DEFAULT_SAMPLE_WALK_PAGES_OPTIONS = {
  sample: 400,
  ratioSample: 12,
  pageSize: 100,
  key: 'countryId',
  maxRounds: 4,
  maxProbesPerRound: 48,
} as const;

/** What the samples found. */
export interface WalkPageSample {
  /** Estimated pages of each slice the plan left unpriced, by slice id. */
  pages: Map<string, number>;
  /** Estimated rows of the same slices (what the workers' CPU is priced by, `plan-cost.ts`). */
  rows: Map<string, number>;
  /** Probe pages the samples read (the dry run's own cost). */
  probePages: number;
  /** One line per kind of walk: how it was priced. */
  notes: string[];
}

type Slice = Pick<SliceJobData, 'sliceId' | 'resource' | 'filters' | 'start' | 'end' | 'expectedPages'>;

/** Pages a walk of `rows` rows reads: its full pages, and the short (or empty) page that ends it. */
export function walkPages(rows: number, pageSize: number): number {
  return rows <= 0 ? 1 : Math.floor(rows / pageSize) + 1;
}

/** `n` items spread evenly over `items` (all of them when there are no more than `n`). */
export function spreadSample<T>(items: readonly T[], n: number): T[] {
  if (items.length <= n) return [...items];
  const out: T[] = [];
  for (let i = 0; i < n; i++) out.push(items[Math.floor((i * items.length) / n)] as T);
  return out;
}

/** The kind of a walk: its resource and which filters it has (`transactions:userId`). */
const kindOf = (s: Slice): string => `${s.resource}:${Object.keys(s.filters).sort().join('+')}`;

/** Estimates the pages of every slice of `slices` without `expectedPages` (see the header). */
export async function sampleWalkPages(
  slices: readonly Slice[],
  probe: ProbeListing,
  options: SampleWalkPagesOptions = {},
): Promise<WalkPageSample> {
  const o = { ...DEFAULT_SAMPLE_WALK_PAGES_OPTIONS, ...options };
  let probePages = 0;
  const rowsOf = async (s: Slice): Promise<number> => {
    const probed = await probeRows(
      probe(s.resource, s.filters),
      { start: s.start, end: s.end },
      { buckets: 1, limit: o.pageSize, maxRounds: o.maxRounds, maxProbesPerRound: o.maxProbesPerRound },
    );
    probePages += probed.probes;
    return probed.stretches.reduce((n, st) => n + st.rows, 0);
  };
  const kinds = new Map<string, Slice[]>();
  for (const s of slices) {
    if (s.expectedPages !== undefined) continue;
    const kind = kindOf(s);
    const group = kinds.get(kind);
    if (group === undefined) kinds.set(kind, [s]);
    else group.push(s);
  }
  const pages = new Map<string, number>();
  const rowsBySlice = new Map<string, number>();
  const notes: string[] = [];
  for (const [kind, group] of kinds) {
    const windowRows = o.windowRows;
    const byRatio =
      windowRows !== undefined &&
      group.every((s) => {
        const v = s.filters[o.key];
        return typeof v === 'string' && windowRows.has(v);
      });
    if (byRatio) {
      const inWindow = (s: Slice): number => windowRows.get(s.filters[o.key] as string) ?? 0;
      const ordered = group.filter((s) => inWindow(s) > 0).sort((a, b) => inWindow(a) - inWindow(b));
      const sample = spreadSample(ordered, o.ratioSample);
      const rows = await Promise.all(sample.map(rowsOf));
      const sampleWindow = sample.reduce((n, s) => n + inWindow(s), 0);
      const ratio = sampleWindow > 0 ? rows.reduce((n, r) => n + r, 0) / sampleWindow : 0;
      for (const s of group) {
        const estimated = Math.round(inWindow(s) * ratio);
        pages.set(s.sliceId, walkPages(estimated, o.pageSize));
        rowsBySlice.set(s.sliceId, estimated);
      }
      notes.push(
        `${kind}: ${group.length} walks at ${ratio.toFixed(1)}x their rows in the proof's window (the history-to-window ratio of ${sample.length} walks probed whole)`,
      );
      continue;
    }
    const sample = spreadSample(group, o.sample);
    const sampledRows = await Promise.all(sample.map(rowsOf));
    const sampled = sampledRows.map((r) => walkPages(r, o.pageSize));
    const mean = sampled.reduce((n, p) => n + p, 0) / Math.max(1, sampled.length);
    const meanRows = sampledRows.reduce((n, r) => n + r, 0) / Math.max(1, sampledRows.length);
    sample.forEach((s, i) => {
      pages.set(s.sliceId, sampled[i] as number);
      rowsBySlice.set(s.sliceId, sampledRows[i] as number);
    });
    for (const s of group)
      if (!pages.has(s.sliceId)) {
        pages.set(s.sliceId, mean);
        rowsBySlice.set(s.sliceId, meanRows);
      }
    notes.push(
      `${kind}: ${group.length} walks at ${mean.toFixed(2)} pages each (the mean of ${sample.length} probed whole, spread evenly)`,
    );
  }
  return { pages, rows: rowsBySlice, probePages, notes };
}
