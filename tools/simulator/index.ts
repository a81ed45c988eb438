/**
 * The upstream simulator: a deterministic tRPC twin of the game-data service (see docs/simulator.md).
 * `startSimulator()` serves it; `createWorld()` gives the same ground truth without a server.
 *
 * Owns: the world (`world.ts` assembles `generation/`: seeded rows, indexes and live mode, and `records/`: one
 * record builder per resource), the router (`router.ts` composes `routes/`: one module per procedure group), the
 * HTTP server with its rate limit, faults and control endpoints (`start-simulator.ts`), and its own cursor codec
 * (`cursor.ts`, independent of the client's on purpose).
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
