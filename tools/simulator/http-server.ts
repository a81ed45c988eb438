/**
 * The simulator's node:http server: an error thrown by the request handler answers 500 with the service's error
 * body, idle keep-alive sockets are kept as a load balancer keeps them, and close() leaves no socket behind.
 */
import http from 'node:http';
import type { Socket } from 'node:net';
import { ConfigError } from '../../src/foundation/errors/index.js';
import { errorEnvelope } from './error-envelope.js';

export interface SimulatorServer {
  /** The port listened on (the one picked when 0 was asked for). */
  readonly port: number;
  /** Stops listening and destroys every open socket. */
  close(): Promise<void>;
}

/**
 * Listens on `host:port` (0 = any free port) with `handle` answering every request.
 * @throws ConfigError when the address cannot be listened on.
 */
export async function listenSimulatorServer(
  handle: (req: http.IncomingMessage, res: http.ServerResponse) => Promise<void>,
  host: string,
  port: number,
): Promise<SimulatorServer> {
  const sockets = new Set<Socket>();
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
        new ConfigError(`cannot listen on ${host}:${port}: ${error.message}`, [], {
          cause: error,
        }),
      ),
    );
    server.listen(port, host, () => resolve());
  });
  const address = server.address();
  return {
    port: typeof address === 'object' && address !== null ? address.port : port,
    async close() {
      const done = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      for (const socket of sockets) socket.destroy();
      await done;
    },
  };
}
