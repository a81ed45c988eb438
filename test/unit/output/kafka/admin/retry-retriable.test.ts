/* eslint-disable @typescript-eslint/require-await -- the calls stand for async Kafka admin calls */
import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../../../../src/foundation/errors/index.js';
import {
  fetchTopicOffsets,
  isRetriableKafkaError,
  retryRetriable,
} from '../../../../../src/output/kafka/admin/retry-retriable.js';

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

  it("turns kafkajs' TypeError for a ListOffsets round with no answer (leaders moving) into a retriable ServiceError, by class", async () => {
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
    // The message decides nothing: a bare TypeError is not retriable, whatever it says.
    expect(isRetriableKafkaError(emptyOffsets())).toBe(false);
    let calls = 0;
    const admin = {
      fetchTopicOffsets: async (topic: string) => {
        calls += 1;
        if (calls < 2) throw emptyOffsets();
        return [{ partition: 0, offset: '5', high: '5', low: '0', topic }];
      },
    };
    const once = await fetchTopicOffsets(admin, 't').catch((e: unknown) => e);
    expect(once).toBeInstanceOf(ServiceError);
    expect((once as ServiceError).retriable).toBe(true);
    expect((once as ServiceError).cause).toBeInstanceOf(TypeError);
    calls = 0;
    const answer = await retryRetriable(() => fetchTopicOffsets(admin, 't'), { firstDelayMs: 1 });
    expect(answer).toEqual([{ partition: 0, offset: '5', high: '5', low: '0', topic: 't' }]);
    expect(calls).toBe(2);
    // Another failure of the call passes through as it was.
    const refused = Object.assign(new Error('authorization failed'), { retriable: false });
    await expect(fetchTopicOffsets({ fetchTopicOffsets: () => Promise.reject(refused) }, 't')).rejects.toBe(
      refused,
    );
  });
});
