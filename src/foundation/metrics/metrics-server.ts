/**
 * A tiny HTTP endpoint per worker process: `GET /metrics` (Prometheus), `GET /healthz` (the process is alive) and
 * `GET /readyz` (the services it needs are reachable, from a cheap cached check: never a probe per request).
 * Bound to loopback unless asked otherwise.
 *
 * A second start on the same host and port with the same metrics, in the same process, shares the listening server
 * (reference-counted; the last close closes it): the worker starts the endpoint before its services are reachable,
 * so probes answer while it waits, and its telemetry later "starts" the same endpoint.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { PipelineMetrics } from './pipeline-metrics.js';

export interface MetricsServer {
  /** `http://host:port/metrics` */
  readonly url: string;
  /** The port bound (useful with port 0). */
  readonly port: number;
  close(): Promise<void>;
}

/** What `/readyz` reports: ready or not, and one short state per service (e.g. `{ kafka: 'reachable' }`). */
export interface Readiness {
  ready: boolean;
  services: Record<string, string>;
}

export interface MetricsServerOptions {
  /** @default 9464 (0 picks a free port) */
  port?: number;
  /** @default '127.0.0.1' (loopback: another machine cannot reach it unless asked, e.g. `0.0.0.0`) */
  host?: string;
  /**
   * Answers `/readyz` (200 when ready, else 503, with the services as JSON). Must be cheap (a cached state).
   * @default undefined (`/readyz` answers like `/healthz`)
   */
  readiness?: () => Readiness;
}

interface Shared {
  server: Server;
  metrics: PipelineMetrics;
  refs: number;
  readiness: (() => Readiness) | undefined;
}

const listening = new Map<string, Shared>();

export async function startMetricsServer(
  metrics: PipelineMetrics,
  options: MetricsServerOptions = {},
): Promise<MetricsServer> {
  const host = options.host ?? '127.0.0.1';
  const wanted = options.port ?? 9464;
  const existing = wanted === 0 ? undefined : listening.get(`${host}:${wanted}`);
  if (existing !== undefined && existing.metrics === metrics) {
    existing.refs += 1;
    existing.readiness ??= options.readiness;
    return handle(host, wanted, existing);
  }
  const shared: Shared = {
    server: undefined as unknown as Server,
    metrics,
    refs: 1,
    readiness: options.readiness,
  };
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/metrics') {
      // Readiness as gauges too, read at the scrape (a cached state): what the alert rules watch.
      const state = shared.readiness?.();
      if (state !== undefined) {
        metrics.workerReady.set(state.ready ? 1 : 0);
        for (const [service, s] of Object.entries(state.services))
          metrics.serviceUp.set({ service }, s === 'reachable' ? 1 : 0);
      }
      metrics.render().then(
        (text) => {
          res.writeHead(200, { 'content-type': metrics.registry.contentType });
          res.end(text);
        },
        (error: unknown) => {
          res.writeHead(500, { 'content-type': 'text/plain' });
          res.end(`${error instanceof Error ? error.message : String(error)}\n`);
        },
      );
      return;
    }
    if (path === '/healthz') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('ok\n');
      return;
    }
    if (path === '/readyz') {
      const state = shared.readiness?.() ?? { ready: true, services: {} };
      res.writeHead(state.ready ? 200 : 503, { 'content-type': 'application/json' });
      res.end(`${JSON.stringify(state)}\n`);
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' });
    res.end('not found\n');
  });
  shared.server = server;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(wanted, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  listening.set(`${host}:${port}`, shared);
  return handle(host, port, shared);
}

function handle(host: string, port: number, shared: Shared): MetricsServer {
  let closed = false;
  return {
    url: `http://${host}:${port}/metrics`,
    port,
    close: async () => {
      if (closed) return;
      closed = true;
      shared.refs -= 1;
      if (shared.refs > 0) return;
      listening.delete(`${host}:${port}`);
      // Keep-alive sockets of a scraper would hold close() open.
      shared.server.closeAllConnections();
      await new Promise<void>((resolve, reject) => shared.server.close((e) => (e ? reject(e) : resolve())));
    },
  };
}
