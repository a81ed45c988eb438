/**
 * A table of rows kept in listing order, ascending by `(sortTime, _id)` (row 0 is the oldest; pages are read from
 * the end), stored as compact columns so a million rows cost a few bytes each. Every listing of the simulator is
 * a binary search on the compound key plus a short walk, over the whole table or over a posting list (an
 * ascending list of rows, one per filter value), so deep pages are as fast as the head.
 *
 * ObjectIds are not stored as text: `_id` = 4 bytes of creation seconds + 5 process bytes (one of a few per table,
 * like the service's app servers) + a 3-byte counter, rebuilt on demand.
 */
import { createColumn } from './internal/growable.js';
import { hash32 } from './internal/prng.js';
import type { CursorBound } from './cursor.js';

/** Number of distinct "process" id parts per table (as if several app servers inserted rows). */
const PROCESSES = 3;

export interface OrderedTable {
  readonly name: string;
  readonly length: number;
  /** Sort time (ms) of a row. */
  time(row: number): number;
  /** The row's 24-hex ObjectId. */
  oid(row: number): string;
  /** Creation order of the row (its counter): the stable identity used to regenerate it. */
  ident(row: number): number;
  /** The row holding a creation counter. */
  rowOf(ident: number): number | undefined;
  /** The row with this `_id`, if any. */
  find(oid: string): number | undefined;
  /** Appends a row that must sort after every existing row (live mode). Returns its row number. */
  append(timeMs: number, idSeconds: number): number;
  /** Posting list of a filter value (family `'country'`, value 3), ascending rows; undefined when empty. */
  index(family: string, value: number): RowView | undefined;
  /** Adds a row to a posting list; rows must be added in ascending order. */
  addToIndex(family: string, value: number, row: number): void;
  /** Packs the posting lists into typed arrays (4 bytes per entry) once bulk indexing is done. */
  seal(): void;
  /** Total rows over every posting list (a memory figure for benchmarks). */
  indexedRows(): number;
}

/** Rows in listing order as a table or posting list exposes them (ascending). */
export interface RowView {
  readonly length: number;
  at(j: number): number;
}

const EMPTY = new Int32Array(0);

/** A posting list: a packed Int32Array plus a small growing tail (live appends between seals). */
class PostingList implements RowView {
  #base: Int32Array = EMPTY;
  #tail: number[] = [];
  get length(): number {
    return this.#base.length + this.#tail.length;
  }
  at(j: number): number {
    const base = this.#base;
    return j < base.length ? (base[j] as number) : (this.#tail[j - base.length] as number);
  }
  push(row: number): void {
    this.#tail.push(row);
  }
  seal(): void {
    if (this.#tail.length === 0) return;
    const packed = new Int32Array(this.#base.length + this.#tail.length);
    packed.set(this.#base);
    packed.set(this.#tail, this.#base.length);
    this.#base = packed;
    this.#tail = [];
  }
}

/**
 * Builds a table from rows given in creation order (row identity = position in the input). `times` are sort
 * times in ms; `idSeconds` the creation seconds that open each `_id`.
 */
export function createOrderedTable(
  name: string,
  seed: number,
  times: Float64Array,
  idSeconds: Uint32Array,
): OrderedTable {
  const tableHash = hash32(seed, name.length, name.charCodeAt(0), name.charCodeAt(name.length - 1));
  // Process parts sorted as hex, so comparing process indexes compares the id text.
  const processHex = Array.from({ length: PROCESSES }, (_, k) => {
    const a = hash32(tableHash, k, 1).toString(16).padStart(8, '0');
    const b = (hash32(tableHash, k, 2) & 0xff).toString(16).padStart(2, '0');
    return a + b;
  }).sort();
  const n = times.length;
  const procOfIdent = (ident: number): number => hash32(tableHash, ident) % PROCESSES;
  const procs = new Uint8Array(n);
  for (let i = 0; i < n; i++) procs[i] = procOfIdent(i);
  const perm = new Uint32Array(n);
  let sorted = true;
  for (let i = 0; i < n; i++) {
    perm[i] = i;
    if (i > 0 && (times[i] as number) < (times[i - 1] as number)) sorted = false;
  }
  // Big tables are generated in time order: only runs of equal times need sorting then (by _id).
  if (!sorted) perm.sort((a, b) => (times[a] as number) - (times[b] as number));
  const byId = (a: number, b: number): number => {
    const s = (idSeconds[a] as number) - (idSeconds[b] as number);
    if (s !== 0) return s;
    const p = (procs[a] as number) - (procs[b] as number);
    return p !== 0 ? p : a - b;
  };
  for (let start = 0; start < n;) {
    const t = times[perm[start] as number] as number;
    let end = start + 1;
    while (end < n && times[perm[end] as number] === t) end++;
    if (end - start > 1) perm.subarray(start, end).sort(byId);
    start = end;
  }
  const timeCol = createColumn(Float64Array, n);
  const secCol = createColumn(Uint32Array, n);
  const procCol = createColumn(Uint8Array, n);
  const identCol = createColumn(Uint32Array, n);
  const rowOfIdent = createColumn(Int32Array, n);
  for (let i = 0; i < n; i++) rowOfIdent.push(-1);
  for (let row = 0; row < n; row++) {
    const ident = perm[row] as number;
    timeCol.push(times[ident] as number);
    secCol.push(idSeconds[ident] as number);
    procCol.push(procs[ident] as number);
    identCol.push(ident);
    rowOfIdent.set(ident, row);
  }
  // Posting lists by family, then by the value's numeric index: no string hashing on the hot path.
  const indexes = new Map<string, Array<PostingList | undefined>>();
  let byOid: Map<string, number> | undefined;

  const oid = (row: number): string =>
    secCol.get(row).toString(16).padStart(8, '0') +
    (processHex[procCol.get(row)] as string) +
    (identCol.get(row) & 0xffffff).toString(16).padStart(6, '0');

  return {
    name,
    get length() {
      return timeCol.length;
    },
    time: (row) => timeCol.get(row),
    oid,
    ident: (row) => identCol.get(row),
    rowOf(ident) {
      if (ident < 0 || ident >= rowOfIdent.length) return undefined;
      const row = rowOfIdent.get(ident);
      return row < 0 ? undefined : row;
    },
    find(id) {
      if (byOid === undefined) {
        byOid = new Map();
        for (let row = 0; row < timeCol.length; row++) byOid.set(oid(row), row);
      }
      return byOid.get(id.toLowerCase());
    },
    append(timeMs, idSeconds) {
      const ident = identCol.length;
      const row = timeCol.length;
      timeCol.push(timeMs);
      secCol.push(idSeconds);
      // The last process part sorts after the others, so an append at an existing millisecond still sorts last.
      procCol.push(PROCESSES - 1);
      identCol.push(ident);
      rowOfIdent.push(row);
      byOid?.set(oid(row), row);
      return row;
    },
    index: (family, value) => indexes.get(family)?.[value],
    addToIndex(family, value, row) {
      let lists = indexes.get(family);
      if (lists === undefined) {
        lists = [];
        indexes.set(family, lists);
      }
      let list = lists[value];
      if (list === undefined) {
        list = new PostingList();
        lists[value] = list;
      }
      list.push(row);
    },
    seal() {
      for (const lists of indexes.values()) for (const list of lists) list?.seal();
    },
    indexedRows() {
      let total = 0;
      for (const lists of indexes.values()) for (const list of lists) total += list?.length ?? 0;
      return total;
    },
  };
}

/** The whole table as a view. */
export function tableView(table: OrderedTable): RowView {
  return { length: table.length, at: (j) => j };
}

/** A posting list as a view (empty when the value has no rows). */
export function indexView(table: OrderedTable, family: string, value: number): RowView {
  return table.index(family, value) ?? { length: 0, at: () => -1 };
}

/** Compares a row's key `(time, _id)` with a bound. */
export function compareRow(table: OrderedTable, row: number, timeMs: number, oid: string): number {
  const d = table.time(row) - timeMs;
  if (d !== 0) return d;
  const id = table.oid(row);
  return id < oid ? -1 : id > oid ? 1 : 0;
}

export interface ListRowsQuery {
  /** Upper bound (exclusive). Absent: from the newest row. */
  bound?: CursorBound | undefined;
  limit: number;
  /** Rows with a sort time below this are not served (the 72 h window). */
  minTimeMs?: number | undefined;
  /** Extra filter a row must pass (filters without their own posting list). */
  predicate?: ((row: number) => boolean) | undefined;
  /** v2: key `(ms, _id)`. v1: key `(whole second, _id)`, the old service's precision. */
  mode: 'v2' | 'v1';
}

export interface ListRowsResult {
  rows: number[];
  /** Whether at least one more row exists past the page. */
  more: boolean;
}

/** Count of view entries whose time is below `timeMs` (binary search). */
function countTimeBelow(table: OrderedTable, view: RowView, timeMs: number, hi = view.length): number {
  let lo = 0;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (table.time(view.at(mid)) < timeMs) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Count of view entries with key `< (timeMs, oid)`. */
function countKeyBelow(table: OrderedTable, view: RowView, timeMs: number, oid: string): number {
  let lo = 0;
  let hi = view.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareRow(table, view.at(mid), timeMs, oid) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * One page of rows, newest first, strictly below the bound. Reads `limit + 1` rows to know whether more exist.
 */
export function listRows(table: OrderedTable, view: RowView, query: ListRowsQuery): ListRowsResult {
  const want = query.limit + 1;
  const rows: number[] = [];
  const minTime = query.minTimeMs ?? -Infinity;
  const accept = (row: number): boolean => query.predicate === undefined || query.predicate(row);
  if (query.mode === 'v2') {
    let j =
      query.bound === undefined
        ? view.length
        : countKeyBelow(table, view, query.bound.timeMs, query.bound.oid);
    while (--j >= 0 && rows.length < want) {
      const row = view.at(j);
      if (table.time(row) < minTime) break;
      if (accept(row)) rows.push(row);
    }
  } else {
    // v1: rows of one whole second form a contiguous run of the view; inside it the order is by _id alone.
    let end: number;
    let boundOid: string | undefined;
    if (query.bound === undefined) end = view.length;
    else {
      end = countTimeBelow(table, view, query.bound.timeMs + 1000);
      boundOid = query.bound.oid;
    }
    while (end > 0 && rows.length < want) {
      const second = Math.floor(table.time(view.at(end - 1)) / 1000) * 1000;
      if (second + 999 < minTime) break;
      const start = countTimeBelow(table, view, second, end);
      const block: Array<{ row: number; oid: string }> = [];
      for (let j = start; j < end; j++) {
        const row = view.at(j);
        if (table.time(row) < minTime || !accept(row)) continue;
        const id = table.oid(row);
        if (boundOid !== undefined && second === query.bound?.timeMs && !(id < boundOid)) continue;
        block.push({ row, oid: id });
      }
      block.sort((a, b) => (a.oid < b.oid ? 1 : a.oid > b.oid ? -1 : 0));
      for (const entry of block) {
        if (rows.length >= want) break;
        rows.push(entry.row);
      }
      end = start;
    }
  }
  const more = rows.length > query.limit;
  if (more) rows.length = query.limit;
  return { rows, more };
}
