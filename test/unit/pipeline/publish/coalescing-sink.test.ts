import { describe, expect, it } from 'vitest';
import { createCoalescingSink } from '../../../../src/pipeline/publish/coalescing-sink.js';
import type { KafkaSink } from '../../../../src/output/kafka/producer/kafka-sink.js';
import type { SinkMessage } from '../../../../src/output/kafka/producer/wire-format.js';

function slowSink(failOn?: string): KafkaSink & { calls: { topic: string; keys: (string | null)[] }[] } {
  const calls: { topic: string; keys: (string | null)[] }[] = [];
  return {
    calls,
    connect: () => Promise.resolve(),
    disconnect: () => Promise.resolve(),
    async send(topic: string, messages: readonly SinkMessage[]) {
      calls.push({ topic, keys: messages.map((m) => m.key) });
      await new Promise((r) => setTimeout(r, 20));
      if (failOn !== undefined && messages.some((m) => m.key === failOn)) throw new Error('broker down');
    },
  };
}

const msg = (key: string): SinkMessage => ({ key, value: Buffer.from(key) });

describe('coalescing sink', () => {
  it('merges sends that arrive while one is in flight; each caller resolves after its own messages went out', async () => {
    const inner = slowSink();
    const sink = createCoalescingSink(inner);
    const done: string[] = [];
    await Promise.all(['a', 'b', 'c', 'd'].map((k) => sink.send('t', [msg(k)]).then(() => done.push(k))));
    expect(inner.calls.map((c) => c.keys)).toEqual([['a'], ['b', 'c', 'd']]);
    expect(done.sort()).toEqual(['a', 'b', 'c', 'd']);
    await sink.send('t', []);
    expect(inner.calls).toHaveLength(2);
  });

  it('a failed merged send rejects every caller in it, and the next sends go on', async () => {
    const inner = slowSink('x');
    const sink = createCoalescingSink(inner);
    const first = sink.send('t', [msg('a')]);
    const merged = [sink.send('t', [msg('x')]), sink.send('t', [msg('y')])];
    await first;
    const results = await Promise.allSettled(merged);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    await expect(sink.send('t', [msg('z')])).resolves.toBeUndefined();
  });
});
