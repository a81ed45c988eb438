/**
 * A live progress display for one run (what `backfill --wait` shows): a slices bar with its ETA and a records bar
 * with records/s, redrawn from the run's BullMQ state and its Redis counters. Resolves like `waitForRun`.
 */
import { MultiBar, Presets } from 'cli-progress';
import type { ConnectionOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import { GamedataError } from '../../foundation/errors/index.js';
import { createRunCounters, getRunStatus, type RunStatus } from '../../pipeline/queue/index.js';
import type { RunFigures } from '../../pipeline/queue/index.js';
import type { RunResult } from '../../pipeline/planner/index.js';
import { DEFAULT_QUEUE_PREFIX } from '../../pipeline/contract/index.js';
import { sleep } from '../../foundation/retry/index.js';

export interface RunProgressOptions {
  /** Redis (counters) and the BullMQ connection. */
  redis: Redis;
  connection?: ConnectionOptions;
  /** @default 'gamedata-bull' */
  queuePrefix?: string;
  /** @default 'gamedata' */
  redisPrefix?: string;
  /** How often the display is redrawn, ms. @default 1000 */
  pollMs?: number;
  /**
   * How often the run's state is read between redraws, ms: its end is seen this soon after it comes (a small full
   * history's `--wait` ended up to a whole `pollMs` after its run). @default 200
   */
  checkMs?: number;
  /** Reads the run's state (tests pass fakes). @default `getRunStatus` over `connection` and `queuePrefix` */
  readStatus?: (runId: string) => Promise<RunStatus | undefined>;
  /** Reads the run's counters (tests pass fakes). @default the run counters under `redisPrefix` */
  readCounters?: (runId: string) => Promise<RunFigures>;
  /** @default Infinity */
  timeoutMs?: number;
  /** Where the bars go. @default process.stderr */
  stream?: NodeJS.WritableStream;
  /** Draw bars (false: one line per change, for logs and pipes). @default stream is a TTY */
  bars?: boolean;
}

/** One sample of a run's progress (also what non-TTY output prints). */
export interface ProgressSample {
  state: string;
  slicesDone: number;
  slicesTotal: number;
  fetched: number;
  published: number;
  deduplicated: number;
  deadLettered: number;
  /** Records fetched per second since the display started. */
  rate: number;
  /** Seconds left, extrapolated from the slices done so far; undefined before the first one. */
  etaSeconds: number | undefined;
}

/** Pure: the sample from raw figures. */
export function progressSample(
  raw: {
    state: string;
    completed: number;
    pending: number;
    fetched: number;
    published: number;
    deduplicated: number;
    deadLettered: number;
  },
  elapsedMs: number,
): ProgressSample {
  const total = raw.completed + raw.pending;
  const secs = Math.max(elapsedMs / 1000, 0.001);
  return {
    state: raw.state,
    slicesDone: raw.completed,
    slicesTotal: total,
    fetched: raw.fetched,
    published: raw.published,
    deduplicated: raw.deduplicated,
    deadLettered: raw.deadLettered,
    rate: raw.fetched / secs,
    etaSeconds: raw.completed === 0 ? undefined : (secs / raw.completed) * raw.pending,
  };
}

/** Formats a sample as one line (non-TTY output). */
export function formatProgressLine(s: ProgressSample): string {
  return (
    `${s.state}: ${s.slicesDone}/${s.slicesTotal} slices, ${s.fetched} fetched, ${s.published} published, ${s.deduplicated} deduplicated, ` +
    `${s.deadLettered} dead-lettered, ${s.rate.toFixed(0)} records/s, ETA ${s.etaSeconds === undefined ? '?' : `${Math.ceil(s.etaSeconds)} s`}`
  );
}

/** Where a run's progress goes: two bars on a terminal, else a line per change. */
interface ProgressDisplay {
  draw(sample: ProgressSample): void;
  stop(): void;
}

function createProgressDisplay(stream: NodeJS.WritableStream, bars: boolean): ProgressDisplay {
  if (!bars) {
    let lastLine = '';
    return {
      draw(sample) {
        const line = formatProgressLine(sample);
        if (line !== lastLine) stream.write(`${line}\n`);
        lastLine = line;
      },
      stop: () => undefined,
    };
  }
  const multi = new MultiBar(
    {
      stream,
      hideCursor: true,
      clearOnComplete: false,
      etaBuffer: 20,
      format: ' {label} |{bar}| {value}/{total} {unit} | {extra}',
    },
    Presets.shades_classic,
  );
  const slicesBar = multi.create(1, 0, { label: 'slices ', unit: 'slices', extra: 'ETA ?' });
  const recordsBar = multi.create(1, 0, { label: 'records', unit: 'fetched', extra: '' });
  return {
    draw(sample) {
      const eta = sample.etaSeconds === undefined ? '?' : `${Math.ceil(sample.etaSeconds)} s`;
      slicesBar.setTotal(Math.max(1, sample.slicesTotal));
      slicesBar.update(sample.slicesDone, { extra: `ETA ${eta} (${sample.state})` });
      // The records total is unknown up front: extrapolated from the share of slices done.
      const share = sample.slicesTotal === 0 ? 0 : sample.slicesDone / sample.slicesTotal;
      const estimate =
        share > 0
          ? Math.max(sample.fetched, Math.round(sample.fetched / share))
          : Math.max(1, sample.fetched);
      recordsBar.setTotal(Math.max(1, estimate));
      recordsBar.update(sample.fetched, {
        extra: `${sample.rate.toFixed(0)} records/s; ${sample.published} published, ${sample.deduplicated} dup, ${sample.deadLettered} dlq`,
      });
    },
    stop: () => multi.stop(),
  };
}

/**
 * Follows a run to its end with the progress display; resolves with its result, rejects when it failed. Its state is
 * read every `checkMs`, the display redrawn every `pollMs` and at the end.
 */
export async function waitForRunWithProgress(runId: string, options: RunProgressOptions): Promise<RunResult> {
  const stream = options.stream ?? process.stderr;
  const bull = {
    connection: options.connection ?? options.redis,
    prefix: options.queuePrefix ?? DEFAULT_QUEUE_PREFIX,
  };
  const readStatus = options.readStatus ?? ((id: string) => getRunStatus(id, bull));
  const counters = createRunCounters(options.redis, options.redisPrefix ?? 'gamedata');
  const readCounters = options.readCounters ?? ((id: string) => counters.get(id));
  const started = Date.now();
  const deadline = started + (options.timeoutMs ?? Number.POSITIVE_INFINITY);
  const display = createProgressDisplay(
    stream,
    options.bars ?? (stream as { isTTY?: boolean }).isTTY === true,
  );
  try {
    let drawnAt = Number.NEGATIVE_INFINITY;
    for (;;) {
      const s = await readStatus(runId);
      const ended = s?.state === 'completed' || s?.state === 'failed' || Date.now() > deadline;
      if (ended || Date.now() - drawnAt >= (options.pollMs ?? 1000)) {
        drawnAt = Date.now();
        const c = await readCounters(runId);
        display.draw(
          progressSample(
            {
              state: s?.state ?? 'missing',
              completed: s?.slices.completed ?? 0,
              pending: s?.slices.pending ?? 0,
              fetched: c.fetched,
              published: c.published,
              deduplicated: c.deduplicated,
              deadLettered: c.deadLettered,
            },
            Date.now() - started,
          ),
        );
      }
      if (s?.state === 'completed' && s.result !== undefined) return s.result;
      if (s?.state === 'failed')
        throw new GamedataError(`run ${runId} failed: ${s.failedReason ?? 'unknown reason'}`);
      if (Date.now() > deadline)
        throw new GamedataError(
          `run ${runId} did not finish in ${String(options.timeoutMs)} ms (state ${s?.state ?? 'missing'})`,
        );
      await sleep(options.checkMs ?? 200);
    }
  } finally {
    display.stop();
  }
}
