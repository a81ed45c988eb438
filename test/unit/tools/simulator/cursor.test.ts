import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  decodeCursor,
  encodeCursorV1,
  encodeCursorV2,
  formatJsDateUtc,
  parseV1Date,
} from '../../../../tools/simulator/cursor.js';
import { ValidationError } from '../../../../src/foundation/errors/index.js';

const oid = fc.stringMatching(/^[0-9a-f]{24}$/);
const time = fc.integer({ min: Date.parse('2020-01-01T00:00:00Z'), max: Date.parse('2030-01-01T00:00:00Z') });

describe('v2 cursor', () => {
  it('has the upstream shape: v2. + unpadded base64url of [{t:date},{t:str}]', () => {
    const c = encodeCursorV2(Date.parse('2026-10-31T12:00:00.123Z'), '698c8fd256f71dd42526bfe2');
    expect(c.startsWith('v2.')).toBe(true);
    expect(c).not.toMatch(/[=+/]/);
    expect(JSON.parse(Buffer.from(c.slice(3), 'base64url').toString())).toEqual([
      { t: 'date', v: '2026-10-31T12:00:00.123Z' },
      { t: 'str', v: '698c8fd256f71dd42526bfe2' },
    ]);
  });

  it('round-trips any instant and id at millisecond precision', () => {
    fc.assert(
      fc.property(time, oid, (t, id) => {
        expect(decodeCursor(encodeCursorV2(t, id))).toEqual({ format: 'v2', timeMs: t, oid: id });
      }),
    );
  });

  it('rejects payloads that are not the v2 shape', () => {
    expect(() => decodeCursor('v2.!!!')).toThrow(ValidationError);
    expect(() => decodeCursor(`v2.${Buffer.from('[1,2]').toString('base64url')}`)).toThrow(/first element/);
    expect(() => decodeCursor('garbage')).toThrow(ValidationError);
  });
});

describe('v1 cursor', () => {
  it('prints JavaScript Date.toString() in UTC, second precision', () => {
    const t = Date.parse('2026-02-11T14:18:58.734Z');
    expect(formatJsDateUtc(t)).toBe('Wed Feb 11 2026 14:18:58 GMT+0000 (Coordinated Universal Time)');
    expect(encodeCursorV1(t, '698c8fd256f71dd42526bfe2')).toBe(
      'Wed Feb 11 2026 14:18:58 GMT+0000 (Coordinated Universal Time)|698c8fd256f71dd42526bfe2',
    );
  });

  it('decodes emitted and forged forms to the whole second', () => {
    const second = Date.parse('2026-02-11T14:18:58.000Z');
    expect(
      decodeCursor('Wed Feb 11 2026 14:18:58 GMT+0000 (Coordinated Universal Time)|698C8FD256F71DD42526BFE2'),
    ).toEqual({
      format: 'v1',
      timeMs: second,
      oid: '698c8fd256f71dd42526bfe2',
    });
    expect(decodeCursor('2026-02-11T14:18:58.000Z|000000000000000000000000')).toEqual({
      format: 'v1',
      timeMs: second,
      oid: '000000000000000000000000',
    });
    expect(decodeCursor('2026-02-11T14:18:58.999Z|000000000000000000000000').timeMs).toBe(second);
  });

  it('round-trips through the emitted text for any instant (to the second)', () => {
    fc.assert(
      fc.property(time, oid, (t, id) => {
        expect(decodeCursor(encodeCursorV1(t, id))).toEqual({
          format: 'v1',
          timeMs: Math.floor(t / 1000) * 1000,
          oid: id,
        });
      }),
    );
  });

  it('parses JS date text even with another zone label, and refuses non-dates', () => {
    expect(parseV1Date('Wed Feb 11 2026 14:18:58 GMT+0000 (Greenwich Mean Time)')).toBe(
      Date.parse('2026-02-11T14:18:58Z'),
    );
    expect(parseV1Date('not a date')).toBeUndefined();
    expect(() => decodeCursor('yesterday|000000000000000000000000')).toThrow(/v1 date/);
  });
});

describe('isoString', () => {
  it('equals Date.prototype.toISOString for any instant of years 1970-2100', async () => {
    const { isoString } = await import('../../../../tools/simulator/internal/iso-string.js');
    fc.assert(
      fc.property(fc.integer({ min: 0, max: Date.parse('2100-12-31T23:59:59.999Z') }), (ms) => {
        expect(isoString(ms)).toBe(new Date(ms).toISOString());
      }),
      { numRuns: 5000 },
    );
    for (const edge of [
      '2024-02-29T23:59:59.999Z',
      '2000-03-01T00:00:00.000Z',
      '1970-01-01T00:00:00.000Z',
      '2026-12-31T23:59:59.999Z',
    ])
      expect(isoString(Date.parse(edge))).toBe(edge);
  });
});
