/**
 * The two cursor formats of the real service (upstream-facts.md, "Pages and cursors").
 *
 * - v2 (since 2026-08-17): `v2.` + unpadded base64url of `[{"t":"date","v":ISO},{"t":"str","v":oid}]`, a compound
 *   STRICT upper bound `(time, _id) < (t, oid)` at millisecond precision.
 * - v1 (before): `<JavaScript Date.toString()>|<oid>`, second precision. Older clients forge `<ISO>|<oid>`.
 *   The simulator's v1 bound compares `(whole second of the sort time, _id)`; see docs/simulator.md for why that
 *   still walks every row.
 *
 * One of two codecs of this wire format, on purpose: the client has its own (src/upstream/client/cursor.ts). The simulator is
 * the oracle the client is tested against, so it does not share the client's code; test/unit/upstream/client/codecs-agree.test.ts
 * runs each codec against the other. Not exported from the simulator's index (the client's index owns these names);
 * tests that forge cursors for the simulator import this file.
 */
import { ValidationError } from '../../src/foundation/errors/index.js';

export type CursorFormat = 'v2' | 'v1';

/** A decoded cursor: the bound's time (ms; for v1 a whole second) and its ObjectId (lower-case). */
export interface CursorBound {
  format: CursorFormat;
  timeMs: number;
  oid: string;
}

/** Encodes a v2 cursor for `(timeMs, oid)`. */
export function encodeCursorV2(timeMs: number, oid: string): string {
  const json = JSON.stringify([
    { t: 'date', v: new Date(timeMs).toISOString() },
    { t: 'str', v: oid },
  ]);
  return `v2.${Buffer.from(json, 'utf8').toString('base64url')}`;
}

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

/**
 * `Date.prototype.toString()` as the real (UTC) server prints it, whatever this process's time zone:
 * `Wed Feb 11 2026 14:18:58 GMT+0000 (Coordinated Universal Time)`.
 */
export function formatJsDateUtc(timeMs: number): string {
  const d = new Date(timeMs);
  return (
    `${DAYS[d.getUTCDay()]} ${MONTHS[d.getUTCMonth()]} ${pad(d.getUTCDate())} ${pad(d.getUTCFullYear(), 4)} ` +
    `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())} GMT+0000 (Coordinated Universal Time)`
  );
}

/** Encodes a v1 cursor as the old service emitted it (second precision: the milliseconds are dropped). */
export function encodeCursorV1(timeMs: number, oid: string): string {
  return `${formatJsDateUtc(timeMs)}|${oid}`;
}

/** Parses the date half of a v1 cursor: ISO-8601, or JS `Date.toString()` text (read as UTC up to ` GMT`). */
export function parseV1Date(text: string): number | undefined {
  const trimmed = text.trim();
  if (trimmed === '') return undefined;
  let ms = Date.parse(trimmed);
  if (!Number.isFinite(ms)) {
    const gmt = trimmed.indexOf(' GMT');
    const head = gmt >= 0 ? trimmed.slice(0, gmt) : trimmed.replace(/\s*\(.*\)\s*$/, '');
    ms = Date.parse(`${head} GMT`);
  }
  return Number.isFinite(ms) ? ms : undefined;
}

function invalid(cursor: string, why: string): ValidationError {
  return new ValidationError(`invalid cursor ${JSON.stringify(cursor.slice(0, 80))}: ${why}`, 'cursor');
}

/**
 * Decodes either format. The service checks nothing beyond the shape (no signature, no expiry, the id need not
 * exist). v1 times are truncated to the whole second (the old service's precision).
 * @throws ValidationError when the text is neither format.
 */
export function decodeCursor(cursor: string): CursorBound {
  if (cursor.startsWith('v2.')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(Buffer.from(cursor.slice(3), 'base64url').toString('utf8'));
    } catch {
      throw invalid(cursor, 'v2 payload is not base64url JSON');
    }
    if (!Array.isArray(parsed) || parsed.length !== 2)
      throw invalid(cursor, 'v2 payload is not a 2-element array');
    const [date, id] = parsed as [unknown, unknown];
    const dv = (date as { t?: unknown; v?: unknown } | null)?.v;
    const iv = (id as { t?: unknown; v?: unknown } | null)?.v;
    if ((date as { t?: unknown } | null)?.t !== 'date' || typeof dv !== 'string')
      throw invalid(cursor, 'first element is not {"t":"date","v":...}');
    if ((id as { t?: unknown } | null)?.t !== 'str' || typeof iv !== 'string')
      throw invalid(cursor, 'second element is not {"t":"str","v":...}');
    const timeMs = Date.parse(dv);
    if (!Number.isFinite(timeMs)) throw invalid(cursor, `date ${JSON.stringify(dv)} is not a date`);
    return { format: 'v2', timeMs, oid: iv.toLowerCase() };
  }
  const bar = cursor.indexOf('|');
  if (bar < 0) throw invalid(cursor, 'neither v2 nor v1 (<date>|<oid>)');
  const timeMs = parseV1Date(cursor.slice(0, bar));
  if (timeMs === undefined) throw invalid(cursor, 'v1 date part is not a date');
  return {
    format: 'v1',
    timeMs: Math.floor(timeMs / 1000) * 1000,
    oid: cursor
      .slice(bar + 1)
      .trim()
      .toLowerCase(),
  };
}
