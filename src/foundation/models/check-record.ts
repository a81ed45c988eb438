/**
 * Checks a value against a model of the catalogue without changing it. Returns every problem with the path where
 * it was found (`item.skills.attack`), so callers can raise one clear error or dead-letter one record. Unknown
 * fields are not problems: they are kept (and end in `_extra` when encoded).
 */
import { fieldList } from './field.js';
import type { FieldType, ModelDef } from './field.js';

export interface RecordIssue {
  /** Dotted path from the record's root, e.g. `candidates[2].voteCount`; `''` for the root itself. */
  path: string;
  /** What was expected and what was found. */
  message: string;
  /**
   * What kind of problem it is, for callers that act on it (the encoder's dead-letter reason): a missing entity
   * `_id`, a date-time string that does not parse, or (absent) a value of the wrong type. @default 'wrong-type'
   */
  kind?: RecordIssueKind;
}

/** The kinds of {@link RecordIssue}. */
export type RecordIssueKind = 'missing-id' | 'invalid-date' | 'wrong-type';

/** The digit at `i` of `s` (0-9), or -1e6 (so that a sum of digits with one that is not goes out of range). */
function digit(s: string, i: number): number {
  const d = s.charCodeAt(i) - 48;
  return d >= 0 && d <= 9 ? d : -1e6;
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * The canonical wire form `YYYY-MM-DDTHH:mm:ss.sssZ` of a date that exists (year 100 or later, hour below 24), read
 * by hand (~80 ns against `Date.parse`'s ~180, `bench/date-parse.ts`): it runs for every date field of every record
 * read, twice (check and encode; ~1.6 s of the worker's CPU at scale medium). Anything else is undefined here and
 * goes to `Date.parse`, which gives the same value for these too (a property test).
 */
function canonicalDateTime(v: string): number | undefined {
  if (
    v.length !== 24 ||
    v.charCodeAt(23) !== 90 || // Z
    v.charCodeAt(4) !== 45 || // -
    v.charCodeAt(7) !== 45 ||
    v.charCodeAt(10) !== 84 || // T
    v.charCodeAt(13) !== 58 || // :
    v.charCodeAt(16) !== 58 ||
    v.charCodeAt(19) !== 46 // .
  )
    return undefined;
  const y = digit(v, 0) * 1000 + digit(v, 1) * 100 + digit(v, 2) * 10 + digit(v, 3);
  const mo = digit(v, 5) * 10 + digit(v, 6);
  const d = digit(v, 8) * 10 + digit(v, 9);
  const h = digit(v, 11) * 10 + digit(v, 12);
  const mi = digit(v, 14) * 10 + digit(v, 15);
  const s = digit(v, 17) * 10 + digit(v, 18);
  const ms = digit(v, 20) * 100 + digit(v, 21) * 10 + digit(v, 22);
  if (y < 100 || mo < 1 || mo > 12 || d < 1 || h < 0 || h > 23 || mi < 0 || mi > 59 || s < 0 || s > 59 || ms < 0)
    return undefined;
  const leap = mo === 2 && y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
  if (d > DAYS_IN_MONTH[mo - 1]! + (leap ? 1 : 0)) return undefined;
  return Date.UTC(y, mo - 1, d, h, mi, s, ms);
}

/** Parses a wire date-time; `undefined` when it is not a valid date. Accepts ISO-8601 and JS `Date` text. */
export function parseDateTime(value: string): number | undefined {
  const fast = canonicalDateTime(value);
  if (fast !== undefined) return fast;
  const ms = Date.parse(value);
  return Number.isFinite(ms) ? ms : undefined;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'string')
    return `string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  return typeof value === 'number' ? `number ${value}` : typeof value;
}

function join(path: string, key: string | number): string {
  return typeof key === 'number' ? `${path}[${key}]` : path === '' ? key : `${path}.${key}`;
}

const STRING: FieldType = { kind: 'string' };
const INTEGER: FieldType = { kind: 'integer' };

/**
 * Checks `value`, found under `key` of the value at `parent` (paths are joined only where a problem is reported or
 * a nested value is walked: this runs for every field of every record).
 */
function checkField(
  type: FieldType,
  value: unknown,
  parent: string,
  key: string | number,
  issues: RecordIssue[],
): void {
  if (value === null || value === undefined) return; // every spec field is optional
  switch (type.kind) {
    case 'string':
      if (typeof value !== 'string')
        issues.push({ path: join(parent, key), message: `expected string, got ${describe(value)}` });
      return;
    case 'datetime':
      if (typeof value !== 'string')
        issues.push({
          path: join(parent, key),
          message: `expected a date-time string, got ${describe(value)}`,
        });
      else if (parseDateTime(value) === undefined)
        issues.push({
          path: join(parent, key),
          message: `expected a date-time string, got ${describe(value)}`,
          kind: 'invalid-date',
        });
      return;
    case 'integer':
      if (typeof value !== 'number' || !Number.isSafeInteger(value))
        issues.push({ path: join(parent, key), message: `expected integer, got ${describe(value)}` });
      return;
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value))
        issues.push({ path: join(parent, key), message: `expected number, got ${describe(value)}` });
      return;
    case 'boolean':
      if (typeof value !== 'boolean')
        issues.push({ path: join(parent, key), message: `expected boolean, got ${describe(value)}` });
      return;
    case 'json':
      if (typeof value !== 'object' || Array.isArray(value))
        issues.push({ path: join(parent, key), message: `expected object, got ${describe(value)}` });
      return;
    case 'map': {
      const path = join(parent, key);
      if (typeof value !== 'object' || Array.isArray(value)) {
        issues.push({ path, message: `expected object, got ${describe(value)}` });
        return;
      }
      for (const k in value) {
        if (Object.hasOwn(value, k))
          checkField(type.of, (value as Record<string, unknown>)[k], path, k, issues);
      }
      return;
    }
    case 'array': {
      const path = join(parent, key);
      if (!Array.isArray(value)) {
        issues.push({ path, message: `expected array, got ${describe(value)}` });
        return;
      }
      for (let i = 0; i < value.length; i++) checkField(type.of, value[i], path, i, issues);
      return;
    }
    case 'model':
      checkModelAt(type.model, value, join(parent, key), issues);
      return;
  }
}

function checkModelAt(model: ModelDef, value: unknown, path: string, issues: RecordIssue[]): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    issues.push({ path, message: `expected ${model.name} object, got ${describe(value)}` });
    return;
  }
  const record = value as Record<string, unknown>;
  if (model.ids) {
    const id = record['_id'];
    if (model.entity && (typeof id !== 'string' || id === ''))
      issues.push({
        path: join(path, '_id'),
        message: `required _id missing or not a string (got ${describe(id)})`,
        kind: 'missing-id',
      });
    else checkField(STRING, id, path, '_id', issues);
    checkField(INTEGER, record['__v'], path, '__v', issues);
  }
  for (const [key, type] of fieldList(model)) checkField(type, record[key], path, key, issues);
}

/** Every problem of `value` as a `model`; an empty array means it conforms. */
export function checkRecord(model: ModelDef, value: unknown, rootPath = ''): RecordIssue[] {
  const issues: RecordIssue[] = [];
  checkModelAt(model, value, rootPath, issues);
  return issues;
}

/** The top-level keys of `value` that the model does not know (kept in `_extra` when encoded). */
export function unknownKeys(model: ModelDef, value: Record<string, unknown>): string[] {
  return Object.keys(value).filter(
    (k) => !(k in model.fields) && !(model.ids && (k === '_id' || k === '__v')),
  );
}
