/**
 * Test helper for the `services` project: the addresses the global setup found, a unique name prefix per test
 * file, client factories for Kafka / the schema registry / Redis, and a cleanup that disconnects every client
 * and deletes every topic, subject and Redis key the file created under its prefix.
 *
 * @example
 * const services = createTestServices('smoke-avro');
 * afterAll(() => services.cleanup());
 * const topic = services.name('orders');            // e.g. "it-smoke-avro-1a2b3c4d.orders"
 * const producer = await services.producer();
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { SchemaRegistryClient } from '@confluentinc/schemaregistry';
import { Redis } from 'ioredis';
import type { RedisOptions } from 'ioredis';
import kafkajs from 'kafkajs';
import type { Admin, Consumer, ConsumerConfig, Kafka, Producer, ProducerConfig } from 'kafkajs';
import { inject } from 'vitest';
import type { ServicesSource } from '../global-setup.js';

const { Kafka: KafkaClient, logLevel } = kafkajs;
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Addresses of the shared services, as provided by test/global-setup.ts. */
export interface ServiceUrls {
  kafkaBrokers: string[];
  schemaRegistryUrl: string;
  redisUrl: string;
  source: ServicesSource;
}

/** ioredis options (its `replyMapping` typing does not survive `exactOptionalPropertyTypes`, hence the Omit). */
export type TestRedisOptions = Omit<RedisOptions, 'replyMapping'>;

export interface TestServices {
  /** Unique per call: `it-<label>-<8 hex>`. Every topic, group, subject, queue and key of the file starts with it. */
  readonly prefix: string;
  readonly urls: ServiceUrls;
  /** `<prefix>.<part>`: a topic, consumer group, queue or key name owned by this file. */
  name(part: string): string;
  /** One kafkajs client for the file (logs only errors). */
  readonly kafka: Kafka;
  /** A connected admin client, disconnected by cleanup(). */
  admin(): Promise<Admin>;
  /** A connected producer (idempotent unless the config says otherwise), disconnected by cleanup(). */
  producer(config?: ProducerConfig): Promise<Producer>;
  /** A connected consumer; `groupId` defaults to a fresh `<prefix>.group-<n>`. Disconnected by cleanup(). */
  consumer(config?: Partial<ConsumerConfig>): Promise<Consumer>;
  /** A Confluent schema-registry client for the registry's Confluent-compatible base URL. */
  registry(): SchemaRegistryClient;
  /** An ioredis client (`maxRetriesPerRequest: null`, as BullMQ workers need), closed by cleanup(). */
  redis(options?: TestRedisOptions): Redis;
  /** Registers a function cleanup() runs first (last registered, first run). */
  onCleanup(fn: () => unknown): void;
  /**
   * Runs the registered functions, disconnects every client, then deletes the topics, registry subjects
   * (permanently) and Redis keys whose names start with the prefix. Never throws for a cleanup step that fails;
   * it reports them together at the end.
   */
  cleanup(): Promise<void>;
}

/** The service addresses from the global setup (throws outside the `services` project). */
export function serviceUrls(): ServiceUrls {
  const kafkaBrokers = inject('kafkaBrokers');
  const schemaRegistryUrl = inject('schemaRegistryUrl');
  const redisUrl = inject('redisUrl');
  const source = inject('servicesSource');
  if (!kafkaBrokers || !schemaRegistryUrl || !redisUrl) {
    throw new Error(
      'no service addresses: run this test in the vitest project "services" (test/global-setup.ts)',
    );
  }
  return { kafkaBrokers: kafkaBrokers.split(','), schemaRegistryUrl, redisUrl, source };
}

/** Kafka Connect and the warehouse database from the global setup (throws, saying why, when there are none). */
export function warehouseUrls(): { connectUrl: string; warehouseUrl: string } {
  const missing = inject('warehouseMissing');
  const connectUrl = inject('connectUrl');
  const warehouseUrl = inject('warehouseUrl');
  if (missing || !connectUrl || !warehouseUrl)
    throw new Error(
      `no Kafka Connect / warehouse for this test: ${missing || 'run it in the vitest project "services"'}`,
    );
  return { connectUrl, warehouseUrl };
}

/** A fresh unique prefix, e.g. `it-smoke-1a2b3c4d`. */
export function uniquePrefix(label: string): string {
  const safe = label.toLowerCase().replace(/[^a-z0-9-]+/g, '-');
  return `it-${safe}-${randomUUID().slice(0, 8)}`;
}

export function createTestServices(label: string): TestServices {
  const urls = serviceUrls();
  const prefix = uniquePrefix(label);
  const kafka = new KafkaClient({
    clientId: prefix,
    brokers: urls.kafkaBrokers,
    logLevel: logLevel.ERROR,
    // the first request after a fresh broker start can meet a coordinator that is still loading
    retry: { retries: 8, initialRetryTime: 200 },
  });
  const cleanups: Array<() => unknown> = [];
  const disconnects: Array<() => unknown> = [];
  let groups = 0;
  let registryClient: SchemaRegistryClient | undefined;

  const services: TestServices = {
    prefix,
    urls,
    kafka,
    name: (part) => `${prefix}.${part}`,
    async admin() {
      const admin = kafka.admin();
      await admin.connect();
      disconnects.push(() => admin.disconnect());
      return admin;
    },
    async producer(config = {}) {
      const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, ...config });
      await producer.connect();
      disconnects.push(() => producer.disconnect());
      return producer;
    },
    async consumer(config = {}) {
      groups += 1;
      const consumer = kafka.consumer({ groupId: `${prefix}.group-${groups}`, ...config });
      await consumer.connect();
      disconnects.push(() => consumer.disconnect());
      return consumer;
    },
    registry() {
      // A request timeout, as the pipeline's own client has (`registry-client.ts`): without one a request the registry
      // never answers hangs its test until vitest's 300 s limit, with nothing said (the avro smoke test on 0233238: its
      // record never reached Kafka). Timed-out requests are retried by the library (ECONNABORTED).
      registryClient ??= new SchemaRegistryClient({
        baseURLs: [urls.schemaRegistryUrl],
        createAxiosDefaults: { timeout: 30_000 },
      });
      return registryClient;
    },
    redis(options = {}) {
      const redis = new Redis(urls.redisUrl, { maxRetriesPerRequest: null, ...options });
      // Without a listener ioredis prints "Unhandled error event" on every failed reconnect (e.g. across a restart).
      redis.on('error', () => undefined);
      disconnects.push(() => (redis.status === 'end' ? undefined : redis.disconnect()));
      return redis;
    },
    onCleanup(fn) {
      cleanups.push(fn);
    },
    async cleanup() {
      const failures: string[] = [];
      // Each step is bounded: a client stuck reconnecting must not hang the whole file.
      const attempt = async (what: string, fn: () => unknown): Promise<void> => {
        let timer: NodeJS.Timeout | undefined;
        try {
          await Promise.race([
            Promise.resolve().then(fn),
            new Promise((_, reject) => {
              timer = setTimeout(() => reject(new Error('timed out after 15 s')), 15_000);
            }),
          ]);
        } catch (error) {
          failures.push(`${what}: ${error instanceof Error ? error.message : String(error)}`);
        } finally {
          clearTimeout(timer);
        }
      };
      for (const fn of cleanups.splice(0).reverse()) await attempt('cleanup function', fn);
      for (const fn of disconnects.splice(0).reverse()) await attempt('disconnect', fn);
      await attempt('delete topics', () => deleteTopics(kafka, prefix));
      await attempt('delete subjects', () => deleteSubjects(urls.schemaRegistryUrl, prefix));
      await attempt('delete redis keys', () => deleteRedisKeys(urls.redisUrl, prefix));
      if (failures.length > 0) console.warn(`[test cleanup ${prefix}] ${failures.join('; ')}`);
    },
  };
  return services;
}

async function deleteTopics(kafka: Kafka, prefix: string): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const topics = (await admin.listTopics()).filter((topic) => topic.startsWith(prefix));
    if (topics.length > 0) await admin.deleteTopics({ topics, timeout: 30_000 });
  } finally {
    await admin.disconnect();
  }
}

async function deleteSubjects(registryUrl: string, prefix: string): Promise<void> {
  const response = await fetch(`${registryUrl}/subjects`);
  if (!response.ok) throw new Error(`GET /subjects answered ${response.status}`);
  const subjects = ((await response.json()) as string[]).filter((subject) => subject.startsWith(prefix));
  for (const subject of subjects) {
    const url = `${registryUrl}/subjects/${encodeURIComponent(subject)}`;
    // Confluent semantics: a permanent delete must follow a soft delete.
    await fetch(url, { method: 'DELETE' });
    await fetch(`${url}?permanent=true`, { method: 'DELETE' });
  }
}

async function deleteRedisKeys(redisUrl: string, prefix: string): Promise<void> {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 3 });
  try {
    // BullMQ keys are `bull:<queue>:...`; the file's own keys start with the prefix.
    for (const pattern of [`${prefix}*`, `bull:${prefix}*`]) {
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
        cursor = next;
        if (keys.length > 0) await redis.unlink(...keys);
      } while (cursor !== '0');
    }
  } finally {
    await redis.quit();
  }
}

/**
 * Restarts the Redis the tests use through `scripts/stack.sh restart-redis` (graceful shutdown, start again with
 * the same data directory, AOF reloaded). Works for the local stack, including one started by another checkout.
 */
export async function restartRedis(): Promise<void> {
  const url = new URL(serviceUrls().redisUrl);
  await promisify(execFile)('bash', [`${ROOT}scripts/stack.sh`, 'restart-redis'], {
    cwd: ROOT,
    env: { ...process.env, STACK_REDIS_PORT: url.port || '6379' },
    timeout: 60_000,
  });
}
