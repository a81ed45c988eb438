/**
 * The one place a kafkajs client is made (`createKafkaClient`): every producer, consumer and admin of `output/kafka/` comes
 * from it. Creating a client installs the project's kafkajs patches first (`kafkajs-patches/`, idempotent), then
 * loads kafkajs (`kafkajs-loader.ts`): a patch that replaces a module kafkajs binds when it loads must be in place
 * before that load.
 */
import type { Kafka as KafkaClient, LogEntry, SASLOptions } from 'kafkajs';
import { loadKafkajs } from './kafkajs-loader.js';
import { installKafkajsPatches } from './kafkajs-patches/index.js';
import type { ResolvedKafkaOptions } from './kafka-options.js';
import { withOauthbearerAuthenticator } from './oauthbearer-authenticator.js';

/** A kafkajs client for resolved options (kafkajs log lines go to `logger`, never to the console). */
export function createKafkaClient(
  options: ResolvedKafkaOptions,
  overrides: {
    clientId?: string;
    retry?: { retries: number; initialRetryTime: number; maxRetryTime: number };
  } = {},
): KafkaClient {
  const logger = options.logger;
  // Every patch of the set (kafkajs-patches/index.ts), before kafkajs is loaded: some replace a module it binds then.
  installKafkajsPatches();
  const { Kafka, logLevel: KafkaLogLevel } = loadKafkajs();
  return new Kafka({
    clientId: overrides.clientId ?? options.clientId,
    brokers: [...options.brokers],
    connectionTimeout: options.connectionTimeoutMs,
    requestTimeout: options.requestTimeoutMs,
    ...(options.ssl === undefined ? {} : { ssl: options.ssl }),
    // kafkajs types SASL per mechanism; ours carries the mechanism as a value. OAUTHBEARER reads the broker's answer
    // (oauthbearer-authenticator.ts: a refused token is one line, not a dropped connection)
    ...(options.sasl === undefined
      ? {}
      : {
          sasl: (options.sasl.mechanism === 'oauthbearer'
            ? withOauthbearerAuthenticator(options.sasl)
            : options.sasl) as SASLOptions,
        }),
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

/** The kafkajs client the sink needs (tests pass a recording fake). */
export type SinkKafkaClient = Pick<KafkaClient, 'producer' | 'admin'>;
