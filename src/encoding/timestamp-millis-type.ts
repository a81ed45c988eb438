/**
 * The avsc logical type for `{ type: 'long', logicalType: 'timestamp-millis' }`: a JS `Date` in memory, UTC
 * milliseconds on the wire. avsc has no built-in date types; without this it would read such fields as plain numbers.
 */
import avro from 'avsc';

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

/** The avsc options every serializer, deserializer and local type of this project uses. */
export const AVRO_TYPE_OPTIONS = {
  logicalTypes: { 'timestamp-millis': TimestampMillisType },
  wrapUnions: 'auto',
} as const;
