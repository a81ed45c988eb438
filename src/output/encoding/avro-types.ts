/**
 * The avsc type options every serializer, deserializer and local Avro type of this project uses:
 * - `timestamp-millis` as a JS `Date` (avsc has no built-in date types; without this such fields read as numbers);
 * - a `long` that is exact for every safe integer. avsc's default long silently corrupts negative values below
 *   -2^52 (its zigzag step leaves the safe range) and rejects 2^53-1; the catalogue admits every safe integer, so
 *   longs go through BigInt instead (found by the mapping property test);
 * - and, on import, avsc's shared write buffer at 64 kB (`avsc-shared-buffer.ts`, the one hook into avsc's internals).
 */
import avro from 'avsc';
import { installAvscSharedBuffer } from './avsc-shared-buffer.js';

export class TimestampMillisType extends avro.types.LogicalType {
  protected override _fromValue(value: number): Date {
    return new Date(value);
  }

  protected override _toValue(value: unknown): number | undefined {
    // Returning undefined makes avsc report the value as invalid (with its path) instead of writing garbage.
    return value instanceof Date && Number.isFinite(value.getTime()) ? value.getTime() : undefined;
  }

  protected override _resolve(type: avro.Type): ((value: number) => Date) | undefined {
    // A writer schema with a plain long (or the same logical type) is readable as a timestamp.
    if (avro.Type.isType(type, 'long', 'logical:timestamp-millis')) return (value) => this._fromValue(value);
    return undefined;
  }
}

// A 64 kB shared write buffer instead of avsc's 1 kB (user profiles are ~3 kB: written once, not twice), before any
// type of the project is used; the one hook into avsc's internals, version-checked (avsc-shared-buffer.ts).
installAvscSharedBuffer();

// Every long goes through 8-byte two's complement (BigInt): exact for all safe integers. One scratch buffer is
// enough: avsc packs the returned bytes before calling toBuffer again.
const scratch = Buffer.alloc(8);

/** A `long` exact for every JS safe integer (numbers in memory, never BigInt). */
export const SAFE_LONG_TYPE = avro.types.LongType.__with({
  fromBuffer: (buf: Buffer) => Number(buf.readBigInt64LE()),
  toBuffer: (n: number) => {
    scratch.writeBigInt64LE(BigInt(n));
    return scratch;
  },
  fromJSON: Number,
  toJSON: Number,
  isValid: (n: unknown) => typeof n === 'number' && Number.isSafeInteger(n),
  compare: (a: number, b: number) => (a === b ? 0 : a < b ? -1 : 1),
});

function isPlainLong(schema: avro.Schema): boolean {
  if (schema === 'long') return true;
  const s = schema as { type?: unknown; logicalType?: unknown } | null;
  return typeof s === 'object' && s !== null && s.type === 'long' && s.logicalType === undefined;
}

/** The options to pass to `avro.Type.forSchema` and to the registry serde configs. */
export const AVRO_TYPE_OPTIONS: {
  logicalTypes: Record<string, typeof TimestampMillisType>;
  wrapUnions: 'auto';
  typeHook: (schema: avro.Schema) => avro.Type | undefined;
} = {
  logicalTypes: { 'timestamp-millis': TimestampMillisType },
  wrapUnions: 'auto',
  typeHook: (schema) => (isPlainLong(schema) ? SAFE_LONG_TYPE : undefined),
};
