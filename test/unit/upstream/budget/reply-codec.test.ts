/** Outcomes survive the trip from the fetcher to the caller's process with their class and slot-ness. */
import { describe, expect, it } from 'vitest';
import { decodeReply, encodeFailure, encodeResult } from '../../../../src/upstream/budget/reply-codec.js';
import { isSlotError, markSlotError } from '../../../../src/upstream/client/transport.js';
import type { UpstreamError } from '../../../../src/foundation/errors/index.js';
import { NetworkError, NotFoundError, RateLimitError } from '../../../../src/foundation/errors/index.js';

describe('reply codec', () => {
  it('data, slot errors and whole-request failures round-trip', () => {
    expect(decodeReply(encodeResult('a', { ok: true, data: { items: [1], nextCursor: null } }))).toEqual({
      id: 'a',
      result: { ok: true, data: { items: [1], nextCursor: null } },
    });
    const notFound = markSlotError(
      new NotFoundError('user.getUserById: nope (404)', 404, 'user.getUserById', 'NOT_FOUND'),
    );
    const r = decodeReply(encodeResult('b', { ok: false, error: notFound }));
    if (!('result' in r) || r.result.ok) throw new Error('expected a slot error');
    expect(r.result.error).toBeInstanceOf(NotFoundError);
    expect(r.result.error.code).toBe('NOT_FOUND');
    expect(isSlotError(r.result.error)).toBe(true);
    const limited = decodeReply(
      encodeFailure('c', new RateLimitError('HTTP 429', 429, undefined, undefined, { retryAfterMs: 1500 })),
    );
    if (!('failure' in limited)) throw new Error('expected a failure');
    expect(limited.failure).toBeInstanceOf(RateLimitError);
    expect((limited.failure as UpstreamError).retryAfterMs).toBe(1500);
    expect(isSlotError(limited.failure)).toBe(false);
    const net = decodeReply(encodeFailure('d', new NetworkError('reset', 'http://x')));
    if (!('failure' in net)) throw new Error('expected a failure');
    expect(net.failure).toBeInstanceOf(NetworkError);
    expect(net.failure.retriable).toBe(true);
    expect(() => decodeReply('{"x":1}')).toThrow(/unreadable reply/);
  });
});
