/**
 * Cursor codec. The upstream pages newest first by `(sortTime, _id)`; a cursor is a compound, strict upper bound
 * `(time, _id) < (t, oid)`. The service validates nothing in it, so a client may forge one for any instant: that is
 * what makes parallel time slicing possible.
 *
 * - v2 (current): `v2.` + unpadded base64url of `[{"t":"date","v":"<ISO ms Z>"},{"t":"str","v":"<oid>"}]`.
 * - v1 (before 2026-08-17): `<JS Date.toString()>|<oid>` (second precision), or the ISO form older clients forge
 *   (`2026-02-11T14:18:58.000Z|000000000000000000000000`).
 *
 * One of two codecs of this wire format, on purpose: the simulator has its own (tools/simulator/cursor.ts), written
 * independently, because the simulator is the oracle this client is tested against; a shared codec would hide a
 * shared mistake. test/unit/upstream/client/codecs-agree.test.ts runs each against the other.
 */
import { ValidationError } from '../../foundation/errors/index.js';

/** The all-zero ObjectId: a bound with it excludes its own millisecond (`v2(end, ZERO_OID)` reads `time < end`). */
export const ZERO_OID = '000000000000000000000000';
/** The all-f ObjectId: a bound with it includes its own millisecond. */
export const MAX_OID = 'ffffffffffffffffffffffff';

export type CursorFormat = 'v2' | 'v1';

export interface ParsedCursor {
  /** The bound's instant in epoch milliseconds (whole seconds for a JS-date v1 cursor). */
  timeMs: number;
  /** The bound's `_id` (24 hex). */
  id: string;
  format: CursorFormat;
}

const OID_RE = /^[0-9a-f]{24}$/i;

function checkOid(oid: string): void {
  if (!OID_RE.test(oid))
    throw new ValidationError(`cursor id must be 24 hex characters, got ${JSON.stringify(oid)}`, 'cursor.id');
}

function checkTime(timeMs: number): void {
  if (!Number.isFinite(timeMs))
    throw new ValidationError(`cursor time must be a finite epoch ms, got ${timeMs}`, 'cursor.time');
}

/** Encodes the v2 cursor for the bound `(timeMs, oid)`. */
export function encodeCursorV2(timeMs: number, oid: string = ZERO_OID): string {
  checkTime(timeMs);
  checkOid(oid);
  const json = JSON.stringify([
    { t: 'date', v: new Date(timeMs).toISOString() },
    { t: 'str', v: oid },
  ]);
  return `v2.${Buffer.from(json, 'utf8').toString('base64url')}`;
}

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const pad = (n: number): string => String(n).padStart(2, '0');

/** `Date.toString()` as the upstream prints it, in UTC whatever the process time zone (second precision). */
export function formatJsDateUtc(timeMs: number): string {
  const d = new Date(timeMs);
  return (
    `${DAYS[d.getUTCDay()]} ${MONTHS[d.getUTCMonth()]} ${pad(d.getUTCDate())} ${d.getUTCFullYear()} ` +
    `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())} GMT+0000 (Coordinated Universal Time)`
  );
}

/**
 * Encodes a v1 cursor. `style: 'iso'` (default) is the form older clients forge (`…T14:18:58.000Z|oid`; milliseconds
 * are kept, so pass whole seconds for the classic form); `style: 'date'` is the server's own `Date.toString()` form,
 * which has second precision (the milliseconds are floored).
 */
export function encodeCursorV1(
  timeMs: number,
  oid: string = ZERO_OID,
  style: 'iso' | 'date' = 'iso',
): string {
  checkTime(timeMs);
  checkOid(oid);
  const date = style === 'iso' ? new Date(timeMs).toISOString() : formatJsDateUtc(timeMs);
  return `${date}|${oid}`;
}

const JS_DATE_RE =
  /^(?:[A-Z][a-z]{2}) ([A-Z][a-z]{2}) (\d{1,2}) (\d{4}) (\d{2}):(\d{2}):(\d{2})(?: GMT([+-])(\d{2})(\d{2}))?/;

/** Parses a date as cursors and `cursorEnd` carry it: ISO-8601 or JS `Date.toString()` text. `undefined` if neither. */
export function parseCursorDate(text: string): number | undefined {
  const js = JS_DATE_RE.exec(text);
  if (js) {
    const [, mon, day, year, hh, mm, ss, sign, oh, om] = js;
    const month = MONTHS.indexOf(mon ?? '');
    if (month < 0) return undefined;
    let ms = Date.UTC(Number(year), month, Number(day), Number(hh), Number(mm), Number(ss));
    // The offset is applied (the Python client ignored it and was off by the zone).
    if (sign !== undefined) ms -= (sign === '-' ? -1 : 1) * (Number(oh) * 60 + Number(om)) * 60_000;
    return ms;
  }
  if (!/^\d{4}-\d{2}-\d{2}/.test(text)) return undefined;
  // A date-time without zone is taken as UTC (Date.parse would use local time).
  const iso = /[zZ]|[+-]\d{2}:?\d{2}$/.test(text) || !text.includes('T') ? text : `${text}Z`;
  const ms = Date.parse(iso);
  return Number.isFinite(ms) ? ms : undefined;
}

/**
 * Parses a v2 cursor, a JS-date v1 cursor or an ISO v1 cursor.
 * @throws ValidationError when the text is none of them.
 */
export function parseCursor(cursor: string): ParsedCursor {
  if (cursor.startsWith('v2.')) {
    let parts: unknown;
    try {
      parts = JSON.parse(Buffer.from(cursor.slice(3), 'base64url').toString('utf8'));
    } catch (cause) {
      throw new ValidationError(`malformed v2 cursor ${JSON.stringify(cursor)}`, 'cursor', { cause });
    }
    const [date, id] = Array.isArray(parts) ? (parts as unknown[]) : [];
    const v = (p: unknown): unknown =>
      typeof p === 'object' && p !== null ? (p as Record<string, unknown>)['v'] : undefined;
    const timeText = v(date);
    const oid = v(id);
    const timeMs = typeof timeText === 'string' ? parseCursorDate(timeText) : undefined;
    if (timeMs === undefined || typeof oid !== 'string' || !OID_RE.test(oid))
      throw new ValidationError(`malformed v2 cursor ${JSON.stringify(cursor)}`, 'cursor');
    return { timeMs, id: oid, format: 'v2' };
  }
  const bar = cursor.lastIndexOf('|');
  const timeMs = bar > 0 ? parseCursorDate(cursor.slice(0, bar)) : undefined;
  const oid = bar > 0 ? cursor.slice(bar + 1) : '';
  if (timeMs === undefined || !OID_RE.test(oid))
    throw new ValidationError(`unrecognised cursor ${JSON.stringify(cursor)} (expected v2 or v1)`, 'cursor');
  return { timeMs, id: oid, format: 'v1' };
}

/** Encodes a bound in the given format (v1 uses the ISO form, whole seconds expected). */
export function encodeCursor(format: CursorFormat, timeMs: number, oid: string = ZERO_OID): string {
  return format === 'v2' ? encodeCursorV2(timeMs, oid) : encodeCursorV1(timeMs, oid);
}
