/**
 * Vitest global setup of the `services` and `stacks` projects: finds or starts a real Kafka, a Confluent-API schema registry
 * and Redis, waits until each one answers, and hands their addresses to the tests (`inject('kafkaBrokers')` …)
 * and to code under test (`process.env.KAFKA_BROKERS` …).
 *
 * Where the services come from (`GAMEDATA_TEST_SERVICES`, default `auto`):
 * 1. `env`: `KAFKA_BROKERS`, `SCHEMA_REGISTRY_URL` and `REDIS_URL` (auto picks this when any of them is set);
 * 2. `containers`: testcontainers 11 (auto picks this when a Docker engine answers), imported dynamically so a
 *    machine without Docker never loads it;
 * 3. `stack`: `scripts/stack.sh up` (Kafka/Apicurio/Redis from package registries, see README), which reuses
 *    services already running on its ports and leaves them running afterwards for the next run.
 * Nothing is ever skipped: when the services cannot be had, setup throws and every test of the project fails.
 *
 * The warehouse (Kafka Connect + PostgreSQL, for test/e2e/warehouse.test.ts): `CONNECT_URL` and `WAREHOUSE_URL`
 * when both are set, else `scripts/stack.sh up --with warehouse` (which reuses the services already answering);
 * with containers and without those variables there is none, and `warehouseUrls()` says why.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Comma-separated `host:port` list. */
    kafkaBrokers: string;
    /** Base URL of the Confluent-compatible API, e.g. `http://127.0.0.1:18081/apis/ccompat/v7`. */
    schemaRegistryUrl: string;
    /** e.g. `redis://127.0.0.1:16379`. */
    redisUrl: string;
    /** Where the services came from. */
    servicesSource: ServicesSource;
    /** Kafka Connect REST URL, e.g. `http://127.0.0.1:18083` ('' = none, see `warehouseMissing`). */
    connectUrl: string;
    /** `postgresql://...` of the warehouse database ('' = none). */
    warehouseUrl: string;
    /** Why there is no warehouse ('' when there is one). */
    warehouseMissing: string;
  }
}

export type ServicesSource = 'env' | 'containers' | 'stack';

interface ServiceUrls {
  kafkaBrokers: string;
  schemaRegistryUrl: string;
  redisUrl: string;
}

const ENV_NAMES = ['KAFKA_BROKERS', 'SCHEMA_REGISTRY_URL', 'REDIS_URL'] as const;
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const READY_TIMEOUT_MS = 120_000;

const stops: Array<() => Promise<unknown>> = [];

export async function setup(project: TestProject): Promise<void> {
  const mode = process.env['GAMEDATA_TEST_SERVICES'] ?? 'auto';
  if (!['auto', 'env', 'containers', 'stack'].includes(mode)) {
    throw new Error(
      `GAMEDATA_TEST_SERVICES must be auto, env, containers or stack; got ${JSON.stringify(mode)}`,
    );
  }
  const anySet = ENV_NAMES.some((name) => (process.env[name] ?? '') !== '');

  let urls: ServiceUrls;
  let source: ServicesSource;
  if (mode === 'env' || (mode === 'auto' && anySet)) {
    urls = fromEnv();
    source = 'env';
  } else if (mode === 'containers' || (mode === 'auto' && (await dockerAvailable()))) {
    urls = await startContainers();
    source = 'containers';
  } else {
    urls = await startStack();
    source = 'stack';
  }

  await waitForServices(urls);
  // The `stacks` project's files start their own warehouse when they need one; not looking for the shared one keeps
  // its setup from starting Connect and PostgreSQL beside the `services` project's (scripts/test.sh runs both at once).
  const warehouse =
    project.name === 'stacks'
      ? { connectUrl: '', warehouseUrl: '', missing: 'the stacks project starts its own services' }
      : await findWarehouse(source);
  project.provide('connectUrl', warehouse.connectUrl);
  project.provide('warehouseUrl', warehouse.warehouseUrl);
  project.provide('warehouseMissing', warehouse.missing);
  if (warehouse.missing === '')
    Object.assign(process.env, { CONNECT_URL: warehouse.connectUrl, WAREHOUSE_URL: warehouse.warehouseUrl });
  project.provide('kafkaBrokers', urls.kafkaBrokers);
  project.provide('schemaRegistryUrl', urls.schemaRegistryUrl);
  project.provide('redisUrl', urls.redisUrl);
  project.provide('servicesSource', source);
  Object.assign(process.env, {
    KAFKA_BROKERS: urls.kafkaBrokers,
    SCHEMA_REGISTRY_URL: urls.schemaRegistryUrl,
    REDIS_URL: urls.redisUrl,
  });
  process.stderr.write(
    `[global-setup] services from ${source}: kafka ${urls.kafkaBrokers}, registry ${urls.schemaRegistryUrl}, redis ${urls.redisUrl}\n`,
  );
}

export async function teardown(): Promise<void> {
  // Containers are ours to stop; the local stack stays up (the next run reuses it; scripts/test.sh and .ci/run
  // stop what they started).
  for (const stop of stops.reverse()) await stop();
}

function fromEnv(): ServiceUrls {
  const missing = ENV_NAMES.filter((name) => (process.env[name] ?? '') === '');
  if (missing.length > 0) {
    throw new Error(
      `services from the environment, but ${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} not set ` +
        `(set all three, or none to let the setup start them: eval "$(scripts/stack.sh up)")`,
    );
  }
  return {
    kafkaBrokers: process.env['KAFKA_BROKERS'] ?? '',
    schemaRegistryUrl: process.env['SCHEMA_REGISTRY_URL'] ?? '',
    redisUrl: process.env['REDIS_URL'] ?? '',
  };
}

async function dockerAvailable(): Promise<boolean> {
  try {
    const { getContainerRuntimeClient } = await import('testcontainers');
    await withTimeout(getContainerRuntimeClient(), 15_000, 'Docker probe');
    return true;
  } catch {
    return false;
  }
}

async function startContainers(): Promise<ServiceUrls> {
  const { GenericContainer, Wait } = await import('testcontainers');
  const { KafkaContainer } = await import('@testcontainers/kafka');
  const { RedisContainer } = await import('@testcontainers/redis');
  // cp-kafka >= 8 is Apache Kafka 4.x in KRaft mode; the registry is the same Apicurio as the local stack.
  const kafka = await new KafkaContainer('confluentinc/cp-kafka:8.1.0').start();
  stops.push(() => kafka.stop());
  const registry = await new GenericContainer('apicurio/apicurio-registry:3.3.3')
    .withExposedPorts(8080)
    .withEnvironment({ APICURIO_CCOMPAT_USE_CANONICAL_HASH: 'true' })
    .withWaitStrategy(Wait.forHttp('/apis/ccompat/v7/subjects', 8080))
    .start();
  stops.push(() => registry.stop());
  const redis = await new RedisContainer('redis:7')
    .withCommand(['redis-server', '--maxmemory-policy', 'noeviction', '--appendonly', 'yes'])
    .start();
  stops.push(() => redis.stop());
  const schemaRegistryUrl = `http://${registry.getHost()}:${registry.getMappedPort(8080)}/apis/ccompat/v7`;
  await setBackwardCompatibility(schemaRegistryUrl);
  return {
    kafkaBrokers: `${kafka.getHost()}:${kafka.getMappedPort(9093)}`,
    schemaRegistryUrl,
    redisUrl: redis.getConnectionUrl(),
  };
}

/** Kafka Connect + PostgreSQL: from the environment, else from the local stack (not next to containers). */
async function findWarehouse(
  source: ServicesSource,
): Promise<{ connectUrl: string; warehouseUrl: string; missing: string }> {
  const connectUrl = process.env['CONNECT_URL'] ?? '';
  const warehouseUrl = process.env['WAREHOUSE_URL'] ?? '';
  if (connectUrl !== '' && warehouseUrl !== '') return { connectUrl, warehouseUrl, missing: '' };
  if (source === 'containers')
    return {
      connectUrl,
      warehouseUrl,
      missing: 'set CONNECT_URL and WAREHOUSE_URL (no warehouse next to containers)',
    };
  const env = await runStackUp(['--with', 'warehouse']);
  return {
    connectUrl: env.get('CONNECT_URL') ?? '',
    warehouseUrl: env.get('WAREHOUSE_URL') ?? '',
    missing: '',
  };
}

/** Runs `scripts/stack.sh up` (its progress goes to our stderr) and parses the `export NAME=value` lines. */
async function startStack(): Promise<ServiceUrls> {
  const env = await runStackUp([]);
  const get = (name: string): string => {
    const value = env.get(name);
    if (value === undefined || value === '') throw new Error(`scripts/stack.sh up printed no ${name}`);
    return value;
  };
  return {
    kafkaBrokers: get('KAFKA_BROKERS'),
    schemaRegistryUrl: get('SCHEMA_REGISTRY_URL'),
    redisUrl: get('REDIS_URL'),
  };
}

async function runStackUp(args: string[]): Promise<Map<string, string>> {
  const script = `${ROOT}scripts/stack.sh`;
  const stdout = await new Promise<string>((resolve, reject) => {
    const child = spawn('bash', [script, 'up', ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolve(out)
        : reject(new Error(`scripts/stack.sh up ${args.join(' ')} failed (exit ${code}); see its log above`)),
    );
  });
  const env = new Map<string, string>();
  for (const match of stdout.matchAll(/^export ([A-Z_]+)=(.*)$/gm)) env.set(match[1] ?? '', match[2] ?? '');
  return env;
}

async function setBackwardCompatibility(registryUrl: string): Promise<void> {
  const response = await fetch(`${registryUrl}/config`, {
    method: 'PUT',
    headers: { 'content-type': 'application/vnd.schemaregistry.v1+json' },
    body: JSON.stringify({ compatibility: 'BACKWARD' }),
  });
  if (!response.ok) throw new Error(`PUT ${registryUrl}/config answered ${response.status}`);
}

/** Each service must answer a real request (not just accept a connection) before any test runs. */
async function waitForServices(urls: ServiceUrls): Promise<void> {
  await Promise.all([
    retryUntil('kafka', urls.kafkaBrokers, async () => {
      const { Kafka, logLevel } = (await import('kafkajs')).default;
      const admin = new Kafka({
        clientId: 'global-setup',
        brokers: urls.kafkaBrokers.split(','),
        logLevel: logLevel.NOTHING,
        retry: { retries: 0 },
      }).admin();
      try {
        await admin.connect();
        const cluster = await admin.describeCluster();
        if (cluster.brokers.length === 0) throw new Error('no brokers in describeCluster');
      } finally {
        await admin.disconnect();
      }
    }),
    retryUntil('schema registry', urls.schemaRegistryUrl, async () => {
      const response = await fetch(`${urls.schemaRegistryUrl}/subjects`, {
        signal: AbortSignal.timeout(5_000),
      });
      if (!response.ok) throw new Error(`GET /subjects answered ${response.status}`);
    }),
    retryUntil('redis', urls.redisUrl, async () => {
      const { Redis } = await import('ioredis');
      const redis = new Redis(urls.redisUrl, {
        lazyConnect: true,
        maxRetriesPerRequest: 0,
        retryStrategy: () => null,
      });
      try {
        await redis.connect();
        const pong: string = await redis.ping();
        if (pong !== 'PONG') throw new Error(`PING answered ${pong}`);
      } finally {
        redis.disconnect();
      }
    }),
  ]);
}

async function retryUntil(name: string, address: string, probe: () => Promise<void>): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    try {
      await probe();
      return;
    } catch (error) {
      if (Date.now() > deadline) {
        const reason = error instanceof Error ? error.message : String(error);
        throw new Error(
          `${name} at ${address} did not answer within ${READY_TIMEOUT_MS / 1000}s: ${reason}`,
          {
            cause: error,
          },
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
