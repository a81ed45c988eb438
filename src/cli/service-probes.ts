/**
 * The real checks behind a worker's {@link ServiceMonitor}: Kafka answers a metadata request (a kafkajs admin
 * client kept connected between checks, rebuilt after a failure), the schema registry answers `GET /subjects` with
 * anything but a 5xx, Redis answers `PING` (one connection of its own that never queues commands while down). Each
 * check times out by itself. Addresses are shown without credentials. {@link requireReachable} is the one-shot form
 * for short commands: a service that does not answer is one clear line and exit 1, never a hang or a trace.
 */
import { Redis } from 'ioredis';
import type { Admin } from 'kafkajs';
import { ServiceError } from '../errors.js';
import type { ServiceProbe } from './service-monitor.js';

export interface ServiceProbeOptions {
  /** Longest wait for one answer. @default 3_000 */
  timeoutMs?: number;
}

/** `host:port` of a URL (no user, password, path or query). */
export function addressOf(url: string): string {
  try {
    const u = new URL(url);
    return u.port === '' ? u.hostname : `${u.hostname}:${u.port}`;
  } catch {
    return '(invalid address)';
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer to ${what} within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export function kafkaProbe(brokers: readonly string[], options: ServiceProbeOptions = {}): ServiceProbe {
  const timeoutMs = options.timeoutMs ?? 3_000;
  let admin: Admin | undefined;
  const drop = async (): Promise<void> => {
    const a = admin;
    admin = undefined;
    await a?.disconnect().catch(() => undefined);
  };
  return {
    service: 'kafka',
    label: 'Kafka',
    address: brokers.join(','),
    async check() {
      try {
        // Loaded on first use: commands that check only Redis (status) do not load kafkajs.
        const { Kafka, logLevel: KafkaLogLevel } = await import('kafkajs');
        admin ??= new Kafka({
          clientId: 'gamedata-probe',
          brokers: [...brokers],
          connectionTimeout: timeoutMs,
          requestTimeout: timeoutMs,
          retry: { retries: 0 },
          logLevel: KafkaLogLevel.NOTHING,
        }).admin({ retry: { retries: 0 } });
        const a = admin;
        await withTimeout(
          (async () => {
            await a.connect();
            await a.describeCluster();
          })(),
          timeoutMs * 2,
          'a metadata request',
        );
      } catch (error) {
        await drop();
        throw error;
      }
    },
    close: drop,
  };
}

export function registryProbe(url: string, options: ServiceProbeOptions = {}): ServiceProbe {
  const timeoutMs = options.timeoutMs ?? 3_000;
  const base = url.replace(/\/+$/, '');
  return {
    service: 'schema-registry',
    label: 'the schema registry',
    address: addressOf(base),
    async check() {
      let res: Response;
      try {
        res = await fetch(`${base}/subjects`, { signal: AbortSignal.timeout(timeoutMs) });
      } catch (error) {
        // fetch says only "fetch failed"; the reason (ECONNREFUSED, ...) is its cause.
        const cause = (error as { cause?: { code?: string; message?: string } }).cause;
        throw new Error(cause?.code ?? cause?.message ?? (error as Error).message, { cause: error });
      }
      await res.body?.cancel().catch(() => undefined);
      if (res.status >= 500) throw new Error(`HTTP ${res.status}`);
    },
  };
}

export function redisProbe(url: string, options: ServiceProbeOptions = {}): ServiceProbe {
  const timeoutMs = options.timeoutMs ?? 3_000;
  let redis: Redis | undefined;
  let lastError = '';
  return {
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
        });
        // Errors are reported by the monitor, once per change of state.
        redis.on('error', (error: Error) => {
          lastError = (error as NodeJS.ErrnoException).code ?? error.message;
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
      if (r.status !== 'ready') throw new Error(lastError || `connection ${r.status}`);
      await withTimeout(r.ping(), timeoutMs, 'PING');
    },
    close() {
      redis?.disconnect();
      redis = undefined;
      return Promise.resolve();
    },
  };
}

/** The worker's three probes. */
export function workerServiceProbes(
  settings: { kafkaBrokers: readonly string[]; schemaRegistryUrl: string; redisUrl: string },
  options: ServiceProbeOptions = {},
): ServiceProbe[] {
  return [
    kafkaProbe(settings.kafkaBrokers, options),
    registryProbe(settings.schemaRegistryUrl, options),
    redisProbe(settings.redisUrl, options),
  ];
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
        await probe.check();
        return undefined;
      } catch (error) {
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
