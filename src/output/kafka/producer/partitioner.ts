/**
 * Partitions chosen by the project, not by kafkajs: `partitionForKey` (Java-compatible murmur2, what kafkajs' and
 * Java's default partitioners pick) and `givenPartitioner`, the producers' partitioner that takes the partition the
 * message names.
 */
import type { ICustomPartitioner } from 'kafkajs';
import { loadKafkajs } from '../kafkajs-loader.js';
import { murmur2 } from './murmur2.js';

/**
 * The producers' partitioner: every message the project sends names its partition ({@link partitionForKey});
 * kafkajs' default partitioner would first filter the topic's partition list for each message. A message without
 * one goes to the default partitioner.
 */
export const givenPartitioner: ICustomPartitioner = () => {
  const fallback = loadKafkajs().Partitioners.DefaultPartitioner();
  return (args) => args.message.partition ?? fallback(args);
};

/**
 * The partition the producer's default partitioner (Java-compatible murmur2 of the key) picks for a keyed message
 * on a topic of `partitions` partitions; a keyless message takes `fallback`.
 */
export function partitionForKey(key: string | null, partitions: number, fallback: number): number {
  if (key === null) return fallback % partitions;
  // kafkajs' DefaultPartitioner (Java's): toPositive(murmur2(key)) % partitions, without its per-call metadata.
  return (murmur2(key) & 0x7fffffff) % partitions;
}
