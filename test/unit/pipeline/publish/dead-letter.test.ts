import { describe, expect, it } from 'vitest';
import { buildDeadLetter, HEADER, lineageHeaders } from '../../../../src/pipeline/publish/dead-letter.js';
import { EncodingError, GamedataError } from '../../../../src/foundation/errors/index.js';

const lineage = {
  runId: 'run-1',
  sliceId: 'slice-7',
  sourceOperation: 'transaction.getPaginatedTransactions',
  fetchedAt: 0,
};

describe('buildDeadLetter', () => {
  it('keeps the original JSON as value, _id as key, and says why in headers', () => {
    const record = { _id: 'abc', createdAt: 'soon', extra: [1, 2] };
    const error = new EncodingError('createdAt: expected a date-time string', 'createdAt', {
      reason: 'invalid-date',
    });
    const message = buildDeadLetter({ resource: 'transactions', record, error, lineage });
    expect(message.key).toBe('abc');
    expect(JSON.parse(message.value.toString())).toEqual(record);
    expect(message.headers).toEqual({
      [HEADER.runId]: 'run-1',
      [HEADER.sliceId]: 'slice-7',
      [HEADER.sourceOperation]: 'transaction.getPaginatedTransactions',
      [HEADER.fetchedAt]: '1970-01-01T00:00:00.000Z',
      [HEADER.resource]: 'transactions',
      [HEADER.errorClass]: 'EncodingError',
      [HEADER.errorReason]: 'invalid-date',
      [HEADER.errorMessage]: 'createdAt: expected a date-time string',
      [HEADER.errorPath]: 'createdAt',
    });
  });

  it('has a null key when the record has no usable _id, and survives non-Encoding errors', () => {
    const message = buildDeadLetter({
      resource: 'users',
      record: { name: 'x' },
      error: new GamedataError('boom'),
      lineage,
    });
    expect(message.key).toBeNull();
    expect(message.headers[HEADER.errorClass]).toBe('GamedataError');
    expect(message.headers[HEADER.errorReason]).toBe('not-encodable');
  });

  it('cuts an absurdly large original and flags it instead of failing the send', () => {
    const record = { _id: 'big', blob: 'z'.repeat(500) };
    const message = buildDeadLetter({
      resource: 'users',
      record,
      error: new EncodingError('big', '', { reason: 'too-large' }),
      lineage,
      options: { maxValueBytes: 100 },
    });
    expect(message.value.length).toBe(100);
    expect(message.headers[HEADER.truncated]).toBe('true');
    expect(Number(message.headers[HEADER.originalBytes])).toBe(JSON.stringify(record).length);
  });

  it('writes fetched-at as ISO whatever form it came in', () => {
    expect(lineageHeaders({ ...lineage, fetchedAt: new Date(1000) })[HEADER.fetchedAt]).toBe(
      '1970-01-01T00:00:01.000Z',
    );
    expect(lineageHeaders({ ...lineage, fetchedAt: '2024-01-01T00:00:00Z' })[HEADER.fetchedAt]).toBe(
      '2024-01-01T00:00:00Z',
    );
  });
});
