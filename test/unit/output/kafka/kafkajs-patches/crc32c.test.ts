import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { freshKafkajsModule } from '../../../../helpers/fresh-kafkajs-module.js';
import { crc32c } from '../../../../../src/output/kafka/kafkajs-patches/crc32c.js';

// A fresh copy of kafkajs' own implementation, unpatched whatever this process installed.
const kafkajsCrc32C = freshKafkajsModule<(b: Buffer) => number>(
  'kafkajs/src/protocol/recordBatch/crc32C/crc32C.js',
);

describe('crc32c (slicing-by-8)', () => {
  it('gives the standard check value and the empty buffer', () => {
    expect(crc32c(Buffer.from('123456789'))).toBe(0xe3069283);
    expect(crc32c(Buffer.alloc(0))).toBe(0);
  });

  it('equals kafkajs crc32C on any bytes, any length and offset (property)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.nat({ max: 16 }), (bytes, skip) => {
        const buf = Buffer.from(bytes).subarray(Math.min(skip, bytes.length));
        expect(crc32c(buf)).toBe(kafkajsCrc32C(buf) >>> 0);
      }),
      { numRuns: 3000 },
    );
    const big = Buffer.from(Array.from({ length: 100_003 }, (_, i) => (i * 2_654_435_761) >>> 24));
    expect(crc32c(big)).toBe(kafkajsCrc32C(big) >>> 0);
    expect(kafkajsCrc32C).not.toBe(crc32c);
  });
});
