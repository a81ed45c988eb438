/**
 * Kafka / registry settings from the environment, for the `schemas` and `topics` commands. One small function so it
 * can be swapped for `loadConfig()` (src/config) without touching the commands' logic.
 */
import { ConfigError } from '../errors.js';
import { DEFAULT_TOPIC_PREFIX } from './topic-names.js';

export interface ServiceEnv {
  /** `KAFKA_BROKERS`, comma-separated host:port. */
  kafkaBrokers: string[];
  /** `SCHEMA_REGISTRY_URL`, e.g. `http://127.0.0.1:18081/apis/ccompat/v7`. */
  schemaRegistryUrl: string;
  /** `GAMEDATA_TOPIC_PREFIX`. @default 'gamedata' */
  topicPrefix: string;
}

/**
 * Reads the settings `need`s; one ConfigError lists every missing one.
 * @throws ConfigError
 */
export function readServiceEnv(
  need: { kafka?: boolean; registry?: boolean },
  env: NodeJS.ProcessEnv = process.env,
): ServiceEnv {
  const issues: string[] = [];
  const brokers = (env['KAFKA_BROKERS'] ?? '')
    .split(',')
    .map((b) => b.trim())
    .filter((b) => b !== '');
  const url = (env['SCHEMA_REGISTRY_URL'] ?? '').trim();
  if (need.kafka === true && brokers.length === 0) issues.push('KAFKA_BROKERS is not set (e.g. 127.0.0.1:19092)');
  if (need.registry === true && url === '') {
    issues.push('SCHEMA_REGISTRY_URL is not set (e.g. http://127.0.0.1:18081/apis/ccompat/v7)');
  }
  if (issues.length > 0) throw new ConfigError('missing settings', issues);
  return {
    kafkaBrokers: brokers,
    schemaRegistryUrl: url,
    topicPrefix: (env['GAMEDATA_TOPIC_PREFIX'] ?? '').trim() || DEFAULT_TOPIC_PREFIX,
  };
}
