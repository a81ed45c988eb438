/**
 * The real checks behind a worker's {@link ServiceMonitor}: Kafka answers a metadata request (a kafkajs admin
 * client kept connected between checks, rebuilt after a failure), the schema registry answers `GET /subjects` with
 * anything but a 5xx, Redis answers `PING` (one connection of its own that never queues commands while down). Each
 * check times out by itself. Addresses are shown without credentials. {@link requireReachable} is the one-shot form
 * for short commands: a service that does not answer is one clear line and exit 1, never a hang or a trace.
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { Redis } from 'ioredis';
import type { ClusterProbe } from '../../output/kafka/index.js';
import {
  processSecurity,
  FIRST_CONNECT_TLS_RESETS,
  handshakeResetFailure,
  isTlsHandshakeReset,
  securityFailure,
  addressOf,
} from '../../foundation/config/index.js';
import { ClosedError, ServiceError, type SecurityFailureKind } from '../../foundation/errors/index.js';
import { DEFAULT_RETRY_POLICY, retry, type RetryPolicy } from '../../foundation/retry/index.js';
import { redisTlsOptions } from '../../pipeline/queue/index.js';
import type { MonitoredService, ServiceProbe } from './service-monitor.js';
import { upstreamProbe } from './upstream-probe.js';

export { addressOf };

export interface ServiceProbeOptions {
  /** Longest wait for one answer. @default 3_000 */
  timeoutMs?: number;
}

function withTimeout<T>(
  promise: Promise<T>,
  ms: number,
  what: string,
  service: MonitoredService,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new ServiceError(`no answer to ${what} within ${ms} ms`, service, { retriable: true })),
      ms,
    );
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export function kafkaProbe(brokers: readonly string[], options: ServiceProbeOptions = {}): ServiceProbe {
  const timeoutMs = options.timeoutMs ?? 3_000;
  let probe: ClusterProbe | undefined;
  let closed = false;
  const drop = async (): Promise<void> => {
    const p = probe;
    probe = undefined;
    await p?.close();
  };
  return failingOnSecurity({
    service: 'kafka',
    label: 'Kafka',
    address: brokers.join(','),
    async check() {
      try {
        // Loaded on first use: commands that check only Redis (status) do not load kafkajs.
        const { createClusterProbe } = await import('../../output/kafka/index.js');
        // Closed while it loaded: no client made after close() (nobody would close it).
        if (closed) throw new ClosedError('the Kafka probe is closed');
        probe ??= createClusterProbe(brokers, timeoutMs);
        await withTimeout(probe.check(), timeoutMs * 2, 'a metadata request', 'kafka');
      } catch (error) {
        await drop();
        throw error;
      }
    },
    async close() {
      closed = true;
      await drop();
    },
  });
}

export function registryProbe(url: string, options: ServiceProbeOptions = {}): ServiceProbe {
  const timeoutMs = options.timeoutMs ?? 3_000;
  const base = url.replace(/\/+$/, '');
  return failingOnSecurity({
    service: 'schema-registry',
    label: 'the schema registry',
    address: addressOf(base),
    async check() {
      const status = await httpStatusOf(`${base}/subjects`, timeoutMs, registryRequestOptions());
      if (status >= 500) throw new ServiceError(`HTTP ${status}`, 'schema-registry', { retriable: true });
      // wrong or missing credentials: not "down", and waiting will not help (probeSecurityFailure reads `status`)
      if (status === 401 || status === 403)
        throw Object.assign(new ServiceError(`HTTP ${status}`, 'schema-registry', { retriable: true }), {
          status,
        });
    },
  });
}

export function redisProbe(url: string, options: ServiceProbeOptions = {}): ServiceProbe {
  const timeoutMs = options.timeoutMs ?? 3_000;
  let redis: Redis | undefined;
  let lastError: Error | undefined;
  return failingOnSecurity({
    service: 'redis',
    label: 'Redis',
    address: addressOf(url),
    async check() {
      if (redis === undefined) {
        redis = new Redis(url, {
          lazyConnect: true,
          enableOfflineQueue: false,
          maxRetriesPerRequest: 0,
          connectTimeout: timeoutMs,
          // Reconnect in the background; the monitor only asks for PING.
          retryStrategy: (times) => Math.min(times * 200, 2_000),
          ...redisTlsOptions(url),
        });
        // Errors are reported by the monitor, once per change of state.
        redis.on('error', (error: Error) => {
          lastError = error;
        });
        redis.connect().catch(() => undefined);
      }
      const r = redis;
      if (r.status !== 'ready') {
        // Wait for the connection under way: it either becomes ready or fails.
        await new Promise<void>((resolve) => {
          const done = (): void => {
            clearTimeout(timer);
            r.off('ready', done);
            r.off('error', done);
            resolve();
          };
          const timer = setTimeout(done, timeoutMs);
          r.on('ready', done);
          r.on('error', done);
        });
      }
      if (r.status !== 'ready') {
        const code = (lastError as NodeJS.ErrnoException | undefined)?.code;
        throw new ServiceError(code ?? lastError?.message ?? `connection ${r.status}`, 'redis', {
          cause: lastError,
          retriable: true,
        });
      }
      await withTimeout(r.ping(), timeoutMs, 'PING', 'redis');
    },
    close() {
      redis?.disconnect();
      redis = undefined;
      return Promise.resolve();
    },
  });
}

/**
 * `requireReachable`'s retry of a TLS handshake reset (a restart, until {@link failingOnSecurity} judges it a plaintext
 * port): 300 ms between probes, {@link FIRST_CONNECT_TLS_RESETS} probes in all; any other failure is not retried.
 */
const HANDSHAKE_RESET_RETRY: Readonly<RetryPolicy> = {
  ...DEFAULT_RETRY_POLICY,
  retries: FIRST_CONNECT_TLS_RESETS - 1,
  initialMs: 300,
  maxMs: 300,
  factor: 1,
  jitter: 0,
  isRetriable: isTlsHandshakeReset,
};

/** The worker's probes: Kafka, the registry, Redis and (given an API URL) the upstream. */
export function workerServiceProbes(
  settings: { kafkaBrokers: readonly string[]; schemaRegistryUrl: string; redisUrl: string; apiUrl?: string },
  options: ServiceProbeOptions = {},
): ServiceProbe[] {
  const probes = [
    kafkaProbe(settings.kafkaBrokers, options),
    registryProbe(settings.schemaRegistryUrl, options),
    redisProbe(settings.redisUrl, options),
  ];
  // The upstream too (issue 48): a worker that cannot reach it takes no slices and says so once.
  if (settings.apiUrl !== undefined && settings.apiUrl !== '')
    probes.push(upstreamProbe(settings.apiUrl, options));
  return probes;
}

/**
 * Checks each configured service once (in parallel) and throws for the first one that does not answer: short
 * commands call it before they connect, so an unreachable service is one clear line and exit 1 instead of a
 * client that reconnects forever. Closes its own connections.
 * @throws ServiceError `Redis unreachable at 127.0.0.1:1 (ECONNREFUSED)` (retriable).
 */
export async function requireReachable(
  services: { redisUrl?: string; kafkaBrokers?: readonly string[]; schemaRegistryUrl?: string },
  options: ServiceProbeOptions = {},
): Promise<void> {
  const probes: ServiceProbe[] = [];
  if (services.kafkaBrokers !== undefined && services.kafkaBrokers.length > 0)
    probes.push(kafkaProbe(services.kafkaBrokers, options));
  if (services.schemaRegistryUrl !== undefined && services.schemaRegistryUrl !== '')
    probes.push(registryProbe(services.schemaRegistryUrl, options));
  if (services.redisUrl !== undefined && services.redisUrl !== '')
    probes.push(redisProbe(services.redisUrl, options));
  const failures = await Promise.all(
    probes.map(async (probe) => {
      try {
        // a TLS handshake reset may be a restart: tried again until it is judged a plaintext port (failingOnSecurity)
        await retry(() => probe.check(), HANDSHAKE_RESET_RETRY);
        return undefined;
      } catch (error) {
        // wrong credentials or certificates: the probe's own non-retriable line
        if (error instanceof ServiceError && !error.retriable) return error;
        const why = ((error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '').trim();
        return new ServiceError(
          `${probe.label} unreachable at ${probe.address} (${why || 'no answer'})`,
          probe.service,
          {
            retriable: true,
          },
        );
      } finally {
        await probe.close?.();
      }
    }),
  );
  const failure = failures.find((f) => f !== undefined);
  if (failure !== undefined) throw failure;
}

/**
 * `probe` whose check throws a non-retriable ServiceError (see {@link probeSecurityFailure}) for a security failure,
 * and for TLS handshake resets that go on, in a row, before the service's first answer ({@link handshakeResetFailure}:
 * a plaintext port; once it answered, resets are restarts and stay retriable).
 */
function failingOnSecurity(probe: ServiceProbe): ServiceProbe {
  let connectedOnce = false;
  let resets = 0;
  return {
    ...probe,
    async check() {
      try {
        await probe.check();
        connectedOnce = true;
        resets = 0;
      } catch (error) {
        const security = probeSecurityFailure(probe.service, probe.label, probe.address, error);
        if (security !== undefined) throw security;
        if (!isTlsHandshakeReset(error)) {
          resets = 0;
          throw error;
        }
        resets += 1;
        const failure = handshakeResetFailure(
          resets,
          connectedOnce,
          SECURITY_HINTS[probe.service]?.['TLS handshake'],
        );
        if (failure === undefined) throw error;
        const name = probe.label.charAt(0).toUpperCase() + probe.label.slice(1);
        throw new ServiceError(`${name} at ${probe.address}: ${failure.summary}`, probe.service, {
          cause: error,
          retriable: false,
        });
      }
    },
  };
}

/** What to check, per service and kind of failure. */
const SECURITY_HINTS: Record<string, Partial<Record<SecurityFailureKind, string>>> = {
  kafka: {
    authentication:
      'GAMEDATA_KAFKA_SASL_MECHANISM, GAMEDATA_KAFKA_SASL_USERNAME, GAMEDATA_KAFKA_SASL_PASSWORD',
    certificate:
      'GAMEDATA_KAFKA_SSL_CA_LOCATION, GAMEDATA_KAFKA_SSL_CERTIFICATE_LOCATION, GAMEDATA_KAFKA_SSL_KEY_LOCATION',
    'TLS handshake': 'GAMEDATA_KAFKA_SECURITY_PROTOCOL',
  },
  'schema-registry': {
    authentication: 'GAMEDATA_SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO or GAMEDATA_SCHEMA_REGISTRY_BEARER_TOKEN',
    certificate: 'GAMEDATA_SCHEMA_REGISTRY_SSL_CA_LOCATION',
  },
  redis: {
    authentication: 'the user and password in REDIS_URL',
    authorisation: 'the ACL of the Redis user',
    certificate: 'GAMEDATA_REDIS_TLS_CA_LOCATION',
    'TLS handshake': 'rediss:// against a TLS port',
  },
};

/**
 * A probe failure caused by credentials or certificates, as one non-retriable line naming the service, its
 * address and what failed (`Kafka at 127.0.0.1:29092: authentication failed (check ...)`); undefined otherwise.
 */
export function probeSecurityFailure(
  service: ServiceError['service'],
  label: string,
  address: string,
  error: unknown,
): ServiceError | undefined {
  const failure = securityFailure(error, SECURITY_HINTS[service] ?? {});
  if (failure === undefined) return undefined;
  const name = label.charAt(0).toUpperCase() + label.slice(1);
  return new ServiceError(`${name} at ${address}: ${failure.summary}`, service, {
    cause: error,
    retriable: false,
    security: failure.kind,
  });
}

interface HttpProbeOptions {
  headers: Record<string, string>;
  ca?: string;
}

/** The registry's credentials and CA (this process's settings) as request options. */
function registryRequestOptions(): HttpProbeOptions {
  const registry = processSecurity().registry;
  const headers: Record<string, string> = {};
  if (registry.basicAuthUserInfo !== undefined)
    headers['authorization'] = `Basic ${Buffer.from(registry.basicAuthUserInfo).toString('base64')}`;
  else if (registry.bearerToken !== undefined) headers['authorization'] = `Bearer ${registry.bearerToken}`;
  return { headers, ...(registry.ca === undefined ? {} : { ca: registry.ca }) };
}

/** The status of `GET url` (node:http(s): a private CA can be given, unlike the global fetch). */
function httpStatusOf(url: string, timeoutMs: number, options: HttpProbeOptions): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const u = new URL(url);
    const send = u.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(
      u,
      {
        method: 'GET',
        headers: options.headers,
        timeout: timeoutMs,
        ...(options.ca === undefined ? {} : { ca: options.ca }),
      },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('timeout', () =>
      req.destroy(
        new ServiceError(`no answer within ${timeoutMs} ms`, 'schema-registry', { retriable: true }),
      ),
    );
    req.on('error', (error: NodeJS.ErrnoException) =>
      reject(
        new ServiceError(error.code ?? error.message, 'schema-registry', { cause: error, retriable: true }),
      ),
    );
    req.end();
  });
}
