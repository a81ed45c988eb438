/**
 * Kafka / registry settings for the `schemas` and `topics` commands, read through the project's `loadConfig()`
 * (env > GAMEDATA_CONFIG file > defaults, validated once, one ConfigError listing every problem).
 */
import { loadConfig } from './load-config.js';
import type { ConfigNeed } from './load-config.js';

export interface ServiceEnv {
  /** `KAFKA_BROKERS`, comma-separated host:port (empty when not needed and not set). */
  kafkaBrokers: string[];
  /** `SCHEMA_REGISTRY_URL`, e.g. `http://127.0.0.1:18081/apis/ccompat/v7` (empty when not needed and not set). */
  schemaRegistryUrl: string;
  /** `GAMEDATA_TOPIC_PREFIX`. @default 'gamedata' */
  topicPrefix: string;
}

/**
 * Reads the settings; those named in `need` must be set.
 * @throws ConfigError listing every missing or invalid setting.
 */
export function readServiceEnv(
  need: { kafka?: boolean; registry?: boolean },
  env: NodeJS.ProcessEnv = process.env,
): ServiceEnv {
  const needs: ConfigNeed[] = [];
  if (need.kafka === true) needs.push('kafka');
  if (need.registry === true) needs.push('registry');
  const config = loadConfig({ need: needs, env });
  return {
    kafkaBrokers: config.kafkaBrokers,
    schemaRegistryUrl: config.schemaRegistryUrl ?? '',
    topicPrefix: config.topicPrefix,
  };
}
