/**
 * The real checks behind a worker's {@link ServiceMonitor}: Kafka answers a metadata request (a kafkajs admin
 * client kept connected between checks, rebuilt after a failure), the schema registry answers `GET /subjects` with
 * anything but a 5xx, Redis answers `PING` (one connection of its own that never queues commands while down). Each
 * check times out by itself. Addresses are shown without credentials.
 */
import { Redis } from 'ioredis';
import { Kafka, logLevel as KafkaLogLevel, type Admin } from 'kafkajs';
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
        // Wait briefly for a connection under way.
        await new Promise<void>((resolve) => {
          const done = (): void => {
            clearTimeout(timer);
            r.off('ready', done);
            resolve();
          };
          const timer = setTimeout(done, Math.min(timeoutMs, 1_000));
          r.on('ready', done);
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
