/**
 * The Kafka settings every part of `output/kafka/` takes (`KafkaSinkOptions`), their defaults, and `resolveKafkaOptions`:
 * validated once, security taken from the process's settings when not given.
 */
import { ConfigError } from '../../foundation/errors/index.js';
import { processSecurity } from '../../foundation/config/index.js';
import type { KafkaClientSecurity } from '../../foundation/config/index.js';

/** Where kafkajs's own log lines go (a pino logger fits). Library code never writes to the console. */
export interface SinkLogger {
  error(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface KafkaSinkOptions {
  /** Bootstrap brokers, e.g. `['127.0.0.1:19092']`. Required, at least one. */
  brokers: readonly string[];
  /** Client id seen by the brokers. @default 'gamedata' */
  clientId?: string;
  /** TCP connect timeout per broker. @default 3_000 */
  connectionTimeoutMs?: number;
  /** How long the broker may take to ack a produce request (acks=all). @default 30_000 */
  requestTimeoutMs?: number;
  /** kafkajs retries of a failed request before `send` rejects (at least 1 for the idempotent producer). @default 5 */
  retries?: number;
  /**
   * Largest sum of key + value + header bytes sent in one produce request. The broker's `max.message.bytes`
   * limits a whole record batch, not one record, so a page of large records (or dead letters) sent at once could
   * be refused forever; `send` splits into sequential requests under this size (a single larger message goes
   * alone). @default 900_000
   */
  maxBatchBytes?: number;
  /** Receives kafkajs warnings and errors. @default undefined (silent) */
  logger?: SinkLogger;
  /**
   * TLS: `true` (the system CAs) or PEM contents (`ca`, and `cert` + `key` for mutual TLS); `false` = plaintext.
   * @default this process's settings (`GAMEDATA_KAFKA_SECURITY_PROTOCOL`, `GAMEDATA_KAFKA_SSL_*`, through loadConfig)
   */
  ssl?: KafkaClientSecurity['ssl'] | false;
  /**
   * SASL PLAIN / SCRAM-SHA-256 / SCRAM-SHA-512 credentials; `false` = none.
   * @default this process's settings (`GAMEDATA_KAFKA_SASL_*`, through loadConfig)
   */
  sasl?: KafkaClientSecurity['sasl'] | false;
}

/** {@link KafkaSinkOptions} resolved: defaults applied, security taken from the process when not given. */
export type ResolvedKafkaOptions = Required<Omit<KafkaSinkOptions, 'logger' | 'ssl' | 'sasl'>> & {
  logger: SinkLogger | undefined;
  ssl: KafkaClientSecurity['ssl'];
  sasl: KafkaClientSecurity['sasl'];
};

export const DEFAULT_KAFKA_SINK_OPTIONS = {
  clientId: 'gamedata',
  connectionTimeoutMs: 3_000,
  requestTimeoutMs: 30_000,
  retries: 5,
  maxBatchBytes: 900_000,
} as const;

/** Resolved options; bad values throw a ConfigError naming the option. Shared with `createTopics`. */
export function resolveKafkaOptions(options: KafkaSinkOptions): ResolvedKafkaOptions {
  const brokers: unknown = options.brokers;
  if (
    !Array.isArray(brokers) ||
    brokers.length === 0 ||
    brokers.some((b) => typeof b !== 'string' || !/^[^\s:]+:\d+$/.test(b))
  ) {
    throw new ConfigError(
      `brokers must be a non-empty list of host:port, got ${JSON.stringify(options.brokers)}`,
    );
  }
  const own = options.ssl === undefined || options.sasl === undefined ? processSecurity().kafka : {};
  const ssl = options.ssl === undefined ? own.ssl : options.ssl === false ? undefined : options.ssl;
  const sasl = options.sasl === undefined ? own.sasl : options.sasl === false ? undefined : options.sasl;
  const resolved = { ...DEFAULT_KAFKA_SINK_OPTIONS, ...options, logger: options.logger, ssl, sasl };
  for (const key of ['connectionTimeoutMs', 'requestTimeoutMs', 'retries', 'maxBatchBytes'] as const) {
    if (!Number.isInteger(resolved[key]) || resolved[key] < 0) {
      throw new ConfigError(`${key} must be a non-negative integer, got ${String(resolved[key])}`);
    }
  }
  return resolved;
}
