/**
 * `startSlotSizing(worker, budget, options)`: the I/O around `decideConcurrency` (src/upstream/budget/concurrency-decision.ts).
 * Every `intervalMs` it reads what the key's fetcher saw at its last batch (one Redis GET) and sets the slice worker's
 * concurrency: more slices at once while the budget binds and batches leave short, the configured concurrency
 * otherwise. BullMQ applies a new concurrency as running slices finish (more are taken at the next completion;
 * fewer are taken until the running ones drop below it).
 */
import type { Worker } from 'bullmq';
import {
  decideConcurrency,
  FULL_BATCH_GROWTH_LATENCY_MS,
  type BudgetDemand,
  type ConcurrencyReason,
} from '../../upstream/budget/index.js';
import type { SharedBudget } from '../../upstream/budget/index.js';
import { GamedataError } from '../../foundation/errors/index.js';
import { wakeMainLoop } from './bullmq-hooks.js';
/** A change of the slices a worker runs at once (see `PipelineWorkerOptions.maxConcurrency`). */
export interface ConcurrencyChange {
  from: number;
  to: number;
  /** `short`: grown, the key binds and its batches leave short; `free`: back to `concurrency`. */
  reason: ConcurrencyReason;
  /** How busy the worker's loop or machine was when it was decided (0..1, `cpu-busy.ts`; undefined: not measured). */
  busy?: number | undefined;
  /** What the fetcher saw at its last batch (undefined: no batch lately). */
  demand: BudgetDemand | undefined;
}

export interface SlotSizingOptions {
  /** The configured concurrency: the floor, and the value whenever the key does not bind. */
  base: number;
  /** The most slices at once. */
  max: number;
  /** How often the demand is read, ms. */
  intervalMs: number;
  /** See `ConcurrencyInput.settleMs`. */
  settleMs: number;
  /** Called at each change (a log line, a metric). */
  onChange: (change: ConcurrencyChange) => void;
  /** Called once per outage when the demand cannot be read (the slots go back to `base` meanwhile). */
  onError: (error: Error) => void;
  /** Injected clock. @default Date.now */
  now?: () => number;
  /**
   * The worker's slices running now and its calls waiting at the key (the share decides whether more slots would
   * add calls; see `MIN_UPSTREAM_SHARE`). Absent: not considered.
   */
  load?: () => { running: number; waitingCalls: number };
  /**
   * The larger of the worker's event-loop utilization and its machine's busy CPU share since the last call, 0..1
   * (`cpu-busy.ts`; slots do not grow while it is `MAX_GROWTH_UTILIZATION` or more). Absent: not considered.
   */
  busy?: () => number;
  /**
   * The same share since the slots last changed (or sizing started): `peek` at each check, `read` when a change is
   * applied (`ConcurrencyInput.stepBusy`). Absent: a spare step projects from `busy`.
   */
  busySinceChange?: { peek: () => number; read: () => number };
  /**
   * Slices queued across the deployment now (waiting for a slot), read only when every slot of this worker is taken
   * and the key's last batch left it requests to spare with slow requests (`ConcurrencyInput.queuedWhileFull`).
   * Absent: not considered.
   */
  queued?: () => Promise<number>;
}

export interface SlotSizing {
  /** Reads the demand once and applies it (the timer does this every `intervalMs`). */
  check(): Promise<void>;
  /** Stops the timer and waits for a read in progress. */
  stop(): Promise<void>;
  /** The demand the last read found (`undefined`: none yet, none lately, or unreadable). */
  lastDemand(): BudgetDemand | undefined;
}

/** Starts sizing `worker`'s slots by `budget.demand()`; stop it before closing the worker. */
export function startSlotSizing(
  worker: Pick<Worker, 'concurrency'>,
  budget: Pick<SharedBudget, 'demand'>,
  o: SlotSizingOptions,
): SlotSizing {
  const now = o.now ?? Date.now;
  let changedAt = 0;
  let reading: Promise<void> = Promise.resolve();
  let failing = false;
  let last: BudgetDemand | undefined;
  const check = async (): Promise<void> => {
    let demand: BudgetDemand | undefined;
    try {
      demand = await budget.demand();
      failing = false;
    } catch (error) {
      // Unreadable: back to the configured slots; reported once per outage.
      if (!failing) o.onError(GamedataError.from(error));
      failing = true;
      demand = undefined;
    }
    last = demand;
    const from = worker.concurrency;
    const load = o.load?.();
    // Counted only where it can change the decision: a spare key with slow requests, every slot taken.
    const countQueued =
      o.queued !== undefined &&
      load !== undefined &&
      load.running >= from &&
      demand?.binds === false &&
      (demand.latencyMs ?? 0) >= FULL_BATCH_GROWTH_LATENCY_MS;
    const queuedWhileFull = countQueued ? await o.queued?.().catch(() => undefined) : undefined;
    const busy = o.busy?.();
    const stepBusy = o.busySinceChange?.peek();
    const next = decideConcurrency({
      current: from,
      base: o.base,
      max: o.max,
      demand,
      changedAt,
      settleMs: o.settleMs,
      upstreamShare:
        load === undefined || load.running === 0 ? undefined : Math.min(1, load.waitingCalls / load.running),
      busy,
      stepBusy,
      queuedWhileFull,
    });
    if (next.concurrency === from) return;
    worker.concurrency = next.concurrency;
    o.busySinceChange?.read();
    if (next.concurrency > from) wakeMainLoop(worker);
    changedAt = now();
    const seen =
      next.reason === 'full' && demand !== undefined ? { ...demand, queued: queuedWhileFull } : demand;
    o.onChange({ from, to: next.concurrency, reason: next.reason, demand: seen, busy });
  };
  let busy = false;
  const timer = setInterval(() => {
    // One read at a time: a slow Redis skips ticks instead of queueing them.
    if (busy) return;
    busy = true;
    reading = check().finally(() => (busy = false));
  }, o.intervalMs);
  timer.unref();
  return {
    check,
    lastDemand: () => last,
    async stop() {
      clearInterval(timer);
      await reading;
    },
  };
}
