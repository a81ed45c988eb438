/**
 * The pipeline's view of the settings (services, prefixes, the worker's `/metrics` endpoint), read through
 * `loadConfig()`: env > GAMEDATA_CONFIG file > defaults, validated once, one ConfigError listing every problem.
 */
import { loadConfig, type ConfigInput, type ConfigNeed, type DeliveryMode } from './load-config.js';
import type { SchemaContracts } from './schema-contract.js';
import type { ShortPages } from '../models/short-pages.js';

/** Where the pipeline's services are. */
export interface PipelineSettings {
  /** `GAMEDATA_API_URL`: tRPC base URL ending in `/trpc`. */
  apiUrl: string;
  /** `GAMEDATA_API_KEY`. */
  apiKey?: string | undefined;
  /** `KAFKA_BROKERS`. */
  kafkaBrokers: string[];
  /** `SCHEMA_REGISTRY_URL`. */
  schemaRegistryUrl: string;
  /** `REDIS_URL`. */
  redisUrl: string;
  /** `GAMEDATA_TOPIC_PREFIX`. @default 'gamedata' */
  topicPrefix: string;
  /** `GAMEDATA_QUEUE_PREFIX`: BullMQ key prefix. @default 'gamedata-bull' */
  queuePrefix: string;
  /** `GAMEDATA_REDIS_PREFIX`: prefix of the dedup and counter keys. @default 'gamedata' */
  redisPrefix: string;
  /** `GAMEDATA_METRICS_PORT`: a worker's `/metrics` port, false = none. @default 9464 (the worker's default) */
  metricsPort?: number | false | undefined;
  /** `GAMEDATA_METRICS_HOST`: the address `/metrics` binds to. @default '127.0.0.1' (the worker's default) */
  metricsHost?: string | undefined;
  /** `GAMEDATA_DELIVERY`: `exactly-once` (Kafka transactions) or `at-least-once`. @default DEFAULT_CONFIG.delivery */
  delivery?: DeliveryMode | undefined;
  /** `GAMEDATA_SHORT_PAGES`: what an upstream page shorter than asked for means. @default DEFAULT_CONFIG.shortPages */
  shortPages?: ShortPages | undefined;
  /** `GAMEDATA_TRANSACTION_LINGER`: exactly-once shared transactions' linger. @default DEFAULT_CONFIG.transactionLingerMs */
  transactionLingerMs?: number | undefined;
  /** `GAMEDATA_MAX_RESPONSE_BYTES`: the largest upstream answer read. @default DEFAULT_CONFIG.maxResponseBytes */
  maxResponseBytes?: number | undefined;
  /** `GAMEDATA_RETENTION_AGE` / `GAMEDATA_RETENTION_RUNS`: how long finished runs are kept. @default 7 days / 20000 runs */
  retention?: { maxAgeMs: number; maxRuns: number };
  /** `GAMEDATA_SCHEMA_CONTRACT`: each resource's schema contract. @default every resource `freeze` */
  schemaContracts?: SchemaContracts | undefined;
}

/**
 * Reads the settings through loadConfig; those named in `need` must be set (Redis always is).
 * @param overrides CLI flags, highest precedence (e.g. `{ metricsPort: '--metrics-port' value }`).
 * @throws ConfigError listing every missing or invalid setting.
 */
export function readPipelineSettings(
  need: { api?: boolean; kafka?: boolean; registry?: boolean } = { api: true, kafka: true, registry: true },
  env: NodeJS.ProcessEnv = process.env,
  overrides?: ConfigInput,
): PipelineSettings {
  const needs: ConfigNeed[] = ['redis'];
  if (need.api === true) needs.push('api');
  if (need.kafka === true) needs.push('kafka');
  if (need.registry === true) needs.push('registry');
  const config = loadConfig({ need: needs, env, ...(overrides === undefined ? {} : { overrides }) });
  return {
    apiUrl: config.apiUrl ?? '',
    apiKey: config.apiKey,
    kafkaBrokers: config.kafkaBrokers,
    schemaRegistryUrl: config.schemaRegistryUrl ?? '',
    redisUrl: config.redisUrl ?? '',
    topicPrefix: config.topicPrefix,
    queuePrefix: config.queuePrefix,
    redisPrefix: config.redisPrefix,
    metricsPort: config.metricsPort,
    metricsHost: config.metricsHost,
    delivery: config.delivery,
    transactionLingerMs: config.transactionLingerMs,
    shortPages: config.shortPages,
    maxResponseBytes: config.maxResponseBytes,
    retention: { maxAgeMs: config.retentionAgeMs, maxRuns: config.retentionRuns },
    schemaContracts: config.schemaContracts,
  };
}
