import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { parseDateTime } from '../../../../src/foundation/models/index.js';

/** What `Date.parse` alone says (the reference the hand-read canonical form must agree with). */
const reference = (s: string): number | undefined => {
  const ms = Date.parse(s);
  return Number.isFinite(ms) ? ms : undefined;
};

describe('parseDateTime', () => {
  it('reads every date toISOString writes as Date does', () => {
    fc.assert(
      fc.property(fc.date({ min: new Date(-62e12), max: new Date(25e13), noInvalidDate: true }), (d) => {
        expect(parseDateTime(d.toISOString())).toBe(d.getTime());
      }),
      { numRuns: 5000 },
    );
  });

  it('agrees with Date.parse on any string of the canonical shape, fields in range or not (property)', () => {
    const ch = fc.constantFrom(...'0123456789', '0', '1', '2', '9', 'a', ' ', '-');
    const n = (k: number) => fc.array(ch, { minLength: k, maxLength: k }).map((a) => a.join(''));
    const shaped = fc
      .tuple(n(4), n(2), n(2), n(2), n(2), n(2), n(3), fc.constantFrom('Z', 'Z', 'z', '+'))
      .map(([y, mo, d, h, mi, s, ms, z]) => `${y}-${mo}-${d}T${h}:${mi}:${s}.${ms}${z}`);
    fc.assert(
      fc.property(shaped, (s) => {
        expect(parseDateTime(s)).toBe(reference(s));
      }),
      { numRuns: 20_000 },
    );
  });

  it('agrees with Date.parse at the edges: leap days, day 31, hour 24, years before 100, other forms', () => {
    for (const s of [
      '2024-02-29T00:00:00.000Z',
      '2023-02-29T00:00:00.000Z',
      '1900-02-29T12:00:00.000Z',
      '2000-02-29T12:00:00.000Z',
      '2024-04-31T00:00:00.000Z',
      '2024-12-31T23:59:59.999Z',
      '2024-01-01T24:00:00.000Z',
      '0099-01-01T00:00:00.000Z',
      '0100-01-01T00:00:00.000Z',
      '2024-01-01T00:00:60.000Z',
      '2024-01-01T00:00:00Z',
      '2024-01-01T00:00:00.000+02:00',
      'Mon, 01 Jan 2024 00:00:00 GMT',
      'not a date',
    ])
      expect(parseDateTime(s), s).toBe(reference(s));
  });
});
