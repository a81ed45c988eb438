import { describe, expect, it } from 'vitest';
import { chunkBySize, createKafkaSink } from '../../../src/sink/kafka-sink.js';
import type { SinkMessage } from '../../../src/sink/kafka-sink.js';
import { ConfigError } from '../../../src/errors.js';

const msg = (key: string, bytes: number): SinkMessage => ({ key, value: Buffer.alloc(bytes), headers: {} });

describe('chunkBySize', () => {
  it('keeps order and splits before the size would pass the limit; a larger message goes alone', () => {
    const chunks = chunkBySize([msg('a', 40), msg('b', 50), msg('c', 20), msg('d', 500), msg('e', 5)], 100);
    expect(chunks.map((c) => c.map((m) => m.key))).toEqual([['a', 'b'], ['c'], ['d'], ['e']]);
  });

  it('counts keys and headers too', () => {
    const withHeaders: SinkMessage = { key: 'kkkk', value: 'v', headers: { header: 'x'.repeat(90) } };
    expect(chunkBySize([withHeaders, withHeaders], 150)).toHaveLength(2);
    expect(chunkBySize([], 10)).toEqual([]);
  });
});

describe('createKafkaSink options', () => {
  it('names a bad option', () => {
    expect(() => createKafkaSink({ brokers: [] })).toThrow(ConfigError);
    expect(() => createKafkaSink({ brokers: ['localhost'] })).toThrow(/host:port/);
    expect(() => createKafkaSink({ brokers: ['a:1'], maxBatchBytes: -1 })).toThrow(/maxBatchBytes must be a non-negative integer, got -1/);
  });
});
