/**
 * Starts the simulator: a node:http server with a thin layer in front of the real `@trpc/server` handler. The
 * layer does what tRPC does not: the rate limit and its headers on every answer, 413 above 50 procedures, fault
 * injection (5xx, resets, hangs, broken JSON), latency, live-clock advance, stats, and the `/__sim/*`
 * introspection routes. Everything else (batching, method override, 207 for mixed batches, error envelopes) is
 * tRPC's own behaviour, which matches the real service's.
 */
import http from 'node:http';
import type { Socket } from 'node:net';
import { createHTTPHandler } from '@trpc/server/adapters/standalone';
import { ConfigError } from '../errors.js';
import { malformedKind, type MalformedKind } from './faults.js';
import { createRng } from './internal/prng.js';
import {
  applyRuntimePatch,
  resolveSimulatorOptions,
  type RuntimePatch,
  type RuntimeSettings,
  type SimulatorOptions,
} from './options.js';
import { createRateLimiter } from './rate-limiter.js';
import { createSimulatorRouter, type SimContext } from './router.js';
import { createStatsRecorder, type SimulatorStats } from './stats.js';
import { createFeedLanes } from './feed-lane.js';
import { createWorld, type SimulatorResource, type World } from './world.js';
import { handleSimAdminRoute } from './sim-admin-routes.js';
import { countAnswersAfterClientGone } from './count-answers-after-client-gone.js';
import { applyRequestFault, drawFailingSlots } from './request-faults.js';

/** Most procedures one batch may carry (upstream answers 413 above). */
export const MAX_BATCH_SIZE = 50;

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
  /** The records served corrupted under the current fault settings (so tests can expect them in the DLQ). */
  malformed(resource: SimulatorResource): MalformedRecord[];
  /**
   * Switches runtime settings (faults, rate limit, latency, window, cursor format, hasMore, keys). Naming
   * `faults.seed` restarts the fault stream, so a request sequence meets the same faults again.
   */
  configure(patch: RuntimePatch): void;
  /** The current runtime settings. */
  settings(): RuntimeSettings;
  /** Read access to the world (countries, users, ...). */
  readonly world: World;
  /** Simulated now (ms); moves in live mode. */
  now(): number;
  close(): Promise<void>;
}

function errorEnvelope(
  message: string,
  code: number,
  key: string,
  httpStatus: number,
  path?: string,
): string {
  return JSON.stringify({
    error: { message, code, data: { code: key, httpStatus, ...(path === undefined ? {} : { path }) } },
  });
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

  const router = createSimulatorRouter(world);
  const contexts = new WeakMap<http.IncomingMessage, SimContext>();
  const trpc = createHTTPHandler({
    router,
    basePath: '/trpc/',
    allowMethodOverride: true,
    createContext: ({ req }) => {
      const ctx = contexts.get(req);
      if (ctx === undefined) throw new Error('request context missing');
      return ctx;
    },
  });

  const hung = new Set<http.ServerResponse>();
  const sockets = new Set<Socket>();
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
    if (current.rateLimit.enabled) {
      const decision = limiter.take(
        { apiKey, address: req.socket.remoteAddress ?? 'unknown' },
        current.rateLimit,
        Date.now(),
      );
      for (const [name, value] of Object.entries(decision.headers)) res.setHeader(name, value);
      if (!decision.allowed) {
        stats.rateLimited();
        res.setHeader('retry-after', String(decision.resetSeconds));
        res.writeHead(429, { 'content-type': 'application/json' });
        res.end(
          errorEnvelope('Too many requests, please try again later.', -32029, 'TOO_MANY_REQUESTS', 429),
        );
        return;
      }
    }
    if (isBatch && procedures.length > MAX_BATCH_SIZE) {
      res.writeHead(413, { 'content-type': 'application/json' });
      res.end(
        errorEnvelope(`Batch size too large (max ${MAX_BATCH_SIZE})`, -32013, 'PAYLOAD_TOO_LARGE', 413),
      );
      return;
    }

    // Whole-request faults: one draw per request from the seeded stream.
    if (applyRequestFault(req, res, current.faults, { isBatch, rng: faultRng, stats, hung })) return;
    const failingSlots = drawFailingSlots(batchSize, current.faults, faultRng, stats);

    if (current.latency.requestMs > 0) await new Promise((r) => setTimeout(r, current.latency.requestMs));
    tick();
    // The feed's lane is the key's (anonymous callers: their address's), as the service's limit is.
    const lane = apiKey ?? `address:${req.socket.remoteAddress ?? 'unknown'}`;
    let filteredCalls = 0;
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
    });
    trpc(req, res);
  }

  const server = http.createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(
        errorEnvelope(
          error instanceof Error ? error.message : String(error),
          -32603,
          'INTERNAL_SERVER_ERROR',
          500,
        ),
      );
    });
  });
  // Keep idle keep-alive sockets longer than clients do (undici: 4 s), as services behind load balancers do;
  // with Node's 5 s default a client can send on a socket the server is just closing ("other side closed").
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error) =>
      reject(
        new ConfigError(`cannot listen on ${resolved.host}:${resolved.port}: ${error.message}`, [], {
          cause: error,
        }),
      ),
    );
    server.listen(resolved.port, resolved.host, () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : resolved.port;
  const host = resolved.host.includes(':') ? `[${resolved.host}]` : resolved.host;

  return {
    url: `http://${host}:${port}/trpc`,
    stats: snapshot,
    resetStats,
    truth(resource) {
      tick();
      return world.truth(resource);
    },
    malformed(resource) {
      tick();
      const { malformed, seed } = settings.faults;
      const out: MalformedRecord[] = [];
      if (malformed <= 0) return out;
      const { table } = world.store(resource);
      for (let row = table.length - 1; row >= 0; row--) {
        const kind = malformedKind(resource, table.ident(row), malformed, seed);
        if (kind !== undefined) out.push({ _id: table.oid(row), kind });
      }
      return out;
    },
    configure: reconfigure,
    settings: () => settings,
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
      const done = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      for (const socket of sockets) socket.destroy();
      await done;
    },
  };
}
