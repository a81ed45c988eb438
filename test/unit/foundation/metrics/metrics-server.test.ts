import { describe, expect, it } from 'vitest';
import {
  createPipelineMetrics,
  startMetricsServer,
  type Readiness,
} from '../../../../src/foundation/metrics/index.js';

describe('startMetricsServer probes', () => {
  it('/healthz is 200; /readyz follows the readiness callback (200 or 503 with the services); loopback by default', async () => {
    let state: Readiness = { ready: false, services: { kafka: 'unreachable', redis: 'reachable' } };
    const server = await startMetricsServer(createPipelineMetrics(), { port: 0, readiness: () => state });
    try {
      expect(server.url).toBe(`http://127.0.0.1:${server.port}/metrics`);
      const base = `http://127.0.0.1:${server.port}`;
      const health = await fetch(`${base}/healthz`);
      expect([health.status, await health.text()]).toEqual([200, 'ok\n']);
      const down = await fetch(`${base}/readyz`);
      expect(down.status).toBe(503);
      expect(await down.json()).toEqual(state);
      state = { ready: true, services: { kafka: 'reachable', redis: 'reachable' } };
      const up = await fetch(`${base}/readyz`);
      expect([up.status, await up.json()]).toEqual([200, state]);
      expect((await fetch(`${base}/nope`)).status).toBe(404);
    } finally {
      await server.close();
    }
  });

  it('a second start on the same port with the same metrics shares the server until the last close', async () => {
    const metrics = createPipelineMetrics();
    const first = await startMetricsServer(metrics, {
      port: 0,
      readiness: () => ({ ready: false, services: {} }),
    });
    const second = await startMetricsServer(metrics, { port: first.port });
    expect(second.url).toBe(first.url);
    await first.close();
    // Still served (one handle left), with the first start's readiness.
    expect((await fetch(`http://127.0.0.1:${first.port}/readyz`)).status).toBe(503);
    await second.close();
    await expect(fetch(`http://127.0.0.1:${first.port}/healthz`)).rejects.toThrow();
    // Other metrics on a taken port: the port is really taken.
    const third = await startMetricsServer(metrics, { port: 0 });
    await expect(startMetricsServer(createPipelineMetrics(), { port: third.port })).rejects.toThrow(
      /EADDRINUSE/,
    );
    await third.close();
  });
});
