/**
 * The upstream simulator: a deterministic tRPC twin of the game-data service (see docs/simulator.md).
 * `startSimulator()` serves it; `createWorld()` gives the same ground truth without a server.
 */
export { startSimulator, MAX_BATCH_SIZE } from './start-simulator.js';
export type { Simulator, MalformedRecord } from './start-simulator.js';
export {
  DEFAULT_SIMULATOR_OPTIONS,
  DEFAULT_RUNTIME_SETTINGS,
  DEFAULT_LIVE_RATES,
  REALISTIC_LATENCY,
  resolveSimulatorOptions,
  applyRuntimePatch,
  parseFaultSpec,
  parseLatencySpec,
} from './options.js';
export type {
  SimulatorOptions,
  ResolvedSimulatorOptions,
  RuntimeSettings,
  RuntimePatch,
  RateLimitSettings,
  LatencySettings,
  FaultSettings,
} from './options.js';
export type { SimulatorStats } from './stats.js';
export { createWorld, SCALES, SIMULATOR_RESOURCES, DEFAULT_WORLD_OPTIONS } from './world.js';
export type { World, WorldOptions, Scale, ScaleSpec, SimulatorResource, LiveRates } from './world.js';
export type { MalformedKind } from './faults.js';
export { TRANSACTION_TYPES, ARTICLE_FEED_TYPES, ITEM_CODES } from './vocab.js';
export type { SimulatorRouter } from './router.js';
