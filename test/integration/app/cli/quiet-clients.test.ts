/**
 * Quiet clients (issue 25): Redis goes away and comes back while `gamedata backfill --wait` follows a run. The
 * command says one line when it goes and one when it is back, never an `[ioredis] Unhandled error event` or a
 * stack trace (it printed one trace per reconnect attempt before), and follows the run to its end.
 *
 * "Redis goes away" is a loopback TCP forwarder in front of the shared Redis, stopped (its sockets destroyed) and
 * started again: nothing shared is stopped.
 */
import { spawn } from 'node:child_process';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../../../e2e/pipeline-harness.js';
import type { PipelineWorkers } from '../../../../src/pipeline/queue/index.js';
import { freePort } from '../../../helpers/free-ports.js';

const ROOT = fileURLToPath(new URL('../../../..', import.meta.url));
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Forwards `port` on loopback to `host:targetPort` while started. */
function forwarder(
  port: number,
  host: string,
  targetPort: number,
): { start(): Promise<void>; stop(): Promise<void> } {
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  return {
    async start() {
      server = createServer((client) => {
        const upstream = connect(targetPort, host);
        for (const s of [client, upstream]) {
          sockets.add(s);
          s.on('error', () => {
            client.destroy();
            upstream.destroy();
          });
          s.on('close', () => sockets.delete(s));
        }
        client.pipe(upstream).pipe(client);
      });
      await new Promise<void>((r) => server?.listen(port, '127.0.0.1', r));
    },
    async stop() {
      const s = server;
      server = undefined;
      // Stop accepting first, then cut the open connections (close() resolves once they are gone).
      const closed = new Promise<void>((r) => (s === undefined ? r() : s.close(() => r())));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}

describe('a Redis restart under backfill --wait', () => {
  let h: Harness;
  let workers: PipelineWorkers | undefined;
  beforeAll(async () => {
    h = await createHarness('quiet-clients');
  });
  afterAll(async () => {
    await workers?.close();
    await h?.cleanup();
  });

  it('is one line when Redis goes, one when it is back, no stack trace; the run is followed to its end', async () => {
    const redis = new URL(h.settings.redisUrl);
    const port = await freePort();
    const proxy = forwarder(port, redis.hostname, Number(redis.port || '6379'));
    await proxy.start();
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        'src/app/cli/main.ts',
        'backfill',
        'donations',
        'parties',
        '--full-history',
        '--wait',
      ],
      {
        cwd: ROOT,
        env: { ...h.env, REDIS_URL: `redis://127.0.0.1:${port}` },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const lines: string[] = [];
    let partial = '';
    const onData = (b: Buffer): void => {
      const parts = (partial + b.toString()).split('\n');
      partial = parts.pop() ?? '';
      lines.push(...parts);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    const waitFor = async (pattern: RegExp, timeoutMs: number): Promise<void> => {
      const deadline = Date.now() + timeoutMs;
      while (!lines.some((l) => pattern.test(l))) {
        if (Date.now() > deadline || child.exitCode !== null)
          throw new Error(`no line matching ${pattern}:\n${lines.join('\n')}`);
        await sleep(100);
      }
    };
    try {
      await waitFor(/^run \S+: \d+ slices/, 60_000);
      await proxy.stop();
      await waitFor(
        new RegExp(`^backfill: Redis unreachable at 127\\.0\\.0\\.1:${port} \\(\\w+\\), retrying$`),
        20_000,
      );
      await sleep(4_000); // ioredis retries several times meanwhile
      await proxy.start();
      await waitFor(/^backfill: Redis reachable again$/, 30_000);
      // Workers (straight to Redis) do the run; the command follows it to its end.
      workers = await h.startWorkers(8);
      const code = await Promise.race([exited, sleep(180_000).then(() => 'timeout' as const)]);
      if (partial !== '') lines.push(partial);
      expect({ code, lines }).toMatchObject({ code: 0 });
      expect(lines.some((l) => /^run \S+ completed in /.test(l))).toBe(true);
      expect(lines.filter((l) => /Redis unreachable/.test(l))).toHaveLength(1);
      expect(lines.filter((l) => /Redis reachable again/.test(l))).toHaveLength(1);
      expect(lines.filter((l) => /^\s+at\s|\[ioredis\]|Unhandled error|ECONNREFUSED.*\{$/.test(l))).toEqual(
        [],
      );
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      await proxy.stop();
    }
  }, 300_000);
});
