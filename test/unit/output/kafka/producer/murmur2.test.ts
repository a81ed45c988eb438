import { createRequire } from 'node:module';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { murmur2 } from '../../../../../src/output/kafka/producer/murmur2.js';

const kafkajsMurmur2 = createRequire(import.meta.url)(
  'kafkajs/src/producer/partitioners/default/murmur2',
) as (key: string | Buffer) => number;

describe('murmur2', () => {
  it("equals kafkajs' (Java's) murmur2 for any string, of any length and any Unicode", () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.string({ unit: 'binary', maxLength: 400 }), fc.string({ maxLength: 40 })),
        (key) => {
          expect(murmur2(key)).toBe(kafkajsMurmur2(key));
        },
      ),
      { numRuns: 3000 },
    );
  });

  it("equals kafkajs' for any Buffer, and a string hashes as its UTF-8 bytes", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        const key = Buffer.from(bytes);
        expect(murmur2(key)).toBe(kafkajsMurmur2(key));
      }),
      { numRuns: 2000 },
    );
    const id = '65f1c0de2b7e4a0012ab34cd';
    expect(murmur2(id)).toBe(murmur2(Buffer.from(id, 'utf8')));
  });

  it("matches the Java client's published values", () => {
    // Kafka's UtilsTest.testMurmur2 (clients/src/test/java/org/apache/kafka/common/utils/UtilsTest.java).
    const cases: [string, number][] = [
      ['21', -973932308],
      ['foobar', -790332482],
      ['a-little-bit-long-string', -985981536],
      ['a-little-bit-longer-string', -1486304829],
      ['lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8', -58897971],
    ];
    for (const [key, hash] of cases) expect(murmur2(key)).toBe(hash);
  });
});
