/**
 * One Redis connection as the pipeline uses it (no per-request retry limit, so BullMQ's blocking commands wait out a
 * reconnect). Its own module so light commands (`status`, `dedup`, `tail`) connect without loading the pipeline
 * runtime (kafkajs, the registry client, the API client).
 */
import { Redis } from 'ioredis';

export function connectRedis(url: string): Redis {
  return new Redis(url, { maxRetriesPerRequest: null, lazyConnect: false });
}
