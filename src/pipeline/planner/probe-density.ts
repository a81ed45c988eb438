/**
 * Density probing: a few one-page reads at synthetic cursors tell how many rows a range holds, so slices can be
 * sized in rows. The probes of one round are issued together, so a batching client sends them in one POST.
 */
import { ConfigError } from '../../foundation/errors/index.js';
import {
  splitEvenly,
  type DensityEstimate,
  type ProbedStretch,
  type TimeRange,
} from '../../foundation/slicing/index.js';

/**
 * Reads the sort times (epoch ms, newest first) of at most `limit` rows strictly older than `beforeMs`
 * (one page at the synthetic cursor `v2(beforeMs, 000…0)`).
 */
export type ProbePage = (beforeMs: number, limit: number) => Promise<number[]>;

export interface ProbeDensityOptions {
  /** Buckets the range is probed in. @default 16 */
  buckets?: number;
  /** Page size of one probe (the upstream's maximum is 100). @default 100 */
  limit?: number;
}

export const DEFAULT_PROBE_DENSITY_OPTIONS: Required<ProbeDensityOptions> = { buckets: 16, limit: 100 };

/**
 * Estimates rows per bucket: one page read at the top of each bucket. A page that ends inside the bucket counts
 * the bucket exactly; a full page extrapolates its rows-per-ms over the bucket's width.
 */
export async function probeDensity(
  probe: ProbePage,
  range: TimeRange,
  options: ProbeDensityOptions = {},
): Promise<DensityEstimate> {
  const o = { ...DEFAULT_PROBE_DENSITY_OPTIONS, ...options };
  if (!Number.isSafeInteger(o.buckets) || o.buckets < 1) {
    throw new ConfigError(`option buckets must be a positive integer, got ${String(o.buckets)}`);
  }
  const width = range.end - range.start;
  const n = Math.max(1, Math.min(o.buckets, width));
  const edges: number[] = [];
  for (let i = 0; i <= n; i++) edges.push(range.start + Math.floor((width * i) / n));
  const rows = await Promise.all(
    edges.slice(1).map(async (top, i) => {
      const bottom = edges[i] ?? range.start;
      const times = await probe(top, o.limit);
      const inside = times.filter((t) => t >= bottom);
      if (inside.length < times.length || times.length < o.limit) return inside.length;
      // Nothing lies between the newest row and the top, so extrapolate the page's own rate from its newest row.
      const newest = times[0] ?? top;
      const oldest = times[times.length - 1] ?? top;
      // A same-millisecond burst says nothing about the rate: extrapolating over 1 ms would plan the walk's maximum
      // of slices around it. Count the page; the slice's own split handles more.
      if (newest === oldest) return times.length;
      const span = Math.max(1, newest - oldest);
      return Math.ceil((times.length * Math.max(1, newest - bottom)) / span);
    }),
  );
  return { edges, rows };
}

export interface FindEarliestOptions {
  /** Probes per round (all issued together). @default 20 */
  fanout?: number;
  /** Stop once the earliest row is known within this many ms. @default 3_600_000 (1 h) */
  precisionMs?: number;
}

/**
 * Finds a time at or before the oldest row older than `beforeMs`, within `precisionMs`: a k-ary search with
 * one-row probes. Returns `null` when there is no row before `beforeMs`.
 */
export async function findEarliest(
  probe: ProbePage,
  beforeMs: number,
  lowerBoundMs = 0,
  options: FindEarliestOptions = {},
): Promise<number | null> {
  const fanout = options.fanout ?? 20;
  const precision = options.precisionMs ?? 3_600_000;
  if ((await probe(beforeMs, 1)).length === 0) return null;
  // Invariant: no row is older than lo, some row is older than hi.
  let lo = lowerBoundMs;
  let hi = beforeMs;
  while (hi - lo > precision) {
    const points: number[] = [];
    for (let i = 1; i < fanout; i++) points.push(lo + Math.floor(((hi - lo) * i) / fanout));
    const found = await Promise.all(points.map(async (p) => (await probe(p, 1)).length > 0));
    const firstHit = found.indexOf(true);
    const newHi = firstHit === -1 ? hi : (points[firstHit] ?? hi);
    const newLo =
      firstHit <= 0
        ? firstHit === 0
          ? lo
          : (points[points.length - 1] ?? lo)
        : (points[firstHit - 1] ?? lo);
    if (newHi === hi && newLo === lo) break;
    lo = newLo;
    hi = newHi;
  }
  return lo;
}

export interface ProbeRowsOptions {
  /** Probes of the first round: equal buckets over the range, each read at its top (one POST carries 50). @default 50 */
  buckets?: number;
  /** Page size of one probe (the upstream's maximum is 100). @default 100 */
  limit?: number;
  /** Probe rounds at most, the first included; what is still unread after them is estimated. @default 3 */
  maxRounds?: number;
  /** Most probes of one later round (every unread rest gets at least one). @default 500 */
  maxProbesPerRound?: number;
}

export const DEFAULT_PROBE_ROWS_OPTIONS: Required<ProbeRowsOptions> = {
  buckets: 50,
  limit: 100,
  maxRounds: 3,
  maxProbesPerRound: 500,
};

/** What {@link probeRows} learned: the stretches (oldest first) and what it cost. */
export interface ProbedRows {
  stretches: ProbedStretch[];
  /** Sequential probe rounds (each round's probes are issued together). */
  rounds: number;
  /** Probe pages read. */
  probes: number;
}

/** A rest wider than this many times the span its page covered is probed at geometric depths first. */
const GEOMETRIC_ABOVE = 16;
/** Rows at a page's oldest time from which they are taken for a same-millisecond burst. */
const BURST_TIES = 10;
/** Most geometric probes of one rest. */
const MAX_GEOMETRIC_PROBES = 24;

/** An unread rest `[start, end)` of a bucket, with the rate its bucket's page showed. */
interface Rest extends TimeRange {
  /** Estimated rows in the rest. */
  rows: number;
  /** Time span the page that left this rest covered (ms). */
  span: number;
}

/** The buckets that probe a rest in the next round (each read at its top). */
function probesOfRest(rest: Rest, limit: number, budget: number): TimeRange[] {
  const width = rest.end - rest.start;
  if (width > GEOMETRIC_ABOVE * rest.span) {
    // The page saw a short span of a long rest (a full history): find how deep the rows go before cutting evenly.
    const cuts: number[] = [];
    for (let d = 2 * rest.span; rest.end - d > rest.start && cuts.length < MAX_GEOMETRIC_PROBES; d *= 4)
      cuts.push(rest.end - d);
    const edges = [rest.end, ...cuts, rest.start];
    const out: TimeRange[] = [];
    for (let i = 1; i < edges.length; i++)
      out.push({ start: edges[i] as number, end: edges[i - 1] as number });
    return out;
  }
  // Half a page per bucket at the measured rate, so most come back complete.
  const parts = Math.max(1, Math.min(budget, Math.ceil(rest.rows / Math.max(1, limit / 2))));
  return splitEvenly(rest, parts);
}

/**
 * Learns where the rows of `range` are, round after round, each round's probes issued together (a batching client
 * sends them in as few POSTs as the batch limit allows). Round 1 reads one page at the top of each of `buckets`
 * equal buckets; a page that ends inside its bucket knows the bucket exactly (every row's time). A full page knows
 * the rows strictly newer than its oldest row; the rest of its bucket is probed in the next round, cut into
 * half-page buckets at the rate the page showed (or first at quadrupling depths when the rest is far wider than what
 * the page covered, e.g. one user's full history). After `maxRounds`, rests left are estimated at their rate.
 * The stretches cover `range` exactly (oldest first); feed them to `planRowSlices`.
 * @throws ConfigError for an empty range or a non-positive option.
 */
export async function probeRows(
  probe: ProbePage,
  range: TimeRange,
  options: ProbeRowsOptions = {},
): Promise<ProbedRows> {
  const o = { ...DEFAULT_PROBE_ROWS_OPTIONS, ...options };
  for (const [name, v] of Object.entries(o))
    if (!Number.isSafeInteger(v) || v < 1)
      throw new ConfigError(`option ${name} must be a positive integer, got ${String(v)}`);
  const stretches: ProbedStretch[] = [];
  let pending: TimeRange[] = splitEvenly(range, o.buckets);
  let rounds = 0;
  let probes = 0;
  while (pending.length > 0) {
    rounds++;
    probes += pending.length;
    const pages = await Promise.all(pending.map((b) => probe(b.end, o.limit)));
    const rests: Rest[] = [];
    pending.forEach((b, i) => {
      const times = pages[i] ?? [];
      const inside = times.filter((t) => t >= b.start && t < b.end);
      if (times.length < o.limit || inside.length < times.length) {
        stretches.push({ start: b.start, end: b.end, times: inside, rows: inside.length });
        return;
      }
      const newest = inside[0] as number;
      const oldest = inside[inside.length - 1] as number;
      // Rows at the oldest time may go on below the page: only rows strictly newer are known completely.
      const known = inside.filter((t) => t > oldest);
      if (oldest + 1 < b.end)
        stretches.push({ start: oldest + 1, end: b.end, times: known, rows: known.length });
      const ties = inside.length - known.length;
      // The rate the page showed (a burst alone shows none: then assume a page below it).
      const span = Math.max(1, newest - oldest);
      const rate = known.length / span;
      if (oldest === newest || ties >= BURST_TIES) {
        // Many ties at the bottom: likely a same-millisecond burst, one unit (never cut) of unknown size. Probing
        // below it rather than at it saves the round that would only see the burst again.
        stretches.push({ start: oldest, end: oldest + 1, rows: Math.max(o.limit, ties) });
        const width = oldest - b.start;
        if (width > 0)
          rests.push({ start: b.start, end: oldest, rows: rate > 0 ? rate * width : o.limit, span });
        return;
      }
      const width = oldest + 1 - b.start;
      if (width > 0)
        rests.push({ start: b.start, end: oldest + 1, rows: (inside.length * width) / span, span });
    });
    if (rests.length === 0) break;
    if (rounds >= o.maxRounds) {
      for (const r of rests) stretches.push({ start: r.start, end: r.end, rows: Math.ceil(r.rows) });
      break;
    }
    // Share the round's probes among the rests in proportion to their rows (at least one each).
    const wanted = rests.reduce((sum, r) => sum + Math.ceil(r.rows / Math.max(1, o.limit / 2)), 0);
    const scale = Math.min(1, o.maxProbesPerRound / Math.max(1, wanted));
    pending = rests.flatMap((r) =>
      probesOfRest(r, o.limit, Math.max(1, Math.floor(Math.ceil(r.rows / Math.max(1, o.limit / 2)) * scale))),
    );
  }
  stretches.sort((a, b) => a.start - b.start);
  return { stretches, rounds, probes };
}
