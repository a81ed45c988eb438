/**
 * Starts the simulator: a node:http server with a thin layer in front of the real `@trpc/server` handler. The
 * layer does what tRPC does not: the rate limit and its headers on every answer, 413 above 50 procedures, fault
 * injection (5xx, resets, hangs, broken JSON), latency, live-clock advance, stats, and the `/__sim/*`
 * introspection routes. Everything else (batching, method override, 207 for mixed batches, error envelopes) is
 * tRPC's own behaviour, which matches the real service's.
 */
import type http from 'node:http';
import type { MalformedKind } from './faults.js';
import { createRng } from './internal/prng.js';
import {
  applyRuntimePatch,
  resolveSimulatorOptions,
  type RuntimePatch,
  type RuntimeSettings,
  type SimulatorOptions,
} from './options.js';
import { createRateLimiter } from './rate-limiter.js';
import type { SimContext } from './router.js';
import { createStatsRecorder, type SimulatorStats } from './stats.js';
import { createFeedLanes } from './feed-lane.js';
import { createWorld, type SimulatorResource, type World } from './world.js';
import { handleSimAdminRoute } from './sim-admin-routes.js';
import { countAnswersAfterClientGone } from './count-answers-after-client-gone.js';
import { applyRequestFault, drawFailingSlots } from './request-faults.js';
import { refuseRequest } from './request-gate.js';
import { errorEnvelope } from './error-envelope.js';
import { listenSimulatorServer } from './http-server.js';
import { createTrpcHandler } from './trpc-handler.js';
import { listMalformed } from './list-malformed.js';

export { MAX_BATCH_SIZE } from './request-gate.js';

export interface MalformedRecord {
  /** The record's real `_id` (even when served without one). */
  _id: string;
  kind: MalformedKind;
}

export interface Simulator {
  /** Base URL of the tRPC endpoint: `http://127.0.0.1:<port>/trpc`. */
  readonly url: string;
  /** Counters since start or the last reset. */
  stats(): SimulatorStats;
  resetStats(): void;
  /**
   * Every record of a resource as the API returns it (current version of mutable ones; clean copies of the
   * records served corrupted), newest first by `(sortTime, _id)`. In live mode the world is first advanced to now.
   */
  truth(resource: SimulatorResource): Record<string, unknown>[];
  /**
   * {@link truth}'s records one at a time, built as they are read: what a verify of scale large (10 M transactions,
   * ~1 KB each as objects) iterates instead of holding them all. The world is advanced to now when it starts.
   */
  eachTruth(resource: SimulatorResource): Iterable<Record<string, unknown>>;
  /** The records served corrupted under the current fault settings (so tests can expect them in the DLQ). */
  malformed(resource: SimulatorResource): MalformedRecord[];
  /**
   * Switches runtime settings (faults, rate limit, latency, window, cursor format, hasMore, keys). Naming
   * `faults.seed` restarts the fault stream, so a request sequence meets the same faults again.
   */
  configure(patch: RuntimePatch): void;
  /** The current runtime settings. */
  settings(): RuntimeSettings;
  /**
   * The upstream fixed these records (by `_id`): served clean from now on, and no longer in `malformed(resource)`
   * (`POST /__sim/fix` over HTTP). Returns how many of the resource are fixed in all.
   */
  fix(resource: SimulatorResource, ids: readonly string[]): number;
  /** Read access to the world (countries, users, ...). */
  readonly world: World;
  /** Simulated now (ms); moves in live mode. */
  now(): number;
  close(): Promise<void>;
}

/**
 * Starts a simulator (port 0 = any free port).
 * @throws ConfigError for a bad option (naming it).
 * @example
 * const sim = await startSimulator({ seed: 1, scale: 'small' });
 * // ... point a client at sim.url ...
 * await sim.close();
 */
export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const resolved = resolveSimulatorOptions(options);
  const world = createWorld(resolved.world);
  let settings = resolved.runtime;
  const stats = createStatsRecorder();
  const lanes = createFeedLanes();
  const snapshot = (): SimulatorStats => ({ ...stats.snapshot(), feedLane: lanes.snapshot() });
  const resetStats = (): void => {
    stats.reset();
    lanes.reset();
  };
  const limiter = createRateLimiter();
  const faultRng = createRng(settings.faults.seed);
  /** Applies a patch; a patch that names `faults.seed` restarts the fault stream (reproducible sequences). */
  const reconfigure = (patch: RuntimePatch): void => {
    settings = applyRuntimePatch(settings, patch);
    if (patch.faults?.seed !== undefined) faultRng.reseed(settings.faults.seed);
  };
  const startedAt = Date.now();
  const live = resolved.live;

  /** Brings the world to the simulated now (live mode); a no-op otherwise. */
  const tick = (): void => {
    if (live === false) return;
    world.advanceTo(world.startMs + Math.floor((Date.now() - startedAt) * live.speed), live);
  };

  const contexts = new WeakMap<http.IncomingMessage, SimContext>();
  const trpc = createTrpcHandler(world, contexts);

  const hung = new Set<http.ServerResponse>();
  let closed = false;
  const admin = { snapshot, resetStats, tick, world, reconfigure, settings: () => settings };

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://simulator');
    const path = url.pathname;
    if (path.startsWith('/__sim/')) return handleSimAdminRoute(req, res, path, admin);
    if (!path.startsWith('/trpc/')) {
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end(errorEnvelope(`No route ${path}`, -32004, 'NOT_FOUND', 404));
      return;
    }
    const current = settings;
    const isBatch = url.searchParams.get('batch') === '1';
    const procedures = decodeURIComponent(path.slice('/trpc/'.length)).split(',');
    const batchSize = isBatch ? procedures.length : 1;
    stats.request(batchSize);
    res.on('finish', () => stats.status(res.statusCode));
    countAnswersAfterClientGone(res, stats);

    const rawKey = req.headers['x-api-key'];
    const apiKey = (Array.isArray(rawKey) ? rawKey[0] : rawKey)?.trim() || undefined;
    if (refuseRequest(req, res, current, { limiter, stats, apiKey, isBatch, procedures: procedures.length }))
      return;

    // Whole-request faults: one draw per request from the seeded stream.
    if (applyRequestFault(req, res, current.faults, { isBatch, rng: faultRng, stats, hung })) return;
    const failingSlots = drawFailingSlots(batchSize, current.faults, faultRng, stats);

    if (current.latency.requestMs > 0) await new Promise((r) => setTimeout(r, current.latency.requestMs));
    tick();
    // The feed's lane is the key's (anonymous callers: their address's), as the service's limit is.
    const lane = apiKey ?? `address:${req.socket.remoteAddress ?? 'unknown'}`;
    let filteredCalls = 0;
    let filteredTransactions = false;
    res.on('finish', () => {
      if (filteredTransactions) stats.filteredTransactionAnswered();
    });
    contexts.set(req, {
      apiKey,
      settings: current,
      failingSlots,
      countCall: (p) => stats.call(p),
      feedCall: (costMs) => lanes.occupy(lane, costMs),
      filteredCall: (costMs) => {
        const stagger = current.latency.filteredPerCallMs * filteredCalls++;
        const ms = costMs + stagger;
        return ms > 0 ? new Promise((r) => setTimeout(r, ms)) : Promise.resolve();
      },
      filteredTransactionPage: () => {
        filteredTransactions = true;
      },
    });
    trpc(req, res);
  }

  const server = await listenSimulatorServer(handle, resolved.host, resolved.port);
  const host = resolved.host.includes(':') ? `[${resolved.host}]` : resolved.host;

  return {
    url: `http://${host}:${server.port}/trpc`,
    stats: snapshot,
    resetStats,
    truth(resource) {
      tick();
      return world.truth(resource);
    },
    eachTruth(resource) {
      tick();
      return world.eachTruth(resource);
    },
    malformed(resource) {
      tick();
      return listMalformed(world, resource, settings.faults);
    },
    configure: reconfigure,
    settings: () => settings,
    fix: (resource, ids) => world.fixes.fix(resource, ids),
    world,
    now() {
      tick();
      return world.nowMs;
    },
    async close() {
      if (closed) return;
      closed = true;
      for (const res of hung) res.destroy();
      hung.clear();
      await server.close();
    },
  };
}
