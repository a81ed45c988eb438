/**
 * Our own small producer interface over kafkajs. kafkajs has had no release since 2023, so nothing outside this
 * folder imports it: swapping the client means rewriting this file and `create-topics.ts`, nothing else.
 */
import { Kafka, Partitioners, logLevel as KafkaLogLevel } from './kafkajs-loader.js';
import type { Admin, ICustomPartitioner, LogEntry, Producer, SASLOptions } from 'kafkajs';
import { murmur2 } from './murmur2.js';
import { ConfigError, ServiceError } from '../errors.js';
import { processSecurity } from '../config/process-security.js';
import { securityFailure } from '../config/security-failure.js';
import type { KafkaClientSecurity } from '../config/security-settings.js';
import { installRecordEncoding } from './record-encoding.js';
import { installRequestQueueTimerFix } from './request-queue-timer.js';

/** One message: key as a UTF-8 string (`_id`), value bytes, string headers. */
export interface SinkMessage {
  key: string | null;
  value: Buffer | string;
  headers?: Record<string, string>;
}

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

export interface KafkaSink {
  /** Connects the producer. @throws ServiceError (retriable) when no broker is reachable. */
  connect(): Promise<void>;
  /**
   * Sends messages to one topic with the idempotent producer and acks=all; resolves only after every message is
   * acknowledged by all in-sync replicas. An empty list resolves at once.
   * @throws ServiceError when Kafka refuses or cannot be reached (`retriable` as kafkajs says).
   */
  send(topic: string, messages: readonly SinkMessage[]): Promise<void>;
  /** Flushes nothing (sends are awaited) and closes the connections. Safe to call twice. */
  disconnect(): Promise<void>;
}

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

/** A kafkajs client for resolved options (kafkajs log lines go to `logger`, never to the console). */
export function createKafkaClient(
  options: ResolvedKafkaOptions,
  overrides: {
    clientId?: string;
    retry?: { retries: number; initialRetryTime: number; maxRetryTime: number };
  } = {},
): Kafka {
  const logger = options.logger;
  // kafkajs keeps a 1 ms timer running on every broker connection (request-queue-timer.ts).
  installRequestQueueTimerFix();
  // kafkajs encodes each record with ~10 allocations; the same bytes in one (record-encoding.ts).
  installRecordEncoding();
  return new Kafka({
    clientId: overrides.clientId ?? options.clientId,
    brokers: [...options.brokers],
    connectionTimeout: options.connectionTimeoutMs,
    requestTimeout: options.requestTimeoutMs,
    ...(options.ssl === undefined ? {} : { ssl: options.ssl }),
    // kafkajs types SASL per mechanism; ours carries the mechanism as a value
    ...(options.sasl === undefined ? {} : { sasl: options.sasl as SASLOptions }),
    retry: overrides.retry ?? { retries: options.retries, initialRetryTime: 200, maxRetryTime: 5_000 },
    logLevel: logger === undefined ? KafkaLogLevel.NOTHING : KafkaLogLevel.WARN,
    logCreator: () => (entry: LogEntry) => {
      if (logger === undefined) return;
      const { message, ...rest } = entry.log;
      if (entry.level === KafkaLogLevel.ERROR) logger.error({ ns: entry.namespace, ...rest }, message);
      else logger.warn({ ns: entry.namespace, ...rest }, message);
    },
  });
}

/** What to check for each kind of security failure (settings names). */
export const KAFKA_SECURITY_HINTS = {
  authentication: 'GAMEDATA_KAFKA_SASL_MECHANISM, GAMEDATA_KAFKA_SASL_USERNAME, GAMEDATA_KAFKA_SASL_PASSWORD',
  authorisation: 'the ACLs of the SASL user or client certificate',
  certificate:
    'GAMEDATA_KAFKA_SSL_CA_LOCATION, GAMEDATA_KAFKA_SSL_CERTIFICATE_LOCATION, GAMEDATA_KAFKA_SSL_KEY_LOCATION',
  'host name': "that KAFKA_BROKERS and the advertised listeners use the names in the brokers' certificates",
  'TLS handshake': 'GAMEDATA_KAFKA_SECURITY_PROTOCOL and the port',
} as const;

/** Turns a kafkajs failure into a ServiceError that names the brokers and what was being done. */
export function toKafkaError(error: unknown, brokers: readonly string[], action: string): ServiceError {
  if (error instanceof ServiceError) return error;
  const e = error as { message?: string; retriable?: boolean; name?: string } | null;
  const detail = e?.message ?? String(error);
  // Wrong credentials or certificates do not heal by retrying: one line naming what failed, not retriable.
  const security = securityFailure(error, KAFKA_SECURITY_HINTS);
  if (security !== undefined)
    return new ServiceError(`Kafka at ${brokers.join(',')}: ${security.summary} (while ${action})`, 'kafka', {
      cause: error,
      retriable: false,
    });
  const unreachable =
    /ECONNREFUSED|ENOTFOUND|EHOSTUNREACH|Connection timeout|Closed connection|KafkaJSConnectionError/i.test(
      `${e?.name ?? ''} ${detail}`,
    );
  const missingTopic = /does not host this topic-partition|UNKNOWN_TOPIC/i.test(detail);
  return new ServiceError(
    unreachable
      ? `Kafka unreachable at ${brokers.join(',')} while ${action}: ${detail}`
      : `Kafka failed while ${action}: ${detail}${missingTopic ? ' (does the topic exist? run `gamedata topics create`)' : ''}`,
    'kafka',
    { cause: error, retriable: unreachable || e?.retriable !== false },
  );
}

function messageBytes(m: SinkMessage): number {
  let n =
    (m.key === null ? 0 : Buffer.byteLength(m.key)) +
    (typeof m.value === 'string' ? Buffer.byteLength(m.value) : m.value.length);
  for (const [k, v] of Object.entries(m.headers ?? {})) n += Buffer.byteLength(k) + Buffer.byteLength(v);
  return n;
}

/** Splits messages, in order, into runs whose total size stays under `maxBytes` (a larger message goes alone). */
export function chunkBySize(messages: readonly SinkMessage[], maxBytes: number): SinkMessage[][] {
  const chunks: SinkMessage[][] = [];
  let current: SinkMessage[] = [];
  let size = 0;
  for (const m of messages) {
    const n = messageBytes(m);
    if (current.length > 0 && size + n > maxBytes) {
      chunks.push(current);
      current = [];
      size = 0;
    }
    current.push(m);
    size += n;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

/**
 * The kafkajs form of our messages for one partition, with the same bytes on the wire: header values as UTF-8
 * Buffers made once (kafkajs would encode a string header value per record; a page's records share one headers
 * object, so its Buffers are made once per page, not per record), the key as it is (the record encoder writes a
 * string key's UTF-8 bytes; the partition is given, so nothing hashes it). One converter per send() call: a headers
 * object changed by the caller between sends is read again.
 */
export function toWire(): (
  m: SinkMessage,
  partition: number,
) => {
  key: string | null;
  value: Buffer | string;
  headers: Record<string, Buffer>;
  partition: number;
} {
  const converted = new Map<Record<string, string>, Record<string, Buffer>>();
  const none: Record<string, Buffer> = {};
  return (m, partition) => {
    let headers = none;
    if (m.headers !== undefined) {
      let h = converted.get(m.headers);
      if (h === undefined) {
        h = {};
        for (const [k, v] of Object.entries(m.headers)) h[k] = Buffer.from(v, 'utf8');
        converted.set(m.headers, h);
      }
      headers = h;
    }
    return { key: m.key, value: m.value, headers, partition };
  };
}

/**
 * The producers' partitioner: every message the project sends names its partition ({@link partitionForKey});
 * kafkajs' default partitioner would first filter the topic's partition list for each message. A message without
 * one goes to the default partitioner.
 */
export const givenPartitioner: ICustomPartitioner = () => {
  const fallback = Partitioners.DefaultPartitioner();
  return (args) => args.message.partition ?? fallback(args);
};

/** The kafkajs client the sink needs (tests pass a recording fake). */
export type SinkKafkaClient = Pick<Kafka, 'producer' | 'admin'>;

/**
 * The partition the producer's default partitioner (Java-compatible murmur2 of the key) picks for a keyed message
 * on a topic of `partitions` partitions; a keyless message takes `fallback`.
 */
export function partitionForKey(key: string | null, partitions: number, fallback: number): number {
  if (key === null) return fallback % partitions;
  // kafkajs' DefaultPartitioner (Java's): toPositive(murmur2(key)) % partitions, without its per-call metadata.
  return (murmur2(key) & 0x7fffffff) % partitions;
}

/**
 * A producer behind our interface: idempotent (no duplicates from its own retries), acks=all, one request in
 * flight (what kafkajs's idempotence requires to keep order).
 * @example
 * const sink = createKafkaSink({ brokers: ['127.0.0.1:19092'] });
 * await sink.connect();
 * await sink.send('gamedata.users', [{ key: user._id, value: bytes, headers: { ... } }]);
 * await sink.disconnect();
 */
export function createKafkaSink(
  options: KafkaSinkOptions,
  seams: { kafka?: SinkKafkaClient } = {},
): KafkaSink {
  const resolved = resolveKafkaOptions(options);
  const kafka: SinkKafkaClient = seams.kafka ?? createKafkaClient(resolved);
  let producer: Producer | undefined;
  let connected = false;
  let admin: Promise<Admin> | undefined;
  const partitionCounts = new Map<string, number>();
  let keyless = 0;

  /** The topic's partition count, read once through an admin connection. */
  const partitionsOf = async (topic: string): Promise<number> => {
    const known = partitionCounts.get(topic);
    if (known !== undefined) return known;
    admin ??= (async () => {
      const a = kafka.admin();
      await a.connect();
      return a;
    })().catch((error: unknown) => {
      admin = undefined;
      throw error;
    });
    const meta = await (await admin).fetchTopicMetadata({ topics: [topic] });
    const n = meta.topics[0]?.partitions.length ?? 0;
    if (n === 0)
      throw new ServiceError(`topic ${topic} has no partitions (run \`gamedata topics create\`)`, 'kafka', {
        retriable: false,
      });
    partitionCounts.set(topic, n);
    return n;
  };

  return {
    async connect() {
      if (connected) return;
      try {
        producer ??= kafka.producer({
          idempotent: true,
          maxInFlightRequests: 1,
          allowAutoTopicCreation: false,
          // kafkajs refuses an idempotent producer without retries (its sequence numbers protect the retries).
          retry: { retries: Math.max(1, resolved.retries), initialRetryTime: 200, maxRetryTime: 5_000 },
          // Java-compatible murmur2 partitioning: the same key lands where Java/Connect producers would put it.
          createPartitioner: givenPartitioner,
        });
        await producer.connect();
        connected = true;
      } catch (error) {
        throw toKafkaError(error, resolved.brokers, 'connecting the producer');
      }
    },
    async send(topic, messages) {
      if (messages.length === 0) return;
      if (!connected || producer === undefined) throw new ServiceError('send() before connect()', 'kafka');
      const p = producer;
      try {
        // ONE PARTITION PER REQUEST. kafkajs 2.2.4 (sendMessages) remembers which brokers answered a send and, on
        // its internal retry, sends only to leaders that have no answer yet: when a leader stops (a broker's
        // controlled shutdown) and its partition moves to a broker that already answered for another partition,
        // that partition's messages are never sent and `send` still resolves. The caller then marks them seen:
        // records lost (the chaos run's 17 articles). A request with a single partition has a single leader, so a
        // retry always goes to the partition's current leader. Partitions are chosen here, with the producer's
        // own murmur2 rule, so keys land where they always did; order is kept per partition.
        const wire = toWire();
        const n = await partitionsOf(topic);
        const byPartition = new Map<number, SinkMessage[]>();
        for (const m of messages) {
          const partition = partitionForKey(m.key, n, m.key === null ? keyless++ : 0);
          const list = byPartition.get(partition) ?? [];
          list.push(m);
          byPartition.set(partition, list);
        }
        await Promise.all(
          [...byPartition].map(async ([partition, list]) => {
            // Sequential within a partition: each request resolves after its acks, so the whole call does too.
            for (const chunk of chunkBySize(list, resolved.maxBatchBytes)) {
              const answers = await p.send({
                topic,
                acks: -1,
                timeout: resolved.requestTimeoutMs,
                messages: chunk.map((m) => wire(m, partition)),
              });
              // Belt and braces: an answer for the partition is the ack; none means nothing was written.
              if (!answers.some((a) => a.topicName === topic && a.partition === partition))
                throw new ServiceError(
                  `Kafka did not acknowledge ${chunk.length} message(s) to ${topic}[${partition}]`,
                  'kafka',
                  { retriable: true },
                );
            }
          }),
        );
      } catch (error) {
        throw toKafkaError(error, resolved.brokers, `sending ${messages.length} message(s) to ${topic}`);
      }
    },
    async disconnect() {
      const a = admin;
      admin = undefined;
      if (a !== undefined) await (await a.catch(() => undefined))?.disconnect();
      if (producer === undefined) return;
      const p = producer;
      producer = undefined;
      connected = false;
      await p.disconnect();
    },
  };
}
