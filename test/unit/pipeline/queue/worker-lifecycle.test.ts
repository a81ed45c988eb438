import { describe, expect, it } from 'vitest';
import { GamedataError, ServiceError } from '../../../../src/foundation/errors/index.js';
import {
  CONNECT_RETRY_POLICY,
  connectWithRetry,
  drainWithin,
  waitForStop,
} from '../../../../src/pipeline/queue/worker-lifecycle.js';
import { backoffDelay } from '../../../../src/foundation/retry/index.js';

const brokerStarting = () =>
  new ServiceError('Kafka unreachable at 127.0.0.1:1', 'kafka', { retriable: true });

describe('connectWithRetry', () => {
  it('waits for the services, retries a retriable ServiceError, and returns what connect made', async () => {
    const events: string[] = [];
    let attempts = 0;
    const stop = new AbortController();
    const runtime = await connectWithRetry({
      signal: stop.signal,
      waitUntilReady: () => {
        events.push('wait');
        return Promise.resolve(true);
      },
      connect: () => {
        attempts += 1;
        events.push(`connect ${attempts}`);
        return attempts < 2 ? Promise.reject(brokerStarting()) : Promise.resolve('runtime');
      },
      giveUpAfterMs: 60_000,
      onRetry: (e) => events.push(`retry ${e.name}`),
    });
    expect(runtime).toBe('runtime');
    expect(events).toEqual(['wait', 'connect 1', 'retry ServiceError', 'wait', 'connect 2']);
  });

  it('pauses 500 ms doubling to 5 s, no jitter (as the worker always did)', () => {
    const policy = { ...CONNECT_RETRY_POLICY, maxElapsedMs: Infinity };
    expect([1, 2, 3, 4, 5, 6].map((n) => backoffDelay(policy, n, () => 0.9))).toEqual([
      500, 1_000, 2_000, 4_000, 5_000, 5_000,
    ]);
  });

  /** Connects with every attempt failing with `failure()`; what it threw, and how many attempts it made. */
  async function failingConnect(failure: () => Error, giveUpAfterMs: number) {
    let attempts = 0;
    const error = await connectWithRetry({
      signal: new AbortController().signal,
      waitUntilReady: () => Promise.resolve(true),
      connect: () => {
        attempts += 1;
        return Promise.reject(failure());
      },
      giveUpAfterMs,
    }).catch((e: unknown) => e);
    return { error, attempts };
  }

  it('throws at once what is not a retriable ServiceError, normalised to a GamedataError', async () => {
    const { error, attempts } = await failingConnect(() => new Error('schema mismatch'), 60_000);
    expect(attempts).toBe(1);
    expect(error).toBeInstanceOf(GamedataError);
    expect((error as Error).message).toBe('schema mismatch');
  });

  it('gives up with the last failure once giveUpAfterMs passed since the first failure', async () => {
    const { error, attempts } = await failingConnect(brokerStarting, 0);
    expect(attempts).toBe(1);
    expect(error).toBeInstanceOf(ServiceError);
  });

  it('returns undefined when stopped: before the services answer, or during a pause', async () => {
    const stopped = new AbortController();
    stopped.abort();
    expect(
      await connectWithRetry({
        signal: stopped.signal,
        waitUntilReady: (signal) => Promise.resolve(!signal.aborted),
        connect: () => Promise.resolve('never'),
        giveUpAfterMs: 60_000,
      }),
    ).toBeUndefined();
    const stop = new AbortController();
    let attempts = 0;
    const pending = connectWithRetry({
      signal: stop.signal,
      waitUntilReady: () => Promise.resolve(true),
      connect: () => {
        attempts += 1;
        return Promise.reject(brokerStarting());
      },
      giveUpAfterMs: 60_000,
      onRetry: () => setTimeout(() => stop.abort(), 10),
    });
    await expect(pending).resolves.toBeUndefined();
    expect(attempts).toBe(1);
  });
});

describe('drainWithin and waitForStop', () => {
  it('runs the steps in order and says whether they finished in time', async () => {
    const order: number[] = [];
    const step =
      (n: number, ms = 0) =>
      () =>
        new Promise<void>((resolve) => setTimeout(() => (order.push(n), resolve()), ms));
    expect(await drainWithin(1_000, [step(1), step(2), step(3)])).toBe(true);
    expect(order).toEqual([1, 2, 3]);
    expect(await drainWithin(20, [step(4, 500)])).toBe(false);
    // a failing step ends the drain as finished
    expect(await drainWithin(1_000, [() => Promise.reject(new Error('x')), step(5)])).toBe(true);
    expect(order).toEqual([1, 2, 3]);
  });

  it('waitForStop resolves once the signal aborts (at once when it has)', async () => {
    const stop = new AbortController();
    let done = false;
    const waiting = waitForStop(stop.signal).then(() => (done = true));
    await new Promise((r) => setTimeout(r, 10));
    expect(done).toBe(false);
    stop.abort();
    await waiting;
    expect(done).toBe(true);
    await expect(waitForStop(stop.signal)).resolves.toBeUndefined();
  });
});
