/**
 * The client's cursor codec (src/upstream/client/cursor.ts) and the simulator's (tools/simulator/cursor.ts) are two independent
 * implementations of the same wire format on purpose: the simulator is the oracle the client is tested against. This
 * test runs each against the other, both ways, for v2 and both v1 forms, over arbitrary times and ObjectIds.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  encodeCursorV1 as clientEncodeV1,
  encodeCursorV2 as clientEncodeV2,
  parseCursor,
} from '../../../../src/upstream/client/cursor.js';
import {
  decodeCursor,
  encodeCursorV1 as simulatorEncodeV1,
  encodeCursorV2 as simulatorEncodeV2,
} from '../../../../tools/simulator/cursor.js';

// Years 1970-9999: the range both codecs' date texts (ISO and JS Date.toString) cover.
const timeMs = fc.integer({ min: 0, max: 253_402_300_799_999 });
const oid = fc.stringMatching(/^[0-9a-f]{24}$/);
const wholeSecond = (ms: number): number => Math.floor(ms / 1000) * 1000;

describe('client and simulator cursor codecs agree', () => {
  it('v2: client-encoded cursors decode in the simulator to the same bound, and back', () => {
    fc.assert(
      fc.property(timeMs, oid, (t, id) => {
        expect(decodeCursor(clientEncodeV2(t, id))).toEqual({ format: 'v2', timeMs: t, oid: id });
        expect(parseCursor(simulatorEncodeV2(t, id))).toEqual({ format: 'v2', timeMs: t, id });
        // Same bytes on the wire, not only the same meaning.
        expect(clientEncodeV2(t, id)).toBe(simulatorEncodeV2(t, id));
      }),
    );
  });

  it("v1 (the server's JS-date form): both codecs read each other's text to the same whole second", () => {
    fc.assert(
      fc.property(timeMs, oid, (t, id) => {
        expect(decodeCursor(clientEncodeV1(t, id, 'date'))).toEqual({
          format: 'v1',
          timeMs: wholeSecond(t),
          oid: id,
        });
        expect(parseCursor(simulatorEncodeV1(t, id))).toEqual({ format: 'v1', timeMs: wholeSecond(t), id });
      }),
    );
  });

  it('v1 (the ISO form older clients forge): the simulator reads the client text to the whole second', () => {
    fc.assert(
      fc.property(timeMs, oid, (t, id) => {
        expect(decodeCursor(clientEncodeV1(t, id, 'iso'))).toEqual({
          format: 'v1',
          timeMs: wholeSecond(t),
          oid: id,
        });
      }),
    );
  });
});
