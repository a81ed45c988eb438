import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { freshKafkajsModule } from '../../../../helpers/fresh-kafkajs-module.js';
import {
  encodeKafkaRecord,
  encodingRecords,
} from '../../../../../src/output/kafka/kafkajs-patches/record-encoding.js';
import type {
  EncodedRecord,
  KafkaRecordInput,
} from '../../../../../src/output/kafka/kafkajs-patches/record-encoding.js';

/** kafkajs' own record encoder, from a fresh copy of its module (whatever this process installed). */
function kafkajsRecord(): (input: KafkaRecordInput) => { buffer: Buffer } {
  return freshKafkajsModule('kafkajs/src/protocol/recordBatch/record/v0/index.js');
}

const bytesOrText = fc.oneof(
  fc.constant(null),
  fc.string({ unit: 'binary', maxLength: 300 }),
  fc.uint8Array({ maxLength: 600 }).map((a) => Buffer.from(a)),
);
const textOrBytes = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 300 }),
  fc.uint8Array({ maxLength: 600 }).map((a) => Buffer.from(a)),
);
const input: fc.Arbitrary<KafkaRecordInput> = fc.record({
  offsetDelta: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
  timestampDelta: fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
  key: bytesOrText,
  value: fc.oneof(
    bytesOrText,
    fc.uint8Array({ minLength: 16_000, maxLength: 20_000 }).map((a) => Buffer.from(a)),
  ),
  headers: fc.dictionary(
    fc.string({ unit: 'binary', maxLength: 40 }),
    fc.oneof(textOrBytes, fc.array(textOrBytes, { maxLength: 3 })),
    { maxKeys: 6 },
  ),
});

describe('Kafka record encoding', () => {
  const original = kafkajsRecord();

  it("writes exactly kafkajs' bytes for any key, value, headers, offset and timestamp delta", () => {
    fc.assert(
      fc.property(input, (m) => {
        const ours = encodeKafkaRecord(m) as EncodedRecord;
        expect(ours).toBeDefined();
        expect(ours.buf).toBe(ours.buffer);
        expect(ours.buffer.equals(original(m).buffer)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it("the pipeline's records: 24-hex keys, Avro values, the four lineage headers", () => {
    const headers = {
      'gamedata.run': 'transactions-full-1795629931035',
      'gamedata.slice': 'r_transactions_userId_6ac945b574ce7a3e4d000024.0-1793491200000',
      'gamedata.source': 'transaction.getPaginatedTransactions',
      'gamedata.fetchedAt': '2026-11-25T18:00:00.000Z',
    };
    for (let i = 0; i < 200; i++) {
      const m = {
        key: i.toString(16).padStart(24, '0'),
        value: Buffer.alloc(385, i),
        headers,
        offsetDelta: i,
      };
      expect((encodeKafkaRecord(m) as EncodedRecord).buffer).toEqual(original(m).buffer);
    }
  });

  it('leaves to kafkajs what it does not handle: a timestamp delta past 32 bits, a value or header value that is not text or bytes', () => {
    const seen: KafkaRecordInput[] = [];
    const encode = encodingRecords((m) => {
      seen.push(m);
      return { buf: Buffer.alloc(0), buffer: Buffer.alloc(0) };
    });
    const far = { key: 'k', value: 'v', timestampDelta: 2 ** 33 };
    const odd = { key: 'k', value: 42 as unknown as string };
    const nullHeader = { key: 'k', value: 'v', headers: { h: null as unknown as string } };
    expect(encodeKafkaRecord(far)).toBeUndefined();
    expect(encodeKafkaRecord(odd)).toBeUndefined();
    expect(encodeKafkaRecord(nullHeader)).toBeUndefined();
    encode(far);
    encode(odd);
    encode(nullHeader);
    encode({ key: 'k', value: 'v' });
    expect(seen).toEqual([far, odd, nullHeader]);
  });
});
