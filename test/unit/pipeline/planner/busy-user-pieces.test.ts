/** A busy user's walk cut into time pieces from the feed head's rate: exact tiling, bounded, only for busy users. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  BUSY_USER_MIN_HEAD_ROWS,
  BUSY_USER_MIN_ROWS,
  BUSY_USER_PIECE_ROWS,
  BUSY_USER_PIECES,
  busyUserPieces,
  type FeedHead,
} from '../../../../src/pipeline/planner/busy-user-pieces.js';

const head = (o: Partial<FeedHead> = {}): FeedHead => ({
  rows: 100,
  spanMs: 3_600_000,
  users: new Map(),
  windowRows: 12_000,
  ...o,
});

describe('busyUserPieces', () => {
  it('tiles the range exactly, newest first, at most BUSY_USER_PIECES, the newest the time of BUSY_USER_PIECE_ROWS, each older one twice the newer', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 1e12 }),
        fc.integer({ min: 1, max: 1e11 }),
        fc.integer({ min: 0, max: 100 }),
        fc.integer({ min: 1, max: 1e9 }),
        fc.integer({ min: 0, max: 1e7 }),
        (start, width, headRows, spanMs, windowRows) => {
          const range = { start, end: start + width };
          const h = head({ spanMs, windowRows });
          const pieces = busyUserPieces(range, headRows, h);
          expect(pieces.length).toBeGreaterThanOrEqual(1);
          expect(pieces.length).toBeLessThanOrEqual(BUSY_USER_PIECES);
          expect(pieces[0]?.end).toBe(range.end);
          expect(pieces.at(-1)?.start).toBe(range.start);
          for (let i = 1; i < pieces.length; i++) expect(pieces[i]?.end).toBe(pieces[i - 1]?.start);
          for (const p of pieces) expect(p.end).toBeGreaterThan(p.start);
          const userRows = (headRows * windowRows) / h.rows;
          if (userRows < BUSY_USER_MIN_ROWS || headRows < BUSY_USER_MIN_HEAD_ROWS)
            expect(pieces).toEqual([range]);
          const pieceMs = Math.max(1, Math.round((BUSY_USER_PIECE_ROWS * spanMs) / Math.max(1, headRows)));
          pieces.slice(0, -1).forEach((p, i) => expect(p.end - p.start).toBe(pieceMs * 2 ** i));
        },
      ),
    );
  });

  it("cuts a small full history's busiest user into pieces from the head's rate, each twice the newer", () => {
    // seed 7: 9 of the head's 100 rows over its 2.18 h; the window's 3 252 rows give the user ~293: busy
    const hour = 3_600_000;
    const end = 10_000 * hour;
    const h = head({ spanMs: 7_860_906, windowRows: 3_252 });
    const pieces = busyUserPieces({ start: 0, end }, 9, h);
    const newest = Math.round((200 * 7_860_906) / 9); // ~48.5 h: 127 of them reach 257 days back
    expect(pieces).toHaveLength(BUSY_USER_PIECES);
    expect(pieces[0]).toEqual({ start: end - newest, end });
    expect(pieces[6]).toEqual({ start: end - 127 * newest, end: end - 63 * newest });
    expect(pieces[7]).toEqual({ start: 0, end: end - 127 * newest });
    // 4 of 100 (~130 rows in the window): one walk; 1 of 100 is no rate, however many rows the window has
    expect(busyUserPieces({ start: 0, end }, 4, h)).toHaveLength(1);
    expect(busyUserPieces({ start: 0, end }, 1, head({ windowRows: 1e9 }))).toHaveLength(1);
  });
});
