import { EventEmitter } from 'node:events';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createConnectionLines } from '../../../../src/app/cli/connection-lines.js';

/** A stand-in for an ioredis client: the reporter only listens to its `error` and `ready` events. */
const fakeClient = (): Redis => new EventEmitter() as unknown as Redis;
const refused = (): Error =>
  Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });

describe('createConnectionLines', () => {
  afterEach(() => vi.restoreAllMocks());

  it('says one line per change of state, however many clients and retries', () => {
    const lines: string[] = [];
    const report = createConnectionLines({
      label: 'Redis',
      address: '127.0.0.1:1',
      onChange: (l) => lines.push(l),
    });
    const a = report.watch(fakeClient());
    const b = report.watch(fakeClient());
    a.emit('ready');
    for (let i = 0; i < 5; i++) {
      a.emit('error', refused());
      b.emit('error', refused());
    }
    expect(report.state).toBe('unreachable');
    a.emit('ready');
    b.emit('ready');
    b.emit('error', new Error('read ECONNRESET'));
    expect(lines).toEqual([
      'Redis unreachable at 127.0.0.1:1 (ECONNREFUSED), retrying',
      'Redis reachable again',
      'Redis unreachable at 127.0.0.1:1 (read ECONNRESET), retrying',
    ]);
  });

  it('keeps a real ioredis client from printing its unhandled-error trace', async () => {
    // A port that refuses: listen, note the port, close.
    const server = createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as { port: number };
    await new Promise<void>((r) => server.close(() => r()));
    const printed = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const lines: string[] = [];
    const report = createConnectionLines({
      label: 'Redis',
      address: `127.0.0.1:${port}`,
      onChange: (l) => lines.push(l),
    });
    const redis = report.watch(
      new Redis(`redis://127.0.0.1:${port}`, { maxRetriesPerRequest: null, retryStrategy: () => 20 }),
    );
    await vi.waitFor(() => expect(lines.length).toBe(1), { timeout: 5_000 });
    await new Promise((r) => setTimeout(r, 200)); // several more retries
    redis.disconnect();
    expect(lines).toEqual([`Redis unreachable at 127.0.0.1:${port} (ECONNREFUSED), retrying`]);
    expect(printed).not.toHaveBeenCalled();
  });
});
