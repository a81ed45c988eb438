/**
 * One Redis connection as the pipeline uses it (no per-request retry limit, so BullMQ's blocking commands wait out a
 * reconnect). Its own module so light commands (`status`, `dedup`, `tail`) connect without loading the pipeline
 * runtime (kafkajs, the registry client, the API client).
 */
import type { ConnectionOptions } from 'node:tls';
import { Redis } from 'ioredis';
import { processSecurity } from '../../foundation/config/index.js';
import type { RedisClientSecurity } from '../../foundation/config/index.js';

/**
 * A connection to `url`. `redis://user:password@` (an ACL user) and `rediss://` (TLS) come from the URL (ioredis
 * reads both); the CA of a private TLS Redis from `GAMEDATA_REDIS_TLS_CA_LOCATION` (this process's settings).
 * BullMQ duplicates this connection for its blocking clients with the same options. `autoPipelining`: commands
 * issued in one tick go out in one write (the slices' dedup, intent and counter calls; never for BullMQ's).
 */
export function connectRedis(url: string, options: { autoPipelining?: boolean } = {}): Redis {
  return new Redis(url, {
    maxRetriesPerRequest: null,
    lazyConnect: false,
    ...(options.autoPipelining === true ? { enableAutoPipelining: true } : {}),
    ...redisTlsOptions(url),
  });
}

/**
 * The ioredis `tls` option for `url`: none for `redis://`; for `rediss://` the configured CA (else ioredis's default,
 * the system CAs).
 * @default security this process's settings
 */
export function redisTlsOptions(
  url: string,
  security: RedisClientSecurity = processSecurity().redis,
): { tls?: ConnectionOptions } {
  // the scheme is case-insensitive (`REDISS://` is TLS to ioredis too): its CA must not be dropped
  if (!/^rediss:/i.test(url)) return {};
  return security.ca === undefined ? { tls: {} } : { tls: { ca: security.ca } };
}
