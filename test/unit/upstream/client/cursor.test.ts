import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  encodeCursorV1,
  encodeCursorV2,
  formatJsDateUtc,
  parseCursor,
  parseCursorDate,
  ZERO_OID,
} from '../../../../src/upstream/client/cursor.js';
import { ValidationError } from '../../../../src/foundation/errors/index.js';

describe('cursor codec', () => {
  it('encodes v2 as the upstream does', () => {
    const c = encodeCursorV2(Date.UTC(2026, 1, 11, 14, 18, 58, 123), '698c8fd256f71dd42526bfe2');
    const json = Buffer.from(c.slice(3), 'base64url').toString('utf8');
    expect(json).toBe(
      '[{"t":"date","v":"2026-02-11T14:18:58.123Z"},{"t":"str","v":"698c8fd256f71dd42526bfe2"}]',
    );
    expect(c).not.toContain('=');
  });

  it('round-trips v2 at millisecond precision', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 4_102_444_800_000 }),
        fc.stringMatching(/^[0-9a-f]{24}$/),
        (t, id) => {
          expect(parseCursor(encodeCursorV2(t, id))).toEqual({ timeMs: t, id, format: 'v2' });
        },
      ),
    );
  });

  it('parses the server v1 form (JS Date text) and the forged ISO form', () => {
    const server = 'Wed Feb 11 2026 14:18:58 GMT+0000 (Coordinated Universal Time)|698c8fd256f71dd42526bfe2';
    expect(parseCursor(server)).toEqual({
      timeMs: Date.UTC(2026, 1, 11, 14, 18, 58),
      id: '698c8fd256f71dd42526bfe2',
      format: 'v1',
    });
    expect(parseCursor(`2026-02-11T14:18:58.000Z|${ZERO_OID}`)).toEqual({
      timeMs: Date.UTC(2026, 1, 11, 14, 18, 58),
      id: ZERO_OID,
      format: 'v1',
    });
    // A zone offset is applied, not ignored.
    expect(parseCursorDate('Wed Feb 11 2026 16:18:58 GMT+0200 (EET)')).toBe(
      Date.UTC(2026, 1, 11, 14, 18, 58),
    );
  });

  it('encodes v1 in both styles, whatever the process time zone', () => {
    const t = Date.UTC(2026, 1, 11, 14, 18, 58, 999);
    expect(encodeCursorV1(t - 999)).toBe(`2026-02-11T14:18:58.000Z|${ZERO_OID}`);
    expect(encodeCursorV1(t, ZERO_OID, 'date')).toBe(
      `Wed Feb 11 2026 14:18:58 GMT+0000 (Coordinated Universal Time)|${ZERO_OID}`,
    );
    expect(formatJsDateUtc(t)).toMatch(/^Wed Feb 11 2026 14:18:58 GMT\+0000/);
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 4_102_444_800 }), (s) => {
        expect(parseCursor(encodeCursorV1(s * 1000, ZERO_OID, 'date')).timeMs).toBe(s * 1000);
      }),
    );
  });

  it('rejects what is neither format, naming the cursor', () => {
    expect(() => parseCursor('garbage')).toThrow(ValidationError);
    expect(() => parseCursor('v2.!!!')).toThrow(ValidationError);
    expect(() => parseCursor('2026-02-11T14:18:58Z|nothex')).toThrow(/unrecognised cursor/);
    expect(() => encodeCursorV2(NaN)).toThrow(ValidationError);
  });
});
