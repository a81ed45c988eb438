/**
 * Issue 48, item 7: whether a failure means "another producer of the transactional.id fenced this one" is decided by
 * class, the pool's flag and kafkajs' protocol type along the cause chain, never by the message (but for the one code
 * kafkajs 2.2.4 does not know). One case per error class.
 */
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import {
  ControlCallTimeoutError,
  PoolCommitError,
  ProducerReplacedError,
  ServiceError,
  SliceFencedError,
} from '../../../../../src/foundation/errors/index.js';
import { isFencingError } from '../../../../../src/output/kafka/transactions/slice-fencing.js';
import { toKafkaError } from '../../../../../src/output/kafka/kafka-error.js';

const require = createRequire(import.meta.url);
const errors = require('kafkajs/src/errors') as {
  KafkaJSProtocolError: new (e: { message: string; type: string; code: number; retriable: boolean }) => Error;
  KafkaJSNonRetriableError: new (e: Error, o?: { cause?: Error }) => Error;
  KafkaJSNumberOfRetriesExceeded: new (
    e: Error,
    o: { retryCount: number; retryTime: number; cause?: Error },
  ) => Error;
};
const { createErrorFromCode } = require('kafkajs/src/protocol/error') as {
  createErrorFromCode: (code: number) => Error;
};

describe('isFencingError', () => {
  it('KafkaJSProtocolError INVALID_PRODUCER_EPOCH (47) and INVALID_PRODUCER_ID_MAPPING (49): fenced', () => {
    expect(isFencingError(createErrorFromCode(47))).toBe(true);
    expect(isFencingError(createErrorFromCode(49))).toBe(true);
  });

  it("KafkaJSNonRetriableError and KafkaJSNumberOfRetriesExceeded (kafkajs' retrier) around one: fenced", () => {
    const epoch = createErrorFromCode(47);
    expect(isFencingError(new errors.KafkaJSNonRetriableError(epoch, { cause: epoch }))).toBe(true);
    expect(
      isFencingError(
        new errors.KafkaJSNumberOfRetriesExceeded(epoch, { retryCount: 5, retryTime: 300, cause: epoch }),
      ),
    ).toBe(true);
  });

  it('PRODUCER_FENCED (90), which kafkajs 2.2.4 does not know: fenced by the code its message keeps', () => {
    const unknown = createErrorFromCode(90);
    expect((unknown as Error & { type?: string }).type).toBe('KAFKAJS_UNKNOWN_ERROR_CODE');
    expect(isFencingError(unknown)).toBe(true);
    expect(isFencingError(createErrorFromCode(91))).toBe(false);
  });

  it('a ServiceError made by toKafkaError keeps the answer: fenced through its cause', () => {
    expect(isFencingError(toKafkaError(createErrorFromCode(47), ['b:1'], 'committing'))).toBe(true);
    expect(isFencingError(toKafkaError(createErrorFromCode(51), ['b:1'], 'committing'))).toBe(false);
  });

  it('SliceFencedError: fenced; PoolCommitError: its `fenced` flag, set where the pool made it', () => {
    expect(isFencingError(new SliceFencedError('taken', 's1'))).toBe(true);
    const replaced = new ProducerReplacedError('tx.m0.0');
    expect(isFencingError(new PoolCommitError(replaced, true))).toBe(true);
    expect(isFencingError(new PoolCommitError(new ServiceError('pool closed', 'kafka'), false))).toBe(false);
  });

  it('other protocol errors, deadlines and errors whose text merely says "fenced" or "old epoch": not fenced', () => {
    expect(isFencingError(createErrorFromCode(51))).toBe(false); // CONCURRENT_TRANSACTIONS
    expect(isFencingError(new ControlCallTimeoutError('EndTxn past its deadline'))).toBe(false);
    expect(isFencingError(new ServiceError('the producer was fenced, says the text', 'kafka'))).toBe(false);
    expect(
      isFencingError(
        new errors.KafkaJSProtocolError({
          message: 'Producer attempted an operation with an old epoch',
          type: 'INVALID_RECORD',
          code: 87,
          retriable: false,
        }),
      ),
    ).toBe(false);
  });
});
