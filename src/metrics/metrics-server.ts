/** A tiny HTTP endpoint for Prometheus: `GET /metrics` (and `GET /healthz`). One per worker process. */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { PipelineMetrics } from './pipeline-metrics.js';

export interface MetricsServer {
  /** `http://host:port/metrics` */
  readonly url: string;
  close(): Promise<void>;
}

export interface MetricsServerOptions {
  /** @default 9464 (0 picks a free port) */
  port?: number;
  /** @default '127.0.0.1' */
  host?: string;
}

export async function startMetricsServer(
  metrics: PipelineMetrics,
  options: MetricsServerOptions = {},
): Promise<MetricsServer> {
  const server = createServer((req, res) => {
    if (req.url === '/metrics') {
      metrics.render().then(
        (text) => {
          res.writeHead(200, { 'content-type': metrics.registry.contentType });
          res.end(text);
        },
        (error: unknown) => {
          res.writeHead(500, { 'content-type': 'text/plain' });
          res.end(String(error));
        },
      );
      return;
    }
    res.writeHead(req.url === '/healthz' ? 200 : 404, { 'content-type': 'text/plain' });
    res.end(req.url === '/healthz' ? 'ok\n' : 'not found\n');
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 9464, host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}/metrics`,
    close: () => new Promise<void>((resolve, reject) => server.close((e) => (e ? reject(e) : resolve()))),
  };
}
