import { describe, expect, it } from 'vitest';
import { createBackoff, DEFAULT_RETRY_POLICY } from '../../../../src/foundation/retry/index.js';
import { AbortedError } from '../../../../src/foundation/errors/index.js';

describe('createBackoff (the pause of a loop that never gives up)', () => {
  const policy = { ...DEFAULT_RETRY_POLICY, initialMs: 200, maxMs: 1_000, jitter: 0 };

  it('pauses the policy backoff per failure in a row, up to maxMs, and a success starts over', async () => {
    const pauses: number[] = [];
    const backoff = createBackoff(policy, { sleep: (ms) => Promise.resolve(void pauses.push(ms)) });
    for (let i = 0; i < 5; i++) await backoff.pause();
    expect(pauses).toEqual([200, 400, 800, 1_000, 1_000]);
    expect(backoff.failures()).toBe(5);
    backoff.reset();
    await backoff.pause();
    expect(pauses.at(-1)).toBe(200);
  });

  it('draws the jittered share downwards, as the one policy does', async () => {
    const pauses: number[] = [];
    const backoff = createBackoff(
      { ...policy, jitter: 0.5 },
      { random: () => 1, sleep: (ms) => Promise.resolve(void pauses.push(ms)) },
    );
    await backoff.pause();
    expect(pauses).toEqual([100]);
  });

  it('an aborted signal stops the pause with an AbortedError (the one sleep)', async () => {
    const c = new AbortController();
    c.abort();
    await expect(createBackoff(policy).pause(c.signal)).rejects.toBeInstanceOf(AbortedError);
  });
});
