/** Which slice failures spend an attempt (BullMQ retries after a backoff) and which fail the run at once. */
import { KafkaJSConnectionError, KafkaJSNonRetriableError } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import {
  AbortedError,
  ConfigError,
  KafkajsPatchError,
  MissingResultError,
  NetworkError,
  RateLimitError,
  ServiceError,
  UpstreamError,
  ValidationError,
} from '../../../../src/foundation/errors/index.js';
import { isRetriableSliceError } from '../../../../src/pipeline/slice/slice-contract.js';
import { toKafkaError } from '../../../../src/output/kafka/kafka-error.js';

type ErrorClass = new (...args: unknown[]) => Error;
const make = (cls: unknown, ...args: unknown[]): Error => new (cls as ErrorClass)(...args);

describe('isRetriableSliceError', () => {
  it('fails at once what another attempt cannot help: the upstream refused or garbled the slice, a setting, the install, security', () => {
    const atOnce: Error[] = [
      new UpstreamError('bad request', 400, 'transaction.getPaginatedTransactions', 'BAD_REQUEST'),
      new ValidationError('items[3].createdAt is not a date', 'items[3].createdAt'),
      new MissingResultError('no result for slot 4'),
      new ConfigError('bad setting', ['GAMEDATA_X: not a number']),
      new KafkajsPatchError('kafkajs 2.2.3 expected'),
      toKafkaError(
        make(KafkaJSConnectionError, 'Connection error: self-signed certificate in certificate chain'),
        ['b:9093'],
        'producing',
      ),
    ];
    for (const e of atOnce) expect(isRetriableSliceError(e), `${e.name}: ${e.message}`).toBe(false);
  });

  it('spends an attempt on what may heal: retriable errors, and service or library errors that only gave up', () => {
    const again: unknown[] = [
      new RateLimitError('429', 429, undefined, undefined),
      new UpstreamError('bad gateway', 502, undefined, undefined),
      new NetworkError('reset', 'http://127.0.0.1:1/trpc'),
      // a kafkajs error its own retries gave up on, while a broker restarted
      toKafkaError(
        make(
          KafkaJSNonRetriableError,
          'The producer attempted a transactional operation in an invalid state',
        ),
        ['b:9092'],
        'committing a transaction',
      ),
      new ServiceError('Redis: Connection is closed.', 'redis'),
      new Error('Missing key for job 7. moveToDelayed'),
      new AbortedError('The operation was aborted due to timeout'),
      'a string',
    ];
    for (const e of again) expect(isRetriableSliceError(e), String(e)).toBe(true);
  });
});
