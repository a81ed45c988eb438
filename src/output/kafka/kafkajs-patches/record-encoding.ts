/**
 * One Kafka record (the v2 record format inside a record batch), encoded into one right-sized buffer: the same bytes
 * as kafkajs 2.2.4's `protocol/recordBatch/record/v0`, without its allocations. kafkajs builds each record in an
 * Encoder of a zeroed 512-byte buffer that it grows by copying (a record of a ~400-byte value is 1 KB), a second
 * zeroed 512-byte Encoder per header, and a `Buffer.from([...])` per varint: ~10 allocations, ~4 KB zeroed, per
 * record, which the worker's profile shows as kafkajs' record encoding and GC.
 *
 * `installRecordEncoding()` puts `encodeKafkaRecord` in place of kafkajs' record encoder in the module cache. kafkajs
 * loads its produce request encoders lazily (on a client's first produce request), and only `produce/v3/request.js`
 * takes the record encoder, so installing before any client sends is enough; a process whose produce encoder was
 * already loaded keeps kafkajs' own (same bytes). Inputs kafkajs accepts that this does not handle (a timestamp delta
 * outside 32 bits, a key or value that is neither a string nor a Buffer, a header value that is neither) go to kafkajs'
 * encoder.
 */
import { replaceKafkajsModule } from './patch-kafkajs.js';

type HeaderValue = string | Buffer;
/** A message as kafkajs' record encoder receives it. */
export interface KafkaRecordInput {
  offsetDelta?: number;
  timestampDelta?: number;
  key?: string | Buffer | null;
  value?: string | Buffer | null;
  headers?: Record<string, HeaderValue | HeaderValue[]>;
}
/** What kafkajs' record batch takes from an encoded record (an Encoder's `buf` and `buffer`). */
export interface EncodedRecord {
  buf: Buffer;
  buffer: Buffer;
}
type RecordEncoder = (input: KafkaRecordInput) => EncodedRecord;

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

const zigzag = (n: number): number => ((n << 1) ^ (n >> 31)) >>> 0;
const uvarintSize = (u: number): number =>
  u < 0x80 ? 1 : u < 0x4000 ? 2 : u < 0x200000 ? 3 : u < 0x10000000 ? 4 : 5;
const varintSize = (n: number): number => uvarintSize(zigzag(n));

function writeVarint(buf: Buffer, at: number, n: number): number {
  let u = zigzag(n);
  while (u > 0x7f) {
    buf[at++] = (u & 0x7f) | 0x80;
    u >>>= 7;
  }
  buf[at++] = u;
  return at;
}

/** Bytes length of a key, value or header value as kafkajs writes it (-1: null). */
const lengthOf = (v: string | Buffer | null | undefined): number =>
  v === null || v === undefined ? -1 : typeof v === 'string' ? Buffer.byteLength(v, 'utf8') : v.length;

function writeBytes(buf: Buffer, at: number, v: string | Buffer | null | undefined, length: number): number {
  at = writeVarint(buf, at, length);
  if (length <= 0 || v === null || v === undefined) return at;
  if (typeof v === 'string') return at + buf.write(v, at, length, 'utf8');
  v.copy(buf, at);
  return at + length;
}

const plain = (v: unknown): v is string | Buffer | null | undefined =>
  v === null || v === undefined || typeof v === 'string' || Buffer.isBuffer(v);
/** kafkajs throws on a null header value; it gets to. */
const headerValue = (v: unknown): v is string | Buffer => typeof v === 'string' || Buffer.isBuffer(v);

/**
 * The record's bytes, or undefined when kafkajs' own encoder must take it (see the module's header).
 */
export function encodeKafkaRecord(input: KafkaRecordInput): EncodedRecord | undefined {
  const { offsetDelta = 0, timestampDelta = 0, key, value, headers = {} } = input;
  if (!Number.isInteger(timestampDelta) || timestampDelta < INT32_MIN || timestampDelta > INT32_MAX)
    return undefined;
  if (!Number.isInteger(offsetDelta) || offsetDelta < 0 || offsetDelta > INT32_MAX) return undefined;
  if (!plain(key) || !plain(value)) return undefined;
  const pairs: [string, HeaderValue][] = [];
  for (const name of Object.keys(headers)) {
    const h = headers[name];
    if (Array.isArray(h)) {
      for (const each of h) {
        if (!headerValue(each)) return undefined;
        pairs.push([name, each]);
      }
    } else {
      if (!headerValue(h)) return undefined;
      pairs.push([name, h]);
    }
  }
  const keyLength = lengthOf(key);
  const valueLength = lengthOf(value);
  let size =
    1 +
    varintSize(timestampDelta) +
    varintSize(offsetDelta) +
    varintSize(keyLength) +
    Math.max(keyLength, 0) +
    varintSize(valueLength) +
    Math.max(valueLength, 0) +
    varintSize(pairs.length);
  const lengths: number[] = [];
  for (const [name, v] of pairs) {
    const nameLength = Buffer.byteLength(name, 'utf8');
    const vLength = lengthOf(v);
    lengths.push(nameLength, vLength);
    size += varintSize(nameLength) + nameLength + varintSize(vLength) + Math.max(vLength, 0);
  }
  const total = varintSize(size) + size;
  const buf = Buffer.allocUnsafe(total);
  let at = writeVarint(buf, 0, size);
  buf[at++] = 0; // attributes: none used
  at = writeVarint(buf, at, timestampDelta);
  at = writeVarint(buf, at, offsetDelta);
  at = writeBytes(buf, at, key, keyLength);
  at = writeBytes(buf, at, value, valueLength);
  at = writeVarint(buf, at, pairs.length);
  pairs.forEach(([name, v], i) => {
    at = writeBytes(buf, at, name, lengths[2 * i] as number);
    at = writeBytes(buf, at, v, lengths[2 * i + 1] as number);
  });
  return { buf, buffer: buf };
}

/** `original` (kafkajs' record encoder) for what `encodeKafkaRecord` leaves to it. */
export function encodingRecords(original: RecordEncoder): RecordEncoder {
  return (input) => encodeKafkaRecord(input) ?? original(input);
}

/**
 * Installs `encodeKafkaRecord` in this process's kafkajs (idempotent). Returns false when kafkajs' produce request
 * encoder was loaded before (it keeps kafkajs' record encoder).
 */
export function installRecordEncoding(): boolean {
  return replaceKafkajsModule<RecordEncoder>(
    'kafkajs/src/protocol/recordBatch/record/v0/index.js',
    'kafkajs/src/protocol/requests/produce/v3/request.js',
    'gamedata.kafkaRecordEncoding',
    encodingRecords,
  );
}
