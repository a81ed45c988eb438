/** Issue 48, item 7: toKafkaError decides "unreachable" and "missing topic" by class, code and type, not by text. */
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { toKafkaError } from '../../../../src/output/kafka/kafka-error.js';

const require = createRequire(import.meta.url);
const errors = require('kafkajs/src/errors') as {
  KafkaJSConnectionError: new (message: string, o?: { code?: string }) => Error;
  KafkaJSConnectionClosedError: new (message: string) => Error;
  KafkaJSNumberOfRetriesExceeded: new (e: Error, o: { retryCount: number; retryTime: number }) => Error;
  KafkaJSProtocolError: new (e: { message: string; type: string; code: number; retriable: boolean }) => Error;
};
const unreachable = (e: unknown): boolean =>
  toKafkaError(e, ['b:1'], 'x').message.startsWith('Kafka unreachable');

describe('toKafkaError classification', () => {
  it('KafkaJSConnectionError, KafkaJSConnectionClosedError: unreachable, whatever their text', () => {
    expect(unreachable(new errors.KafkaJSConnectionError('it broke'))).toBe(true);
    expect(unreachable(new errors.KafkaJSConnectionClosedError('gone'))).toBe(true);
  });

  it('a connection error under KafkaJSNumberOfRetriesExceeded (its retries spent): unreachable', () => {
    const spent = new errors.KafkaJSNumberOfRetriesExceeded(new errors.KafkaJSConnectionError('it broke'), {
      retryCount: 5,
      retryTime: 300,
    });
    expect(unreachable(spent)).toBe(true);
  });

  it('an errno code on the error: unreachable', () => {
    expect(unreachable(Object.assign(new Error('socket said no'), { code: 'ECONNREFUSED' }))).toBe(true);
  });

  it('a protocol error whose message merely names ECONNREFUSED is not "unreachable"', () => {
    const e = new errors.KafkaJSProtocolError({
      message: 'record for topic ECONNREFUSED-audit is invalid',
      type: 'INVALID_RECORD',
      code: 87,
      retriable: false,
    });
    expect(unreachable(e)).toBe(false);
  });

  it('UNKNOWN_TOPIC_OR_PARTITION by its type, whatever the text: the missing-topic hint', () => {
    const e = new errors.KafkaJSProtocolError({
      message: 'some broker wording',
      type: 'UNKNOWN_TOPIC_OR_PARTITION',
      code: 3,
      retriable: true,
    });
    expect(toKafkaError(e, ['b:1'], 'sending').message).toContain('run `gamedata topics create`');
    const other = new errors.KafkaJSProtocolError({
      message: 'mentions UNKNOWN_TOPIC in passing',
      type: 'INVALID_REQUEST',
      code: 42,
      retriable: false,
    });
    expect(toKafkaError(other, ['b:1'], 'sending').message).not.toContain('topics create');
  });
});
