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
import { createWorld, SIMULATOR_RESOURCES, type SimulatorResource, type World } from './world.js';

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

const BAD_GATEWAY =
  '<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center></body></html>\n';
const UNAVAILABLE =
  '<html><head><title>503 Service Temporarily Unavailable</title></head><body><center><h1>503 Service Temporarily Unavailable</h1></center></body></html>\n';

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

  function handleSim(req: http.IncomingMessage, res: http.ServerResponse, path: string): void {
    if (req.method === 'GET' && path === '/__sim/stats') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(snapshot()));
      return;
    }
    if (req.method === 'POST' && path === '/__sim/reset-stats') {
      resetStats();
      res.writeHead(204).end();
      return;
    }
    if (req.method === 'GET' && path.startsWith('/__sim/truth/')) {
      const resource = path.slice('/__sim/truth/'.length);
      if (!(SIMULATOR_RESOURCES as readonly string[]).includes(resource)) {
        res
          .writeHead(404, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: `unknown resource ${resource}` }));
        return;
      }
      tick();
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      const store = world.store(resource as SimulatorResource);
      const variant = resource === 'articles' ? 'feed' : 'full';
      // Streamed row by row: the medium transaction truth is a million lines.
      let row = store.table.length - 1;
      const pump = (): void => {
        while (row >= 0) {
          const line = `${JSON.stringify(store.build(row--, variant))}\n`;
          if (!res.write(line)) {
            res.once('drain', pump);
            return;
          }
        }
        res.end();
      };
      pump();
      return;
    }
    if (req.method === 'POST' && path === '/__sim/configure') {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => (body += chunk));
      req.on('end', () => {
        try {
          reconfigure(JSON.parse(body || '{}') as RuntimePatch);
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(settings));
        } catch (error) {
          res
            .writeHead(400, { 'content-type': 'application/json' })
            .end(JSON.stringify({ error: (error as Error).message }));
        }
      });
      return;
    }
    res
      .writeHead(404, { 'content-type': 'application/json' })
      .end(JSON.stringify({ error: 'unknown /__sim route' }));
  }

  /**
   * Counts a request whose client went away (timed out, aborted) before the service answered it: the service still
   * works it through (its feed calls occupy the lane), and the answer goes nowhere.
   */
  function countAnswersAfterClientGone(res: http.ServerResponse): void {
    const arrived = performance.now();
    let gone = false;
    res.on('close', () => {
      if (!res.writableFinished) gone = true;
    });
    const end = res.end.bind(res) as (...args: unknown[]) => http.ServerResponse;
    res.end = ((...args: unknown[]) => {
      if (gone || res.destroyed) stats.answeredAfterClientGone(performance.now() - arrived);
      return end(...args);
    }) as typeof res.end;
  }

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://simulator');
    const path = url.pathname;
    if (path.startsWith('/__sim/')) return handleSim(req, res, path);
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
    countAnswersAfterClientGone(res);

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
    const f = current.faults;
    const draw = faultRng.next();
    let edge = f.hang;
    if (draw < edge) {
      stats.fault('hang');
      hung.add(res); // accepted, never answered (until close())
      return;
    }
    if (draw < (edge += f.reset)) {
      stats.fault('reset');
      req.socket.destroy();
      return;
    }
    if (draw < (edge += f.http5xx)) {
      stats.fault('http5xx');
      const bad = faultRng.next() < 0.5;
      res.writeHead(bad ? 502 : 503, { 'content-type': 'text/html' }).end(bad ? BAD_GATEWAY : UNAVAILABLE);
      return;
    }
    if (draw < edge + f.badJson) {
      stats.fault('badJson');
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(isBatch ? '[{"result":{"data":{"items":[{"_id":"' : '{"result":{"data":{"items":[{"_id":"');
      return;
    }
    const failingSlots = new Set<number>();
    if (f.batch5xx > 0)
      for (let i = 0; i < batchSize; i++) if (faultRng.next() < f.batch5xx) failingSlots.add(i);
    for (let i = 0; i < failingSlots.size; i++) stats.fault('batch5xx');

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
