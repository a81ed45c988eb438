import { describe, expect, it } from 'vitest';
import { lazyConnected } from '../../../../../src/output/kafka/transactions/checkpoint-reader.js';

/** A client that counts its connects and disconnects (what kafkajs' clients are to `lazyConnected`). */
function fakeClients(failFirstConnect = false) {
  const made: { connected: number; disconnected: number }[] = [];
  let connects = 0;
  return {
    made,
    make: () => {
      const c = { connected: 0, disconnected: 0 };
      made.push(c);
      return {
        connect: async () => {
          await Promise.resolve();
          if (failFirstConnect && connects++ === 0) throw new Error('ECONNREFUSED');
          c.connected += 1;
        },
        disconnect: async () => {
          await Promise.resolve();
          c.disconnected += 1;
        },
      };
    },
  };
}

describe('lazyConnected', () => {
  it('connects once on first use and shares that client', async () => {
    const f = fakeClients();
    const c = lazyConnected(f.make);
    const [a, b] = await Promise.all([c.get(), c.get()]);
    expect(a).toBe(b);
    expect(f.made).toEqual([{ connected: 1, disconnected: 0 }]);
    await c.close();
    expect(f.made).toEqual([{ connected: 1, disconnected: 1 }]);
  });

  it('makes the client again after a failed connect', async () => {
    const f = fakeClients(true);
    const c = lazyConnected(f.make);
    await expect(c.get()).rejects.toThrow('ECONNREFUSED');
    await c.get();
    expect(f.made.map((x) => x.connected)).toEqual([0, 1]);
    await c.close();
  });

  it('connects nothing after close: a late user gets an error, not a client nobody will close', async () => {
    const f = fakeClients();
    const c = lazyConnected(f.make, 'the test client');
    await c.get();
    await c.close();
    await expect(c.get()).rejects.toThrow('the test client was used after it was closed');
    expect(f.made).toEqual([{ connected: 1, disconnected: 1 }]);
  });

  it('closing a never-used client connects nothing', async () => {
    const f = fakeClients();
    const c = lazyConnected(f.make);
    await c.close();
    await expect(c.get()).rejects.toThrow('closed');
    expect(f.made).toHaveLength(0);
  });
});
