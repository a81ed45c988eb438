/* eslint-disable @typescript-eslint/require-await -- the calls stand for async Kafka admin calls */
import { describe, expect, it } from 'vitest';
import { isRetriableKafkaError, retryRetriable } from '../../../../src/sink/admin/retry-retriable.js';

const notLeader = () =>
  Object.assign(new Error('This server is not the leader for that topic-partition'), {
    retriable: true,
  });

describe('retryRetriable', () => {
  it('retries what Kafka calls retriable until it answers', async () => {
    let calls = 0;
    const answer = await retryRetriable(
      async () => {
        calls += 1;
        if (calls < 3) throw notLeader();
        return 'ok';
      },
      { firstDelayMs: 1 },
    );
    expect(answer).toBe('ok');
    expect(calls).toBe(3);
  });

  it('gives up after the attempts, with the last error', async () => {
    let calls = 0;
    const failing = retryRetriable(
      async () => {
        calls += 1;
        throw notLeader();
      },
      { attempts: 4, firstDelayMs: 1 },
    );
    await expect(failing).rejects.toThrow('not the leader');
    expect(calls).toBe(4);
  });

  it('fails at once on an error that is not retriable (also when wrapped)', async () => {
    let calls = 0;
    await expect(
      retryRetriable(async () => {
        calls += 1;
        throw new Error('topic authorization failed');
      }),
    ).rejects.toThrow('authorization');
    expect(calls).toBe(1);
    expect(isRetriableKafkaError(new Error('x', { cause: notLeader() }))).toBe(true);
    expect(isRetriableKafkaError(Object.assign(new Error('x'), { retriable: false }))).toBe(false);
  });

  it("retries kafkajs' TypeError for a ListOffsets round with no answer (leaders moving), and no other TypeError", async () => {
    // What admin.fetchTopicOffsets throws in kafkajs 2.2.4 when `low` (or `high`) came back empty.
    const emptyOffsets = (): TypeError => {
      const low: Array<{ partitions: unknown }> = [];
      try {
        const { partitions } = low.pop() as { partitions: unknown };
        return new TypeError(String(partitions));
      } catch (error) {
        return error as TypeError;
      }
    };
    expect(emptyOffsets().message).toContain("of 'low.pop(...)'");
    expect(isRetriableKafkaError(emptyOffsets())).toBe(true);
    expect(isRetriableKafkaError(new TypeError("Cannot read properties of undefined (reading 'x')"))).toBe(
      false,
    );
    let calls = 0;
    const answer = await retryRetriable(
      async () => {
        calls += 1;
        if (calls < 2) throw emptyOffsets();
        return 'ok';
      },
      { firstDelayMs: 1 },
    );
    expect(answer).toBe('ok');
  });
});
