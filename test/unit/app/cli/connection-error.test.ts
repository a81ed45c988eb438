/** Issue 48, items 1 and 7: a worker's connection errors are told apart by class and code, not by message text. */
import { describe, expect, it } from 'vitest';
import { isConnectionError } from '../../../../src/app/cli/connection-error.js';
import {
  GamedataError,
  NetworkError,
  ServiceError,
  UpstreamError,
} from '../../../../src/foundation/errors/index.js';

const errno = (code: string, message = 'whatever the text'): Error =>
  Object.assign(new Error(message), { code });
const named = (name: string): Error => Object.assign(new Error('x'), { name });

describe('isConnectionError', () => {
  it.each([
    ['a NetworkError that reached no upstream', new NetworkError('m', 'u', { connectFailure: 'ENOTFOUND' })],
    ['ECONNREFUSED (errno)', errno('ECONNREFUSED')],
    ['ENOTFOUND (errno)', errno('ENOTFOUND')],
    ['ECONNRESET (errno)', errno('ECONNRESET')],
    ['EPIPE (errno)', errno('EPIPE')],
    ['undici connect timeout', errno('UND_ERR_CONNECT_TIMEOUT')],
    ['a kafkajs connection error (by name)', named('KafkaJSConnectionError')],
    ['a kafkajs closed connection (by name)', named('KafkaJSConnectionClosedError')],
    [
      'a ServiceError caused by a refused connection',
      new ServiceError('redis: x', 'redis', { cause: errno('ECONNREFUSED') }),
    ],
    [
      "ioredis's closed connection (no code: matched by text, documented)",
      new Error('Connection is closed.'),
    ],
  ])('%s: yes', (_, error) => {
    expect(isConnectionError(error)).toBe(true);
  });

  it.each([
    // The old regex read these as connection errors from their text alone.
    ['a message that merely says ECONNREFUSED', new GamedataError('upstream said ECONNREFUSED in a record')],
    ['a message that says unreachable', new GamedataError('target unreachable? no, a validation text')],
    ['a NetworkError after connecting (timeout)', new NetworkError('timed out', 'u')],
    ['an HTTP error of the upstream', new UpstreamError('HTTP 503', 503, undefined, undefined)],
    ['a subclass of Error with the ioredis text', new TypeError('Connection is closed.')],
    ['not an Error', 'ECONNREFUSED'],
  ])('%s: no', (_, error) => {
    expect(isConnectionError(error)).toBe(false);
  });
});
