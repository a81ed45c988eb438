/**
 * What a planned run will cost the key, said before it is spent (`gamedata backfill --dry-run`; issue 32): per
 * resource the slices, the pages they are expected to read, the requests those make, the serialised feed seconds,
 * and the time on one key, which is the larger of the requests at the key's rate and the serial feed time (the
 * service works feed pages one at a time per key whatever the requests). Pure: every figure comes from the plan and
 * the cost model (`models/call-cost.ts`), each with the assumption behind it.
 *
 * And what it will cost the workers: the key's time is a floor only while the workers keep pace. A worker process is
 * one core (Node's one thread): at ~50 µs a record, a full history at the real volume (~97 M rows, ~1.3 M pages) is
 * ~100 core-minutes against ~50 minutes on the key, so one process would make the run about twice as long. The
 * estimate says how many keep pace (from the rows the dry run's samples found, or the pages), with each slice's fixed
 * cost beside its records' (issue 51), and what the run costs Redis, which every worker shares: its share of one core
 * at the key's pace.
 */
import { DEFAULT_CALL_COST, feedPageMs, type CallCostModel } from '../../foundation/models/index.js';
import type { ResourceName } from '../../foundation/models/index.js';
import type { PlannedRun } from './plan-backfill.js';

export interface PlanCostOptions {
  /** Calls a slice without a page estimate is taken to make (the budget's `callsPerSlice`). @default 2 */
  callsPerSlice?: number;
  /** Calls one request carries (the upstream's most). @default 50 */
  callsPerRequest?: number;
  /** The key's requests a minute. @default 500 */
  requestsPerMinute?: number;
  /** @default DEFAULT_CALL_COST */
  cost?: CallCostModel;
  /**
   * Pages of the slices the plan left unpriced, by slice id, and how they were found (`sampleWalkPages`, the dry
   * run's samples); a slice in neither counts `callsPerSlice`.
   */
  sampled?:
    | {
        pages: ReadonlyMap<string, number>;
        /** Rows of the same slices, where the samples know them (the workers' CPU is priced by rows). */
        rows?: ReadonlyMap<string, number>;
        probePages: number;
        notes: readonly string[];
      }
    | undefined;
  /** Worker CPU a record costs, µs. @default {@link WORKER_CPU_MICROS_PER_RECORD} */
  cpuMicrosPerRecord?: number;
  /** Worker CPU a slice costs whatever its rows, ms. @default {@link WORKER_CPU_MILLIS_PER_SLICE} */
  cpuMillisPerSlice?: number;
  /** Redis CPU a record costs, µs. @default {@link REDIS_CPU_MICROS_PER_RECORD} */
  redisMicrosPerRecord?: number;
  /** Redis CPU a slice costs whatever its rows, ms. @default {@link REDIS_CPU_MILLIS_PER_SLICE} */
  redisMillisPerSlice?: number;
  /**
   * Cores of the machine the workers and Redis share (the CLI passes its own machine's): the run's time when both run
   * there. @default none (the line is left out)
   */
  machineCores?: number;
}

/**
 * Worker CPU a slice costs whatever its rows, ms, in a run the key binds: the per-user plan at medium under the
 * realistic cost model (`bench/full-history.ts --scale medium --plans auto`, 2026-12-02, 8d6afa2, a quiet 2-core
 * Intel Xeon) spent 79.1 s of worker CPU on ~1.74 M fetched records (as this estimate counts them) and 20,007 slices,
 * so a slice costs well under 1 ms there. (Issue 51 measured ~22 ms a slice at small with rate limit and latency off,
 * on cd8b282: a CPU-bound run, where a slice's timers and round trips are not spread over a page's wait; not the run
 * this estimate prices.)
 */
export const WORKER_CPU_MILLIS_PER_SLICE = 0.5;

/**
 * Redis CPU a fetched record costs, µs: the same medium run took 41.0 s of Redis CPU (`INFO cpu`): ~25 µs for each of
 * the ~1.74 M records this estimate counts (a trade its other party's walk owns costs Redis nothing: it is dropped
 * before any claim; a published one ~37 µs: the dedup claims and marks ~20, BullMQ, the budget, counters).
 */
export const REDIS_CPU_MICROS_PER_RECORD = 25;

/** Redis CPU a slice costs whatever its rows, ms (BullMQ's job scripts, its checkpoints and counters; the same run). */
export const REDIS_CPU_MILLIS_PER_SLICE = 0.5;

/**
 * Worker CPU a record costs, µs: `bench/pipeline.ts` at scale medium, exactly-once, on a 2-core AMD EPYC (48-52 µs a
 * record published, 2026-11-28/29; at-least-once 41). Counted for every record fetched, so an estimate for a plan that
 * reads trades twice (per user: a record deduplicated skips the encoding and the produce) runs high: a medium per-user
 * run spent 0.65x it. A run of seconds runs low (small: 2.1-2.4x, the worker's warm-up), where the CPU does not bind.
 */
export const WORKER_CPU_MICROS_PER_RECORD = 50;

/** Records a full page holds (the upstream's largest `limit`). */
const RECORDS_PER_PAGE = 100;

/**
 * The records a slice of `pages` pages fetches: the samples' rows where they know them, else its full pages and half
 * of the page that ends it (a walk's last page is short, half full on average).
 */
function sliceRecords(pages: number, sampledRows: number | undefined): number {
  return sampledRows ?? Math.max(0, pages - 0.5) * RECORDS_PER_PAGE;
}

/** The estimate of one resource's part of a run. */
export interface ResourceCost {
  resource: ResourceName;
  slices: number;
  /** Slices whose plan says its pages. */
  slicesPlanned: number;
  /** Slices priced by the dry run's samples (the rest count `callsPerSlice` each). */
  slicesSampled: number;
  pages: number;
  requests: number;
  /** Serialised feed seconds: its unfiltered feed slices' pages, priced by their depth. */
  feedSeconds: number;
}

export interface PlanCost {
  resources: ResourceCost[];
  /**
   * The planning's own cost: the partition proof's serial feed seconds and pages, the planner's probes (spent again
   * by the run, which plans anew: counted in the totals), and the dry run's samples (spent by the dry run only).
   */
  planning: { proofFeedSeconds: number; proofPages: number; probePages: number; samplePages: number };
  /** Pages of the run, planning included. */
  pages: number;
  /** Requests of the run at full batches (what a run the key binds sends). */
  requests: number;
  /** Serialised feed seconds of the run, the proof's included. */
  feedSeconds: number;
  /** Minutes on one key: max(requests at the key's rate, serial feed time). */
  minutesOnOneKey: number;
  /** Minutes of one worker process's CPU (one core) for the records the walks fetch. */
  workerCpuMinutes: number;
  /** The slices the plan makes (splits while read not counted). */
  slices: number;
  /** Minutes of worker CPU the slices cost beyond their records (each slice's fixed cost). */
  sliceCpuMinutes: number;
  /**
   * Worker processes (cores) that keep pace with the key: `(workerCpuMinutes + sliceCpuMinutes) / minutesOnOneKey`,
   * rounded up, >= 1.
   */
  workerProcesses: number;
  /** Minutes of Redis CPU (one core: Redis runs commands on one thread) for the records and the slices. */
  redisCpuMinutes: number;
  /** The share of one Redis core the run needs at the key's pace: above 1, Redis, not the key, sets the pace. */
  redisCoreShare: number;
  /** Cores the workers and Redis need together to keep pace with the key: their CPU minutes / the key's, rounded up. */
  boxCores: number;
  /**
   * With {@link PlanCostOptions.machineCores}: the least minutes the run takes with the workers and Redis on that
   * machine alone, `max(minutesOnOneKey, (worker + slice + Redis CPU) / cores)` (the broker's CPU not counted).
   */
  minutesOnMachine?: { cores: number; minutes: number };
  assumptions: string[];
}

const ENTITY_FILTERS = ['userId', 'itemCode', 'countryId', 'muId', 'partyId'];

/** Estimates what `planned` will cost the key. */
export function estimatePlanCost(planned: PlannedRun, options: PlanCostOptions = {}): PlanCost {
  const callsPerSlice = options.callsPerSlice ?? 2;
  const perRequest = options.callsPerRequest ?? 50;
  const rpm = options.requestsPerMinute ?? 500;
  const cpuMicros = options.cpuMicrosPerRecord ?? WORKER_CPU_MICROS_PER_RECORD;
  const sliceMillis = options.cpuMillisPerSlice ?? WORKER_CPU_MILLIS_PER_SLICE;
  const redisMicros = options.redisMicrosPerRecord ?? REDIS_CPU_MICROS_PER_RECORD;
  const redisSliceMillis = options.redisMillisPerSlice ?? REDIS_CPU_MILLIS_PER_SLICE;
  const model = options.cost ?? DEFAULT_CALL_COST;
  const until = planned.run.until;
  const byResource = new Map<ResourceName, ResourceCost>();
  let records = 0;
  for (const s of planned.slices) {
    const r = byResource.get(s.resource) ?? {
      resource: s.resource,
      slices: 0,
      slicesPlanned: 0,
      slicesSampled: 0,
      pages: 0,
      requests: 0,
      feedSeconds: 0,
    };
    r.slices++;
    const sampled = options.sampled?.pages.get(s.sliceId);
    const pages = s.expectedPages ?? sampled ?? callsPerSlice;
    if (s.expectedPages !== undefined) r.slicesPlanned++;
    else if (sampled !== undefined) r.slicesSampled++;
    records += sliceRecords(
      pages,
      s.expectedPages === undefined ? options.sampled?.rows?.get(s.sliceId) : undefined,
    );
    // A users page also fetches each row's profile (one call per row).
    r.pages += s.resource === 'users' && (s.expectedPages ?? sampled) !== undefined ? pages * 101 : pages;
    const feed = s.resource === 'transactions' && !ENTITY_FILTERS.some((k) => s.filters[k] !== undefined);
    if (feed) {
      // Its pages lie between its end and its start: priced at the middle's depth.
      const mid = until - (Math.min(s.end, until) + Math.max(s.start, until - 72 * 3_600_000)) / 2;
      r.feedSeconds += (pages * feedPageMs(mid, model)) / 1000;
    }
    byResource.set(s.resource, r);
  }
  for (const r of byResource.values()) {
    r.pages = Math.round(r.pages);
    r.requests = Math.ceil(r.pages / perRequest);
  }
  const resources = [...byResource.values()];
  const proofFeedSeconds = planned.run.partition?.feedSeconds ?? 0;
  const proofPages = planned.planning.proofPages ?? 0;
  const probePages = planned.planning.probePages;
  const pages = resources.reduce((n, r) => n + r.pages, 0) + proofPages + probePages;
  const requests = Math.ceil(pages / perRequest);
  const feedSeconds = resources.reduce((n, r) => n + r.feedSeconds, 0) + proofFeedSeconds;
  const unpriced = resources.reduce((n, r) => n + r.slices - r.slicesPlanned - r.slicesSampled, 0);
  const minutesOnOneKey = Math.max(requests / rpm, feedSeconds / 60);
  const workerCpuMinutes = (records * cpuMicros) / 60e6;
  const slices = planned.slices.length;
  const sliceCpuMinutes = (slices * sliceMillis) / 60e3;
  const redisCpuMinutes = (records * redisMicros) / 60e6 + (slices * redisSliceMillis) / 60e3;
  const keyMinutes = Math.max(minutesOnOneKey, Number.MIN_VALUE);
  return {
    resources,
    planning: { proofFeedSeconds, proofPages, probePages, samplePages: options.sampled?.probePages ?? 0 },
    pages,
    requests,
    feedSeconds,
    minutesOnOneKey,
    workerCpuMinutes,
    slices,
    sliceCpuMinutes,
    workerProcesses: Math.max(1, Math.ceil((workerCpuMinutes + sliceCpuMinutes) / keyMinutes)),
    redisCpuMinutes,
    redisCoreShare: redisCpuMinutes / keyMinutes,
    ...boxFigures(
      workerCpuMinutes + sliceCpuMinutes + redisCpuMinutes,
      minutesOnOneKey,
      options.machineCores,
    ),
    assumptions: [
      `pages: each slice's plan where it says (density, row or history probes: full pages and the one that ends the read), planning's own pages (proof, probes) included`,
      ...(options.sampled?.notes ?? []).map((n) => `sampled: ${n}`),
      ...(unpriced > 0
        ? [
            `${unpriced} slices with no estimate at ${callsPerSlice} pages each (their head page and the page that ends them)`,
          ]
        : []),
      'a busy walk splits while read and each piece ends on a page of its own: measured +5-7 % pages over the estimate at small and medium (not counted)',
      `requests: ${perRequest} calls each (full batches, what a run the key binds sends; a run the key does not bind sends emptier ones, which cost it nothing)`,
      `serial feed: unfiltered transaction pages at ${model.feedHeadMs} ms + ${model.feedPerHourMs} ms per hour of depth, one at a time per key`,
      `time on one key: the larger of the requests at ${rpm} a minute and the serial feed time (latency and the box not counted)`,
      `worker CPU: ${Math.round(records)} records fetched (the samples' rows where the dry run sampled, else each slice's full pages and half a page that ends it), ${cpuMicros} µs each (bench/pipeline.ts, exactly-once, on a 2-core AMD EPYC; a record deduplicated costs less); one worker process is one core`,
      `slices: ${slices} as planned (splits while read not counted), ${sliceMillis} ms of worker CPU each whatever their rows (their claims, checkpoints, transactions and BullMQ bookkeeping: the per-user plan at medium under the realistic cost model, exactly-once)`,
      `Redis: ${redisMicros} µs a record fetched and ${redisSliceMillis} ms a slice (the same run: dedup, BullMQ, the budget, counters), on the one thread Redis runs commands on; every worker shares it`,
    ],
  };
}

/** The cores workers and Redis need together (`cpuMinutes` of both) at the key's pace, and the time on `machineCores`. */
function boxFigures(
  cpuMinutes: number,
  minutesOnOneKey: number,
  machineCores: number | undefined,
): Pick<PlanCost, 'boxCores' | 'minutesOnMachine'> {
  const boxCores = Math.max(1, Math.ceil(cpuMinutes / Math.max(minutesOnOneKey, Number.MIN_VALUE)));
  return machineCores === undefined
    ? { boxCores }
    : {
        boxCores,
        minutesOnMachine: {
          cores: machineCores,
          minutes: Math.max(minutesOnOneKey, cpuMinutes / machineCores),
        },
      };
}

/** `minutes` of one core: `12.3 core-minutes`, or `45 core-seconds` under a minute. */
function coreTime(minutes: number): string {
  return minutes < 1 ? `${(minutes * 60).toFixed(0)} core-seconds` : `${minutes.toFixed(1)} core-minutes`;
}

/** The workers' line: their CPU (records and slices) and the processes that keep pace with the key. */
function workerLine(c: PlanCost): string {
  const total = c.workerCpuMinutes + c.sliceCpuMinutes;
  const parts = `${coreTime(c.workerCpuMinutes)} for the records, ${coreTime(c.sliceCpuMinutes)} for ${c.slices} slices`;
  return c.workerProcesses > 1
    ? `worker CPU: about ${coreTime(total)} (${parts}): ${c.workerProcesses} worker processes on as many cores keep pace with the key (gamedata worker --processes ${c.workerProcesses}, or more workers); one alone would take about ${total.toFixed(0)} min`
    : `worker CPU: about ${coreTime(total)} (${parts}): one worker process keeps pace with the key`;
}

/** Redis' line: its CPU and the share of its one core the run needs at the key's pace. */
function redisLine(c: PlanCost): string {
  const share = `${Math.round(c.redisCoreShare * 100)} % of one core at the key's pace`;
  return c.redisCoreShare > 1
    ? `Redis CPU: about ${coreTime(c.redisCpuMinutes)}: ${share}, so Redis, not the key, sets the pace (about ${c.redisCpuMinutes.toFixed(0)} min); fewer, larger slices cost it less`
    : `Redis CPU: about ${coreTime(c.redisCpuMinutes)}: ${share}`;
}

/** The box's line: the cores workers and Redis need together, and the run's least time on this machine's cores. */
function boxLine(c: PlanCost): string {
  const total = c.workerCpuMinutes + c.sliceCpuMinutes + c.redisCpuMinutes;
  const here =
    c.minutesOnMachine === undefined
      ? ''
      : `; with both on this machine's ${c.minutesOnMachine.cores} cores, at least about ${c.minutesOnMachine.minutes.toFixed(1)} min`;
  return `box: workers and Redis about ${coreTime(total)} together: ${c.boxCores} cores keep pace with the key${here} (the broker, the registry and the upstream's latency not counted)`;
}

/** The estimate as lines for a terminal. */
export function formatPlanCost(c: PlanCost): string {
  const lines = ['resource       slices  planned  sampled    pages  requests  feed s'];
  for (const r of c.resources)
    lines.push(
      `${r.resource.padEnd(13)} ${String(r.slices).padStart(7)} ${String(r.slicesPlanned).padStart(8)} ${String(r.slicesSampled).padStart(8)} ${String(r.pages).padStart(8)} ${String(r.requests).padStart(9)} ${r.feedSeconds.toFixed(0).padStart(7)}`,
    );
  lines.push(
    `total: ${c.pages} pages, ${c.requests} requests, ${c.feedSeconds.toFixed(0)} s of serial feed: about ${c.minutesOnOneKey.toFixed(1)} min on one key`,
    workerLine(c),
    redisLine(c),
    boxLine(c),
    `planning (in the totals, spent again by the run): ${c.planning.proofPages} proof pages (${c.planning.proofFeedSeconds.toFixed(1)} s of serial feed), ${c.planning.probePages} probe pages${c.planning.samplePages > 0 ? `; this estimate's samples: ${c.planning.samplePages} probe pages (not spent by the run)` : ''}`,
    'assumptions:',
    ...c.assumptions.map((a) => `  - ${a}`),
  );
  return lines.join('\n');
}
