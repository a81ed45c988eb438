/**
 * The simulator's own routes under `/__sim/`: stats and their reset, the truth of a resource (NDJSON, streamed),
 * and runtime reconfiguration. Not part of the real service's API.
 */
import type http from 'node:http';
import type { RuntimePatch, RuntimeSettings } from './options.js';
import type { SimulatorStats } from './stats.js';
import { SIMULATOR_RESOURCES, type SimulatorResource, type World } from './world.js';
import { ConfigError } from '../../src/foundation/errors/index.js';

/** Reads a JSON body and answers 200 with what `handle` returns, or 400 with the error's message. */
function readJsonBody(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  handle: (body: unknown) => unknown,
): void {
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (chunk: string) => (body += chunk));
  req.on('end', () => {
    try {
      const answer = handle(JSON.parse(body || '{}'));
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
    } catch (error) {
      res
        .writeHead(400, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: (error as Error).message }));
    }
  });
}

/** What the `/__sim/` routes read and change. */
export interface SimAdminDeps {
  snapshot(): SimulatorStats;
  resetStats(): void;
  /** Brings the world to the simulated now (live mode). */
  tick(): void;
  world: World;
  reconfigure(patch: RuntimePatch): void;
  settings(): RuntimeSettings;
}

/** Answers a request whose path starts with `/__sim/` (404 for an unknown one). */
export function handleSimAdminRoute(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  path: string,
  deps: SimAdminDeps,
): void {
  if (req.method === 'GET' && path === '/__sim/stats') {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(deps.snapshot()));
    return;
  }
  if (req.method === 'POST' && path === '/__sim/reset-stats') {
    deps.resetStats();
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
    deps.tick();
    res.writeHead(200, { 'content-type': 'application/x-ndjson' });
    const store = deps.world.store(resource as SimulatorResource);
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
  if (req.method === 'POST' && path === '/__sim/fix') {
    readJsonBody(req, res, (body) => {
      const { resource, ids } = body as { resource?: unknown; ids?: unknown };
      if (!(SIMULATOR_RESOURCES as readonly unknown[]).includes(resource))
        throw new ConfigError(`/__sim/fix: resource must be one of ${SIMULATOR_RESOURCES.join(', ')}`);
      if (!Array.isArray(ids) || !ids.every((id) => typeof id === 'string'))
        throw new ConfigError('/__sim/fix: ids must be a list of _id strings');
      return { fixed: deps.world.fixes.fix(resource as SimulatorResource, ids) };
    });
    return;
  }
  if (req.method === 'POST' && path === '/__sim/configure') {
    readJsonBody(req, res, (body) => {
      deps.reconfigure(body as RuntimePatch);
      return deps.settings();
    });
    return;
  }
  res
    .writeHead(404, { 'content-type': 'application/json' })
    .end(JSON.stringify({ error: 'unknown /__sim route' }));
}
