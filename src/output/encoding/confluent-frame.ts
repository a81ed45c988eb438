/**
 * The Confluent wire format of a Kafka value: magic byte 0x00, the 4-byte big-endian schema id, then the Avro
 * binary. Pure helpers for tests, `verify` and tools that look at raw messages.
 */
import { EncodingError } from '../../foundation/errors/index.js';

/** The magic byte of the Confluent wire format (version 0: schema id prefix). */
export const CONFLUENT_MAGIC_BYTE = 0;

export interface ConfluentFrame {
  /** The registry's id of the writer schema. */
  schemaId: number;
  /** The Avro binary after the 5-byte header. */
  payload: Buffer;
}

/**
 * Splits a framed value.
 * @throws EncodingError when the buffer is shorter than 5 bytes or the magic byte is not 0x00.
 */
export function parseConfluentFrame(value: Buffer): ConfluentFrame {
  if (value.length < 5) throw new EncodingError(`framed value too short (${value.length} bytes)`, '');
  if (value[0] !== CONFLUENT_MAGIC_BYTE) {
    throw new EncodingError(`unknown magic byte ${String(value[0])} (expected 0x00)`, '');
  }
  return { schemaId: value.readUInt32BE(1), payload: value.subarray(5) };
}

/** Prefixes Avro binary with the Confluent header for `schemaId`. */
export function frameConfluent(schemaId: number, payload: Buffer): Buffer {
  const header = Buffer.alloc(5);
  header.writeUInt8(CONFLUENT_MAGIC_BYTE, 0);
  header.writeUInt32BE(schemaId, 1);
  return Buffer.concat([header, payload]);
}
