/** Issue 48: whether a failed exchange reached the upstream, from codes (undici's `fetch failed` and its causes). */
import { describe, expect, it } from 'vitest';
import { connectFailureCode } from '../../../../src/upstream/client/connect-failure.js';

const errno = (code: string): Error => Object.assign(new Error(`connect ${code}`), { code });

describe('connectFailureCode', () => {
  it("reads undici's cause chain: TypeError('fetch failed') { cause: ECONNREFUSED }", () => {
    expect(connectFailureCode(new TypeError('fetch failed', { cause: errno('ECONNREFUSED') }))).toBe(
      'ECONNREFUSED',
    );
  });
  it('reads an AggregateError of several addresses (happy eyeballs)', () => {
    const agg = new AggregateError([errno('EHOSTUNREACH'), errno('ECONNREFUSED')], '');
    expect(connectFailureCode(new TypeError('fetch failed', { cause: agg }))).toBe('EHOSTUNREACH');
  });
  it.each(['ENOTFOUND', 'EAI_AGAIN', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT'])(
    '%s: no connection',
    (code) => {
      expect(connectFailureCode(errno(code))).toBe(code);
    },
  );
  it.each(['ECONNRESET', 'UND_ERR_SOCKET', 'ETIMEDOUT'])('%s: the connection was made (reached)', (code) => {
    expect(connectFailureCode(new TypeError('fetch failed', { cause: errno(code) }))).toBeUndefined();
  });
  it('never reads text', () => {
    expect(connectFailureCode(new Error('connect ECONNREFUSED 127.0.0.1:1'))).toBeUndefined();
    expect(connectFailureCode('ECONNREFUSED')).toBeUndefined();
  });
});
