/**
 * Coalesces concurrent sends: while a send to a topic is in flight, further sends to that topic wait and then go
 * out together as ONE produce request. The idempotent producer keeps one request in flight per broker, so with
 * many slices publishing at once this turns a queue of small requests into a few large ones. Each caller still
 * resolves only after its own messages were acknowledged (they are in the merged request).
 */
import type { KafkaSink, SinkMessage } from '../../output/kafka/index.js';

export interface CoalescingSinkOptions {
  /** Most messages merged into one send. @default 5000 */
  maxMessages?: number;
}

interface Pending {
  messages: readonly SinkMessage[];
  resolve: () => void;
  reject: (e: unknown) => void;
}

/** Wraps a sink so concurrent `send`s to the same topic share produce requests. */
export function createCoalescingSink(sink: KafkaSink, options: CoalescingSinkOptions = {}): KafkaSink {
  const maxMessages = options.maxMessages ?? 5000;
  const queues = new Map<string, Pending[]>();
  const busy = new Set<string>();

  const drain = async (topic: string): Promise<void> => {
    busy.add(topic);
    try {
      for (;;) {
        const queue = queues.get(topic) ?? [];
        if (queue.length === 0) return;
        const batch: Pending[] = [];
        let n = 0;
        while (
          queue.length > 0 &&
          (batch.length === 0 || n + (queue[0]?.messages.length ?? 0) <= maxMessages)
        ) {
          const p = queue.shift()!;
          batch.push(p);
          n += p.messages.length;
        }
        try {
          await sink.send(
            topic,
            batch.flatMap((p) => p.messages),
          );
          for (const p of batch) p.resolve();
        } catch (error) {
          for (const p of batch) p.reject(error);
        }
      }
    } finally {
      busy.delete(topic);
    }
  };

  return {
    connect: () => sink.connect(),
    disconnect: () => sink.disconnect(),
    send(topic, messages) {
      if (messages.length === 0) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const queue = queues.get(topic) ?? [];
        queue.push({ messages, resolve, reject });
        queues.set(topic, queue);
        if (!busy.has(topic)) void drain(topic);
      });
    },
  };
}
