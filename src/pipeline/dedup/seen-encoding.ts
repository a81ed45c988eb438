/**
 * The pure core of the compact seen-set layout (the Lua scripts in `redis-seen-set.ts` mirror it byte for byte;
 * an integration test checks that they agree).
 *
 * An upstream `_id` is a MongoDB ObjectId: 4 bytes of creation seconds (T), 5 bytes of a per-process random part (P)
 * and a 3-byte counter (C). P takes a handful of values per collection (one per app-server start), so each set keeps
 * a dictionary P -> 2-byte index (I). One record is then stored as an 8-byte entry holding T, the counter's two high
 * bytes and I (see {@link idEntry}); the counter's low byte is not stored but recovered from the bucket's address
 * (see {@link bucketHash}). Changing resources append a 5-byte version code (see {@link encodeVersion}): 13 bytes per
 * entity. Entries are packed into Redis strings ("buckets"), addressed by linear hashing so the bucket count
 * follows the number of records (see {@link bucketAddress}).
 *
 * Anything that does not fit (an `_id` that is not a lower-case 24-hex ObjectId, a version that is not an ISO time
 * or a small integer, a set with more than 65 535 process parts) goes to an exact fallback keyed by the string id.
 * Both paths are exact: no record is ever taken for another.
 */

/** One record for the seen-set: its `_id` and its version text ('' for immutable resources). */
export interface SeenEntry {
  id: string;
  version: string;
}

/** Width of an immutable record's entry (see {@link idEntry}). */
export const ID_ENTRY_BYTES = 8;
/** Width of a changing entity's entry: the id entry plus a 5-byte version code. */
export const VERSIONED_ENTRY_BYTES = 13;
/** Linear hashing never has fewer than 2^MIN_LEVEL buckets: the address's low byte holds the counter's low byte. */
export const MIN_LEVEL = 8;
/** The last process index (indexes are 1..65535, two bytes; 0 is never used). */
export const MAX_PROCESS_INDEX = 65_535;
/** Version codes at or above this are times (ms since {@link VERSION_EPOCH_MS} plus this); below, integers. */
export const TIME_VERSION_BASE = 2 ** 32;
/** 2020-01-01T00:00:00.000Z: times from here to 2054 fit the 40-bit code. */
export const VERSION_EPOCH_MS = Date.UTC(2020, 0, 1);
const MAX_CODE = 2 ** 40;

const OBJECT_ID = /^[0-9a-f]{24}$/;
const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const UINT = /^(0|[1-9]\d{0,9})$/;

/** The 12 bytes of a canonical (lower-case, 24-hex) ObjectId string; undefined for any other id. */
export function parseObjectId(id: string): Buffer | undefined {
  return OBJECT_ID.test(id) ? Buffer.from(id, 'hex') : undefined;
}

/**
 * The 40-bit code of a version, or undefined when it has none (it then goes to the exact fallback by its text).
 * `updatedAt`/`createdAt` times (canonical ISO with ms, 2020..2054) map to TIME_VERSION_BASE + ms since 2020 so a
 * later time has a larger code; integer versions (`__v`, < 2^32) map to themselves. Only codes of the same kind
 * (both times or both integers) are compared.
 */
export function encodeVersion(version: string): number | undefined {
  if (ISO_MS.test(version)) {
    const ms = Date.parse(version);
    if (!Number.isFinite(ms) || new Date(ms).toISOString() !== version) return undefined;
    const code = TIME_VERSION_BASE + (ms - VERSION_EPOCH_MS);
    return ms >= VERSION_EPOCH_MS && code < MAX_CODE ? code : undefined;
  }
  if (UINT.test(version)) {
    const n = Number(version);
    return n < TIME_VERSION_BASE ? n : undefined;
  }
  return undefined;
}

/** Inverse of {@link encodeVersion}. */
export function decodeVersion(code: number): string {
  return code >= TIME_VERSION_BASE
    ? new Date(code - TIME_VERSION_BASE + VERSION_EPOCH_MS).toISOString()
    : String(code);
}

/**
 * Whether a record of version `incoming` is already covered by the stored `stored`: the same version, or an older
 * one of the same kind (a newer version of the entity was published; the stale one is not published after it).
 * Codes of different kinds never cover each other.
 */
export function versionCovered(stored: number, incoming: number): boolean {
  return stored >= TIME_VERSION_BASE === incoming >= TIME_VERSION_BASE && incoming <= stored;
}

/** Whether `incoming` should replace `stored` as the entity's latest version. */
export function versionReplaces(stored: number, incoming: number): boolean {
  return stored >= TIME_VERSION_BASE !== incoming >= TIME_VERSION_BASE || incoming > stored;
}

/**
 * The 8-byte entry of an ObjectId given its process index (1..65535):
 * `C_mid ^ T_lo, T(4), C_hi, I(2)`. The first byte varies from entry to entry (a lookup's `string.find` checks only
 * the entries that share it: the timestamp's high byte, shared by every entry, made each lookup 30 times slower);
 * it is reversible because T_lo is stored too.
 */
export function idEntry(oid: Buffer, processIndex: number): Buffer {
  const e = Buffer.alloc(ID_ENTRY_BYTES);
  e[0] = oid[10]! ^ oid[3]!;
  oid.copy(e, 1, 0, 4);
  e[5] = oid[9]!;
  e.writeUInt16BE(processIndex, 6);
  return e;
}

/** The process part of an ObjectId (bytes 4..8), the key of the set's process dictionary. */
export function processPart(oid: Buffer): Buffer {
  return oid.subarray(4, 9);
}

/**
 * A 32-bit hash of an entry's stored bytes: `T xor (C_hi << 16 | I)` through murmur3's finalizer (the Lua scripts
 * compute the same with exact double arithmetic).
 */
export function entryHash(entry: Buffer): number {
  let x = (entry.readUInt32BE(0) ^ ((entry.readUInt16BE(4) << 16) | entry.readUInt16BE(6))) >>> 0;
  x = (x ^ (x >>> 16)) >>> 0;
  x = Math.imul(x, 0x85ebca6b) >>> 0;
  x = (x ^ (x >>> 13)) >>> 0;
  x = Math.imul(x, 0xc2b2ae35) >>> 0;
  return (x ^ (x >>> 16)) >>> 0;
}

/**
 * The 40-bit linear-hashing key of a record: entryHash * 256 + (counter low byte XOR entryHash's high byte). Its
 * low byte, with the entry, gives back the counter's low byte, which the entry does not hold.
 */
export function bucketHash(entry: Buffer, counterLow: number): number {
  const h = entryHash(entry);
  return h * 256 + ((counterLow ^ (h >>> 24)) & 0xff);
}

/** The counter's low byte of an entry stored in the bucket at `address` (any level >= MIN_LEVEL). */
export function counterLowFromAddress(entry: Buffer, address: number): number {
  return ((address % 256) ^ (entryHash(entry) >>> 24)) & 0xff;
}

/** Linear hashing state of one seen-set: 2^level + split buckets exist. */
export interface BucketTable {
  level: number;
  split: number;
}

/** The bucket of a hash under linear hashing: `hash mod 2^level`, or mod 2^(level+1) if that bucket was split. */
export function bucketAddress(hash: number, table: BucketTable): number {
  const a = hash % 2 ** table.level;
  return a < table.split ? hash % 2 ** (table.level + 1) : a;
}

/** The number of buckets of a table. */
export function bucketCount(table: BucketTable): number {
  return 2 ** table.level + table.split;
}

/** The table after splitting its next bucket (entries of bucket `split` move to `split + 2^level` or stay). */
export function nextTable(table: BucketTable): BucketTable {
  return table.split + 1 === 2 ** table.level
    ? { level: table.level + 1, split: 0 }
    : { level: table.level, split: table.split + 1 };
}

/** The 5 big-endian bytes of a version code. */
export function versionBytes(code: number): Buffer {
  const b = Buffer.alloc(5);
  b.writeUIntBE(code, 0, 5);
  return b;
}
