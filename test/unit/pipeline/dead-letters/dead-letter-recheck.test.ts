/** `dlq replay`'s check of each dead letter (issue 48, item 8): read by id where there is such a read, else the stored copy. */
import { describe, expect, it } from 'vitest';
import { EncodingError, NotFoundError, ServiceError } from '../../../../src/foundation/errors/index.js';
import {
  formatDlqReplay,
  parseDeadLetter,
  recheckDeadLetters,
  type DeadLetter,
} from '../../../../src/pipeline/dead-letters/index.js';
import { HEADER } from '../../../../src/pipeline/publish/index.js';

const letter = (id: string | null, record: unknown, offset = '0'): DeadLetter => ({
  partition: 0,
  offset,
  timestamp: 1_000,
  id,
  record,
  reason: 'wrong-type',
});

/** Valid when `ok` is true; else an EncodingError with `reason`. */
const validate = (_resource: string, record: unknown): Promise<unknown> => {
  const r = record as { ok?: boolean; reason?: EncodingError['reason'] };
  return r.ok === true
    ? Promise.resolve(Buffer.alloc(0))
    : Promise.reject(new EncodingError('bad', '$.x', { reason: r.reason ?? 'wrong-type' }));
};

describe('parseDeadLetter', () => {
  it('reads the key as the id, the value as JSON and the reason header; a cut value is unreadable', () => {
    const base = {
      partition: 2,
      offset: '7',
      timestamp: '123',
      headers: { [HEADER.errorReason]: 'invalid-date' },
    };
    expect(
      parseDeadLetter({ ...base, key: Buffer.from('abc'), value: Buffer.from('{"_id":"abc"}') }),
    ).toEqual({
      partition: 2,
      offset: '7',
      timestamp: 123,
      id: 'abc',
      record: { _id: 'abc' },
      reason: 'invalid-date',
    });
    const cut = parseDeadLetter({
      ...base,
      headers: { ...base.headers, [HEADER.truncated]: 'true' },
      key: null,
      value: Buffer.from('{"_id":'),
    });
    expect(cut).toMatchObject({ id: null, record: undefined });
    expect(parseDeadLetter({ ...base, key: null, value: Buffer.from('not json') }).record).toBeUndefined();
  });
});

describe('recheckDeadLetters', () => {
  it('users: reads each record with an id again; a 404 is gone-upstream; one without an id is checked as stored', async () => {
    const asked: string[] = [];
    const out = await recheckDeadLetters(
      'users',
      [
        letter('fixed', { ok: false }),
        letter('gone', { ok: true }),
        letter(null, { ok: false, reason: 'missing-id' }),
      ],
      {
        validate,
        refetch: (_r, id) => {
          asked.push(id);
          return id === 'gone'
            ? Promise.reject(new NotFoundError('no', 404, 'user.getUserById', 'NOT_FOUND'))
            : Promise.resolve({ _id: id, ok: true });
        },
      },
    );
    expect(asked).toEqual(['fixed', 'gone']);
    expect(out.ready).toEqual([{ _id: 'fixed', ok: true }]);
    expect(out.refetched).toBe(1);
    expect(out.left.map((l) => l.reason)).toEqual(['gone-upstream', 'missing-id']);
  });

  it("transactions (no read by id): the stored copy against today's schema; unreadable and non-records stay", async () => {
    const out = await recheckDeadLetters(
      'transactions',
      [
        letter('a', { _id: 'a', ok: true }),
        letter('b', undefined),
        letter('c', null),
        letter('d', { ok: false }),
      ],
      { validate, refetch: () => Promise.reject(new ServiceError('never asked', 'upstream')) },
    );
    expect(out.ready).toEqual([{ _id: 'a', ok: true }]);
    expect(out.refetched).toBe(0);
    expect(out.left.map((l) => l.reason)).toEqual(['unreadable', 'not-a-record', 'wrong-type']);
  });

  it("an upstream or registry failure that is not a record's own problem stops the check", async () => {
    await expect(
      recheckDeadLetters('parties', [letter('p', {})], {
        validate,
        refetch: () => Promise.reject(new ServiceError('upstream down', 'upstream', { retriable: true })),
      }),
    ).rejects.toBeInstanceOf(ServiceError);
    await expect(
      recheckDeadLetters('donations', [letter('d', {})], {
        validate: () => Promise.reject(new ServiceError('registry down', 'schema-registry')),
      }),
    ).rejects.toBeInstanceOf(ServiceError);
  });
});

describe('formatDlqReplay', () => {
  it('says how many were republished and how many stay, by reason', () => {
    expect(
      formatDlqReplay({
        resource: 'users',
        dlqTopic: 'g.users.dlq',
        deadLetters: 9,
        inRange: 7,
        encodable: 3,
        refetched: 3,
        republished: 2,
        alreadyRepublished: 1,
        deadLetteredAgain: 0,
        left: { 'wrong-type': 3, 'missing-id': 1 },
      }),
    ).toBe(
      'dlq replay users: 7 of 9 dead letters in range; 3 encode now (3 read again from the upstream): republished 2, ' +
        '1 already republished; 4 left in g.users.dlq: 1 missing-id, 3 wrong-type',
    );
  });
});

describe('stored copies of changing resources (no going back in time)', () => {
  it('a stored copy whose entity has a newer version seen since stays as superseded; refetched ones are not asked', async () => {
    const asked: unknown[] = [];
    const out = await recheckDeadLetters(
      'elections',
      [letter('e1', { _id: 'e1', ok: true }), letter('e2', { _id: 'e2', ok: true })],
      {
        validate,
        newerSeen: (_r, records) => {
          asked.push(...records);
          return Promise.resolve(records.map((r) => r['_id'] === 'e1'));
        },
      },
    );
    expect(asked).toHaveLength(2);
    expect(out.ready).toEqual([{ _id: 'e2', ok: true }]);
    expect(out.left.map((l) => [l.letter.id, l.reason])).toEqual([['e1', 'superseded']]);
    // Immutable resources are never asked.
    let immutable = 0;
    await recheckDeadLetters('donations', [letter('d', { ok: true })], {
      validate,
      newerSeen: (_r, records) => {
        immutable += records.length;
        return Promise.resolve(records.map(() => true));
      },
    });
    expect(immutable).toBe(0);
  });
});
