/**
 * `toKafkaError`: a kafkajs failure as the project's `ServiceError`, naming the brokers and what was being done;
 * security failures (credentials, certificates) as one non-retriable line naming the settings to check.
 */
import { ServiceError } from '../../foundation/errors/index.js';
import { securityFailure } from '../../foundation/config/index.js';

/** What to check for each kind of security failure (settings names). */
export const KAFKA_SECURITY_HINTS = {
  authentication: 'GAMEDATA_KAFKA_SASL_MECHANISM, GAMEDATA_KAFKA_SASL_USERNAME, GAMEDATA_KAFKA_SASL_PASSWORD',
  authorisation: 'the ACLs of the SASL user or client certificate',
  certificate:
    'GAMEDATA_KAFKA_SSL_CA_LOCATION, GAMEDATA_KAFKA_SSL_CERTIFICATE_LOCATION, GAMEDATA_KAFKA_SSL_KEY_LOCATION',
  'host name': "that KAFKA_BROKERS and the advertised listeners use the names in the brokers' certificates",
  'TLS handshake': 'GAMEDATA_KAFKA_SECURITY_PROTOCOL and the port',
} as const;

/**
 * Whether `error` (or a cause) is kafkajs' "Failed to find group coordinator": no broker named a coordinator within
 * kafkajs' retries, because it was being elected (a broker had just restarted). kafkajs makes it a
 * KafkaJSNonRetriableError, and its retry loop wraps it in another; it failed a secured e2e's slices for good at their
 * transaction's commit right after the broker came back (2026-11-28). The next attempt finds the coordinator.
 */
function coordinatorNotFound(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e !== null && typeof e === 'object' && depth < 5; depth += 1) {
    if ((e as { name?: unknown }).name === 'KafkaJSGroupCoordinatorNotFound') return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/** kafkajs's errors for a broker it cannot reach or lost (their `name`, a class property). */
const CONNECTION_ERROR_NAMES: ReadonlySet<string> = new Set([
  'KafkaJSConnectionError',
  'KafkaJSConnectionClosedError',
  'KafkaJSBrokerNotFound',
]);
/** Errno codes of a connection refused, not found, not routed or lost (a socket's own error). */
const CONNECTION_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
]);

/** The errors of `error`'s cause chain (kafkajs wraps: KafkaJSNumberOfRetriesExceeded, KafkaJSNonRetriableError). */
function causeChain(error: unknown): { name?: unknown; code?: unknown; type?: unknown }[] {
  const chain: { name?: unknown; code?: unknown; type?: unknown }[] = [];
  for (let e: unknown = error, depth = 0; e !== null && typeof e === 'object' && depth < 5; depth += 1) {
    chain.push(e);
    e = (e as { cause?: unknown }).cause;
  }
  return chain;
}

/**
 * Whether the failure is a broker unreachable or lost, and whether it is kafkajs's UNKNOWN_TOPIC_OR_PARTITION, by class
 * name, errno `code` and protocol `type` along the cause chain: never by the message (issue 48, item 7).
 */
function classify(error: unknown): { unreachable: boolean; missingTopic: boolean } {
  const chain = causeChain(error);
  return {
    unreachable: chain.some(
      (e) =>
        (typeof e.name === 'string' && CONNECTION_ERROR_NAMES.has(e.name)) ||
        (typeof e.code === 'string' && CONNECTION_CODES.has(e.code)),
    ),
    missingTopic: chain.some((e) => e.type === 'UNKNOWN_TOPIC_OR_PARTITION'),
  };
}

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
      security: security.kind,
    });
  const { unreachable, missingTopic } = classify(error);
  // kafkajs gives up on a retriable error (CONCURRENT_TRANSACTIONS while the coordinator moves, a leader election)
  // with KafkaJSNumberOfRetriesExceeded, which says `retriable: false`: its own retries are spent, not the error's
  // nature. The caller's retry (a slice's next attempt) may still succeed, so the cause decides.
  const cause = (error as { cause?: { retriable?: boolean } } | null)?.cause;
  const retriesSpent =
    (e?.name === 'KafkaJSNumberOfRetriesExceeded' && cause?.retriable !== false) ||
    coordinatorNotFound(error);
  return new ServiceError(
    unreachable
      ? `Kafka unreachable at ${brokers.join(',')} while ${action}: ${detail}`
      : `Kafka failed while ${action}: ${detail}${missingTopic ? ' (does the topic exist? run `gamedata topics create`)' : ''}`,
    'kafka',
    { cause: error, retriable: unreachable || retriesSpent || e?.retriable !== false },
  );
}
