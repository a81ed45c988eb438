import { describe, expect, it } from 'vitest';
import { chunkBySize, createKafkaSink, toWire } from '../../../src/sink/kafka-sink.js';
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
    expect(() => createKafkaSink({ brokers: ['a:1'], maxBatchBytes: -1 })).toThrow(
      /maxBatchBytes must be a non-negative integer, got -1/,
    );
  });
});

describe('toKafkaError', () => {
  it("says what to do about a missing topic, and keeps kafkajs's retriable flag", async () => {
    const { toKafkaError } = await import('../../../src/sink/kafka-sink.js');
    const e = toKafkaError(
      { message: 'This server does not host this topic-partition', retriable: false },
      ['b:1'],
      'sending 2 message(s) to x',
    );
    expect(e.message).toBe(
      'Kafka failed while sending 2 message(s) to x: This server does not host this topic-partition (does the topic exist? run `gamedata topics create`)',
    );
    expect(e.retriable).toBe(false);
    expect(
      toKafkaError(new Error('connect ECONNREFUSED 127.0.0.1:1'), ['127.0.0.1:1'], 'connecting').retriable,
    ).toBe(true);
  });
});

describe('toWire', () => {
  it('gives kafkajs the same record bytes and partition as the string form, with one header Buffer set per headers object', async () => {
    const { createRequire } = await import('node:module');
    const require = createRequire(import.meta.url);
    const encodeRecord = require('kafkajs/src/protocol/recordBatch/record/v0') as (r: object) => {
      buffer: Buffer;
    };
    const murmur2 = require('kafkajs/src/producer/partitioners/default/murmur2') as (key: unknown) => number;
    const headers = { 'gamedata.run.id': 'run-ü', 'gamedata.fetched.at': '2026-11-22T00:00:00.000Z' };
    const messages: SinkMessage[] = [
      { key: '65f0c0ffee0000000000abcd', value: Buffer.from([0, 0, 0, 0, 1, 42]), headers },
      { key: 'clé-ü', value: 'text', headers },
      { key: null, value: Buffer.alloc(3) },
    ];
    const wire = toWire();
    const out = messages.map(wire);
    expect(out[0]?.headers).toBe(out[1]?.headers);
    messages.forEach((m, i) => {
      const w = out[i]!;
      const plain = encodeRecord({ key: m.key, value: m.value, headers: m.headers ?? {} }).buffer;
      expect(encodeRecord(w).buffer.equals(plain)).toBe(true);
      if (m.key !== null) expect(murmur2(w.key)).toBe(murmur2(m.key));
    });
  });
});
