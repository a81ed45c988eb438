/**
 * The pure core of drift tracking (issue 35): a page's unknown fields and wrong-typed values folded into one small
 * batch of counts per path, bounded, so the store is written once per page and never once per record.
 *
 * Paths are dotted from the record's root with array indices written `[]` (`candidates[].foo`), so one drifted
 * field of an array's elements is one path, not one per element.
 */

/** What changed upstream: a field the catalogue does not know, a value of another type, a field no longer sent. */
export type DriftKind = 'new_field' | 'type_changed' | 'field_gone_quiet';

/** Every {@link DriftKind}, in the order they are listed. */
export const DRIFT_KINDS: readonly DriftKind[] = ['new_field', 'type_changed', 'field_gone_quiet'];

/** A value's JSON type (`integer` for a safe integer number, `number` for any other). */
export type JsonType = 'string' | 'integer' | 'number' | 'boolean' | 'object' | 'array' | 'null';

/** The JSON type of a parsed JSON value. */
export function jsonTypeOf(value: unknown): JsonType {
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value)) return 'array';
  switch (typeof value) {
    case 'string':
      return 'string';
    case 'boolean':
      return 'boolean';
    case 'number':
      return Number.isSafeInteger(value) ? 'integer' : 'number';
    default:
      return 'object';
  }
}

const INDEX = /\[\d+\]/g;

/** `items[3].foo` -> `items[].foo`: a drift path names a field, never one element. */
export function normalizeDriftPath(path: string): string {
  return path.includes('[') ? path.replace(INDEX, '[]') : path;
}

/** One path's drift in one page. */
export interface PageDriftEntry {
  kind: DriftKind;
  path: string;
  /** Records of the page where it was seen. */
  count: number;
  /** How many of them carried each JSON type. */
  types: Partial<Record<JsonType, number>>;
  /**
   * `type_changed`: the sort times (`createdAt`/`publishedAt`, epoch ms) of the oldest and newest record affected,
   * the range `backfill --replay` must read again once the catalogue (or upstream) is fixed.
   */
  firstRecordMs?: number;
  lastRecordMs?: number;
}

/** A page's drift: one entry per (kind, path), at most `maxPaths`; occurrences of paths over the bound in `dropped`. */
export interface PageDrift {
  entries: PageDriftEntry[];
  dropped: number;
}

export interface DriftTrackerOptions {
  /** Most distinct paths one page may report (the others are counted in `dropped`). @default 200 */
  maxPaths?: number;
}

export const DEFAULT_DRIFT_TRACKER_OPTIONS = { maxPaths: 200 } as const;

/** Folds one page's observations (the encoder calls it; `encoding`'s `DriftSink`). */
export interface DriftTracker {
  /** An unknown field `key` found at `parentPath` (raw, with indices). */
  unknownField(parentPath: string, key: string, value: unknown): void;
  /** A value of the wrong type at `path` (a checkRecord issue path) in a record sorted at `recordMs`. */
  wrongType(path: string, value: unknown, recordMs?: number): void;
  /** A catalogued field gone quiet (`quiet-fields.ts` decides): `count` records of the page lacked it. */
  goneQuiet(path: string, count: number): void;
  /** What was seen so far; empty `entries` when nothing drifted. */
  page(): PageDrift;
}

/** A tracker for one page. */
export function createDriftTracker(options: DriftTrackerOptions = {}): DriftTracker {
  const maxPaths = options.maxPaths ?? DEFAULT_DRIFT_TRACKER_OPTIONS.maxPaths;
  const quiet: PageDriftEntry[] = [];
  // One map per kind, keyed by the path itself: no key string is built per record (the hot path: a field the
  // service always sends is met on every record).
  const newFields = new Map<string, PageDriftEntry>();
  const typeChanges = new Map<string, PageDriftEntry>();
  let dropped = 0;
  const add = (
    map: Map<string, PageDriftEntry>,
    kind: DriftKind,
    path: string,
    value: unknown,
  ): PageDriftEntry | undefined => {
    let entry = map.get(path);
    if (entry === undefined) {
      if (newFields.size + typeChanges.size + quiet.length >= maxPaths) {
        dropped++;
        return undefined;
      }
      map.set(path, (entry = { kind, path, count: 0, types: {} }));
    }
    entry.count++;
    const type = jsonTypeOf(value);
    entry.types[type] = (entry.types[type] ?? 0) + 1;
    return entry;
  };
  return {
    unknownField(parentPath, key, value) {
      add(
        newFields,
        'new_field',
        parentPath === '' ? key : normalizeDriftPath(`${parentPath}.${key}`),
        value,
      );
    },
    wrongType(path, value, recordMs) {
      const entry = add(typeChanges, 'type_changed', normalizeDriftPath(path), value);
      if (entry === undefined || recordMs === undefined) return;
      if (entry.firstRecordMs === undefined || recordMs < entry.firstRecordMs) entry.firstRecordMs = recordMs;
      if (entry.lastRecordMs === undefined || recordMs > entry.lastRecordMs) entry.lastRecordMs = recordMs;
    },
    goneQuiet(path, count) {
      if (count <= 0) return;
      if (newFields.size + typeChanges.size + quiet.length >= maxPaths) {
        dropped += count;
        return;
      }
      quiet.push({ kind: 'field_gone_quiet', path, count, types: { null: count } });
    },
    page: () => ({ entries: [...newFields.values(), ...typeChanges.values(), ...quiet], dropped }),
  };
}

/** One path's drift as the store keeps it (deployment-wide, per resource). */
export interface DriftRecord {
  kind: DriftKind;
  path: string;
  count: number;
  types: Partial<Record<JsonType, number>>;
  /** Epoch ms of the first and the last page it was seen in. */
  firstSeenMs: number;
  lastSeenMs: number;
  /** `type_changed`: the oldest and newest affected record's sort time (the range to replay). */
  firstRecordMs?: number;
  lastRecordMs?: number;
}

/** `stored` with a page's `entry` seen at `nowMs` folded in (what the Redis store's script does, stated in TS). */
export function mergeDriftRecord(
  stored: DriftRecord | undefined,
  entry: PageDriftEntry,
  nowMs: number,
): DriftRecord {
  const types: Partial<Record<JsonType, number>> = { ...stored?.types };
  for (const [type, n] of Object.entries(entry.types) as [JsonType, number][])
    types[type] = (types[type] ?? 0) + n;
  const first = [stored?.firstRecordMs, entry.firstRecordMs].filter((x) => x !== undefined);
  const last = [stored?.lastRecordMs, entry.lastRecordMs].filter((x) => x !== undefined);
  return {
    kind: entry.kind,
    path: entry.path,
    count: (stored?.count ?? 0) + entry.count,
    types,
    firstSeenMs: stored?.firstSeenMs ?? nowMs,
    lastSeenMs: Math.max(stored?.lastSeenMs ?? nowMs, nowMs),
    ...(first.length === 0 ? {} : { firstRecordMs: Math.min(...first) }),
    ...(last.length === 0 ? {} : { lastRecordMs: Math.max(...last) }),
  };
}

/** The JSON type most records carried (ties: the first in {@link jsonTypeOf}'s order of appearance). */
export function dominantType(types: Partial<Record<JsonType, number>>): JsonType | undefined {
  let best: JsonType | undefined;
  let bestCount = 0;
  for (const [type, n] of Object.entries(types) as [JsonType, number][]) {
    if (type !== 'null' && n > bestCount) [best, bestCount] = [type, n];
  }
  return best;
}
