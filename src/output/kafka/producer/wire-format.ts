/**
 * The producers' wire format: our `SinkMessage`, split into requests under a size (`chunkBySize`) and turned into
 * kafkajs' message form with header Buffers made once per page (`toWire`).
 */

/** One message: key as a UTF-8 string (`_id`), value bytes, string headers. */
export interface SinkMessage {
  key: string | null;
  value: Buffer | string;
  headers?: Record<string, string>;
}

function messageBytes(m: SinkMessage): number {
  let n =
    (m.key === null ? 0 : Buffer.byteLength(m.key)) +
    (typeof m.value === 'string' ? Buffer.byteLength(m.value) : m.value.length);
  for (const [k, v] of Object.entries(m.headers ?? {})) n += Buffer.byteLength(k) + Buffer.byteLength(v);
  return n;
}

/** Splits messages, in order, into runs whose total size stays under `maxBytes` (a larger message goes alone). */
export function chunkBySize(messages: readonly SinkMessage[], maxBytes: number): SinkMessage[][] {
  const chunks: SinkMessage[][] = [];
  let current: SinkMessage[] = [];
  let size = 0;
  for (const m of messages) {
    const n = messageBytes(m);
    if (current.length > 0 && size + n > maxBytes) {
      chunks.push(current);
      current = [];
      size = 0;
    }
    current.push(m);
    size += n;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

/**
 * The kafkajs form of our messages for one partition, with the same bytes on the wire: header values as UTF-8
 * Buffers made once (kafkajs would encode a string header value per record; a page's records share one headers
 * object, so its Buffers are made once per page, not per record), the key as it is (the record encoder writes a
 * string key's UTF-8 bytes; the partition is given, so nothing hashes it). One converter per send() call: a headers
 * object changed by the caller between sends is read again.
 */
export function toWire(): (
  m: SinkMessage,
  partition: number,
) => {
  key: string | null;
  value: Buffer | string;
  headers: Record<string, Buffer>;
  partition: number;
} {
  const converted = new Map<Record<string, string>, Record<string, Buffer>>();
  const none: Record<string, Buffer> = {};
  return (m, partition) => {
    let headers = none;
    if (m.headers !== undefined) {
      let h = converted.get(m.headers);
      if (h === undefined) {
        h = {};
        for (const [k, v] of Object.entries(m.headers)) h[k] = Buffer.from(v, 'utf8');
        converted.set(m.headers, h);
      }
      headers = h;
    }
    return { key: m.key, value: m.value, headers, partition };
  };
}
