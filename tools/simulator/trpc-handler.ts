import type http from 'node:http';
import { createHTTPHandler } from '@trpc/server/adapters/standalone';
import { createSimulatorRouter, type SimContext } from './router.js';
import type { World } from './world.js';

/**
 * The real `@trpc/server` handler over the simulator's router (batching, method override, 207, error envelopes are
 * tRPC's own); each request's context is the one the layer in front set in `contexts`.
 */
export function createTrpcHandler(
  world: World,
  contexts: WeakMap<http.IncomingMessage, SimContext>,
): (req: http.IncomingMessage, res: http.ServerResponse) => void {
  return createHTTPHandler({
    router: createSimulatorRouter(world),
    basePath: '/trpc/',
    allowMethodOverride: true,
    createContext: ({ req }) => {
      const ctx = contexts.get(req);
      if (ctx === undefined) throw new Error('request context missing');
      return ctx;
    },
  });
}
