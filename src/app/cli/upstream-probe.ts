/**
 * The upstream's probe for a worker's {@link ServiceMonitor} (issue 48): a TCP connection to the API URL's host and
 * port, closed at once. It spends none of the key's requests (the key's 500 a minute are the pipeline's scarcest
 * resource) and tells exactly what the fetcher needs to know: whether a request can reach the upstream at all. A
 * wrong host or a closed port is `the upstream unreachable at <host:port> (ECONNREFUSED), retrying`, once; the
 * worker takes no slices meanwhile. It never gives up: the upstream is not ours, and a worker waits for it.
 */
import { connect } from 'node:net';
import { ServiceError } from '../../foundation/errors/index.js';
import type { ServiceProbe } from './service-monitor.js';

/** Host and port of an http(s) URL (the scheme's default port when none is given). */
export function upstreamEndpoint(apiUrl: string): { host: string; port: number } {
  const u = new URL(apiUrl);
  const port = u.port === '' ? (u.protocol === 'https:' ? 443 : 80) : Number(u.port);
  // `[::1]` in a URL, `::1` for a socket
  return { host: u.hostname.replace(/^\[(.*)\]$/, '$1'), port };
}

/** Resolves once a TCP connection to `host:port` is made; rejects with the errno code (or a timeout). */
function connectOnce(host: string, port: number, timeoutMs: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const socket = connect({ host, port, timeout: timeoutMs });
    socket.once('connect', () => {
      socket.destroy();
      resolve();
    });
    socket.once('timeout', () => {
      socket.destroy();
      reject(new ServiceError(`no connection within ${timeoutMs} ms`, 'upstream', { retriable: true }));
    });
    socket.once('error', (error: NodeJS.ErrnoException) => {
      socket.destroy();
      reject(new ServiceError(error.code ?? error.message, 'upstream', { cause: error, retriable: true }));
    });
  });
}

/** The probe of the upstream at `apiUrl` (credentials never shown: only host and port are). */
export function upstreamProbe(apiUrl: string, options: { timeoutMs?: number } = {}): ServiceProbe {
  const timeoutMs = options.timeoutMs ?? 3_000;
  const { host, port } = upstreamEndpoint(apiUrl);
  return {
    service: 'upstream',
    label: 'the upstream',
    address: `${host.includes(':') ? `[${host}]` : host}:${port}`,
    giveUp: false,
    check: () => connectOnce(host, port, timeoutMs),
  };
}
