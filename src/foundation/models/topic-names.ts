/**
 * Topic and subject names, in one place: `<prefix>.<resource>` (prefix default `gamedata`), dead letters in
 * `<topic>.dlq`, value subjects `<topic>-value` (Confluent TopicNameStrategy).
 */
import { ConfigError } from '../errors/index.js';
import { RESOURCES } from './resources.js';
import type { ResourceName } from './resources.js';

/** The default topic prefix (env `GAMEDATA_TOPIC_PREFIX`). */
export const DEFAULT_TOPIC_PREFIX = 'gamedata';

// Kafka's legal topic characters; the prefix joins with '.', so it may hold dots itself.
const LEGAL = /^[a-zA-Z0-9._-]+$/;

/**
 * `<prefix>.<resource>`, e.g. `gamedata.users`.
 * @throws ConfigError when the prefix is empty or holds characters Kafka does not allow in topic names.
 */
export function topicName(prefix: string, resource: ResourceName): string {
  if (!LEGAL.test(prefix) || prefix.length > 200) {
    throw new ConfigError(
      `topic prefix must match ${String(LEGAL)} (at most 200 characters), got ${JSON.stringify(prefix)}`,
    );
  }
  return `${prefix}.${resource}`;
}

/** `<topic>.dlq`: where records of `topic` that cannot be encoded go. */
export function dlqTopicName(topic: string): string {
  return `${topic}.dlq`;
}

/** `<topic>-value`: the schema-registry subject of the topic's values. */
export function valueSubjectName(topic: string): string {
  return `${topic}-value`;
}

/** Every topic of a prefix: the six resource topics, then their dead-letter topics. */
export function allTopicNames(prefix: string): { resource: ResourceName; topic: string; dlq: string }[] {
  return RESOURCES.map((resource) => {
    const topic = topicName(prefix, resource);
    return { resource, topic, dlq: dlqTopicName(topic) };
  });
}
