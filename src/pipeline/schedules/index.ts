/** Schedules: incremental tails and cron backfills as BullMQ job schedulers, with a watermark per resource. */
export { SCHEDULE_QUEUE, schedulerId } from './schedule-names.js';
export type { ScheduleKind } from './schedule-names.js';
export { createTailStateStore } from './tail-state.js';
export type { TailState, TailStateStore, ActiveRun } from './tail-state.js';
export {
  processTick,
  checkTickData,
  DEFAULT_PROCESS_TICK_OPTIONS,
  DEFAULT_TAIL_SCHEDULE,
} from './process-tick.js';
export type {
  ScheduleTickData,
  TickOutcome,
  TickDeps,
  SettledRun,
  ProcessTickOptions,
} from './process-tick.js';
export { createScheduleRegistry, MIN_TAIL_EVERY_MS } from './schedule-registry.js';
export type { ScheduleRegistry, ScheduleRegistryOptions, ScheduleInfo } from './schedule-registry.js';
export {
  startScheduleWorker,
  probeHead,
  tailLagSeconds,
  DEFAULT_SCHEDULE_WORKER_OPTIONS,
} from './schedule-worker.js';
export type { ScheduleWorker, ScheduleWorkerOptions, ScheduleWorkerDeps } from './schedule-worker.js';
export { processRescan, rescanParts, parseRescanShare, DEFAULT_RESCAN } from './process-rescan.js';
export type { RescanDeps, RescanOutcome, BudgetSpend } from './process-rescan.js';
export { createRescanStateStore } from './rescan-state.js';
export type { RescanState, RescanStateStore } from './rescan-state.js';
