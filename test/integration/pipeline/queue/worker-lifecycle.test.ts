/**
 * A worker never hangs (issue 17), with the real `gamedata worker` CLI against the real services:
 * - started while Kafka is unreachable, it says so once, answers /healthz (200) and /readyz (503, Kafka
 *   unreachable), and when Kafka becomes reachable 20 s later it says so once and processes the run's slices with
 *   no restart (same process); then SIGTERM drains and it exits 0;
 * - `KAFKA_BROKERS=127.0.0.1:1 gamedata worker --give-up-after 10s` exits 1 within 15 s with one fatal line and no
 *   stack trace.
 *
 * "Kafka down, then up" is a loopback TCP forwarder on a free port in front of the shared broker, listening only
 * from the 20th second: the worker's bootstrap address refuses connections until then, exactly as a broker that is
 * not started yet, and the test works wherever the services come from (local stack, containers, env) without
 * stopping anything shared.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../../../e2e/pipeline-harness.js';
import { freePort, freePorts } from '../../../helpers/free-ports.js';
import { startWorker, type Worker } from '../../../helpers/cli-worker.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Forwards `port` on loopback to `target` (host:port) once started. */
function forwarder(port: number, target: string): { start(): Promise<void>; stop(): Promise<void> } {
  const [host, targetPort] = [
    target.slice(0, target.lastIndexOf(':')),
    Number(target.slice(target.lastIndexOf(':') + 1)),
  ];
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
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => (server === undefined ? r() : server.close(() => r())));
    },
  };
}

async function get(url: string): Promise<{ status: number; body: string }> {
  const res = await fetch(url, { signal: AbortSignal.timeout(5_000) });
  return { status: res.status, body: await res.text() };
}

const STACK_TRACE = /^\s+at\s/;

describe('gamedata worker never hangs', () => {
  let h: Harness;
  const workers: Worker[] = [];
  beforeAll(async () => {
    h = await createHarness('lifecycle');
  });
  afterAll(async () => {
    for (const w of workers) if (w.child.exitCode === null) w.child.kill('SIGKILL');
    await h?.cleanup();
  });

  it('KAFKA_BROKERS=127.0.0.1:1 --give-up-after 10s: exits 1 within 15 s with one fatal line, no stack trace', async () => {
    const w = startWorker({ ...h.env, KAFKA_BROKERS: '127.0.0.1:1', GAMEDATA_METRICS_PORT: '0' }, [
      '--give-up-after',
      '10s',
    ]);
    workers.push(w);
    const { code, atMs } = await w.exited;
    const lines = w.lines.filter((l) => l.trim() !== '');
    expect(code).toBe(1);
    expect(atMs).toBeLessThan(15_000);
    // Gave up no earlier than the deadline.
    expect(atMs).toBeGreaterThanOrEqual(10_000);
    const fatal = lines.filter((l) => l.startsWith('gamedata:'));
    expect(fatal).toHaveLength(1);
    expect(fatal[0]).toMatch(
      /^gamedata: ServiceError: Kafka unreachable at 127\.0\.0\.1:1 for 10s .*giving up$/,
    );
    // Said once (not once per retry), then the fatal line; nothing else.
    expect(lines.filter((l) => /Kafka unreachable at 127\.0\.0\.1:1 .*retrying/.test(l))).toHaveLength(1);
    expect(lines).toHaveLength(2);
    expect(lines.some((l) => STACK_TRACE.test(l))).toBe(false);
  }, 30_000);

  it('started with Kafka unreachable: probes answer, resumes by itself 20 s later, processes slices with no restart, SIGTERM drains', async () => {
    const [proxyPort = 0, metricsPort = 0] = await freePorts(2);
    const broker = h.settings.kafkaBrokers[0] as string;
    const proxy = forwarder(proxyPort, broker);
    const w = startWorker({ ...h.env, KAFKA_BROKERS: `127.0.0.1:${proxyPort}` }, [
      '--metrics-port',
      String(metricsPort),
      '--quiet',
      '--no-schedules',
      '--drain-timeout',
      '30s',
    ]);
    workers.push(w);
    try {
      await w.waitFor(new RegExp(`Kafka unreachable at 127\\.0\\.0\\.1:${proxyPort} .*retrying`), 20_000);
      const base = `http://127.0.0.1:${metricsPort}`;
      // Alive but not ready while Kafka is unreachable.
      expect(await get(`${base}/healthz`)).toEqual({ status: 200, body: 'ok\n' });
      const notReady = await get(`${base}/readyz`);
      expect(notReady.status).toBe(503);
      expect(JSON.parse(notReady.body)).toEqual({
        ready: false,
        services: {
          kafka: 'unreachable',
          'schema-registry': 'reachable',
          redis: 'reachable',
          upstream: 'reachable',
        },
      });

      // Work waits in the queue meanwhile.
      const runId = await h.enqueue({ resources: ['donations', 'parties'], fullHistory: true });
      await sleep(Math.max(0, 20_000 - (Date.now() - w.startedAt)));
      expect(w.child.exitCode).toBeNull();
      await proxy.start();

      await w.waitFor(/Kafka reachable again/, 30_000);
      await w.waitFor(/worker: pid /, 30_000);
      const result = await h.wait(runId, 180_000);
      expect(result.counters.published).toBeGreaterThan(0);
      for (const resource of ['donations', 'parties'] as const) {
        const r = await h.verify(resource);
        expect({ resource, missing: r.missing }).toEqual({ resource, missing: 0 });
      }
      // The same process did it all: never exited, said each change of state once.
      expect(w.child.exitCode).toBeNull();
      expect(w.lines.filter((l) => /Kafka unreachable/.test(l))).toHaveLength(1);
      expect(w.lines.filter((l) => /Kafka reachable again/.test(l))).toHaveLength(1);
      const ready = await get(`${base}/readyz`);
      expect(ready.status).toBe(200);
      expect(JSON.parse(ready.body)).toMatchObject({ ready: true });

      w.child.kill('SIGTERM');
      const { code } = await w.exited;
      expect(code).toBe(0);
      expect(w.lines).toContain('worker: closed');
      expect(w.lines.some((l) => STACK_TRACE.test(l))).toBe(false);
    } finally {
      if (w.child.exitCode === null) w.child.kill('SIGKILL');
      await proxy.stop();
    }
  }, 300_000);
  it('Redis goes away later: said once, /readyz 503, back by itself; SIGTERM while it is away exits 1 within --drain-timeout', async () => {
    const [redisPort = 0, metricsPort = 0] = await freePorts(2);
    const redisTarget = new URL(h.settings.redisUrl);
    const proxy = forwarder(redisPort, `${redisTarget.hostname}:${redisTarget.port || '6379'}`);
    await proxy.start();
    const w = startWorker({ ...h.env, REDIS_URL: `redis://127.0.0.1:${redisPort}` }, [
      '--metrics-port',
      String(metricsPort),
      '--quiet',
      '--no-schedules',
      '--drain-timeout',
      '3s',
    ]);
    workers.push(w);
    const base = `http://127.0.0.1:${metricsPort}`;
    const readyz = async (): Promise<{ status: number; services: Record<string, string> }> => {
      const r = await get(`${base}/readyz`);
      return {
        status: r.status,
        services: (JSON.parse(r.body) as { services: Record<string, string> }).services,
      };
    };
    const until = async (want: number): Promise<void> => {
      for (let i = 0; i < 60 && (await readyz()).status !== want; i++) await sleep(500);
    };
    try {
      await w.waitFor(/worker: pid /, 60_000);
      expect((await readyz()).status).toBe(200);

      await proxy.stop();
      const down = new RegExp(`Redis unreachable at 127\\.0\\.0\\.1:${redisPort} .*retrying`);
      await w.waitFor(down, 20_000);
      await until(503);
      expect(await readyz()).toEqual({
        status: 503,
        services: {
          kafka: 'reachable',
          'schema-registry': 'reachable',
          redis: 'unreachable',
          upstream: 'reachable',
        },
      });

      await proxy.start();
      await w.waitFor(/Redis reachable again/, 20_000);
      await until(200);
      expect((await readyz()).status).toBe(200);
      expect(w.lines.filter((l) => down.test(l))).toHaveLength(1);
      expect(w.lines.filter((l) => /Redis reachable again/.test(l))).toHaveLength(1);

      // Away again, then SIGTERM: the drain cannot reach Redis; the deadline ends it.
      await proxy.stop();
      for (let i = 0; i < 40 && w.lines.filter((l) => down.test(l)).length < 2; i++) await sleep(500);
      expect(w.lines.filter((l) => down.test(l))).toHaveLength(2);
      const killedAt = Date.now();
      w.child.kill('SIGTERM');
      const { code } = await w.exited;
      expect(code).toBe(1);
      expect(Date.now() - killedAt).toBeLessThan(10_000);
      expect(w.lines.at(-1), w.lines.join('\n')).toMatch(
        /^gamedata: AbortedError: worker: drain did not finish within 3s/,
      );
      // One line per change of state: no client's reconnect noise, no stack trace.
      expect(w.lines.filter((l) => /ioredis|ECONNREFUSED/.test(l) && !down.test(l))).toEqual([]);
      expect(w.lines.some((l) => STACK_TRACE.test(l))).toBe(false);
    } finally {
      if (w.child.exitCode === null) w.child.kill('SIGKILL');
      await proxy.stop();
    }
  }, 180_000);
  it('--processes 2: SIGTERM drains both children and the supervisor exits 0', async () => {
    const metricsPort = await freePort();
    const w = startWorker(h.env, [
      '--processes',
      '2',
      '--metrics-port',
      String(metricsPort),
      '--no-schedules',
    ]);
    workers.push(w);
    try {
      for (let i = 0; i < 120 && w.lines.filter((l) => l.startsWith('worker: pid ')).length < 2; i++)
        await sleep(500);
      expect(w.lines.filter((l) => l.startsWith('worker: pid '))).toHaveLength(2);
      w.child.kill('SIGTERM');
      const { code } = await w.exited;
      expect(code, w.lines.join('\n')).toBe(0);
      expect(w.lines.filter((l) => l === 'worker: closed')).toHaveLength(2);
      expect(w.lines.filter((l) => /exited with code|exiting without draining/.test(l))).toEqual([]);
    } finally {
      if (w.child.exitCode === null) w.child.kill('SIGKILL');
    }
  }, 120_000);
});
