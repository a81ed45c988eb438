import { afterEach, describe, expect, it } from 'vitest';
import {
  createPipelineMetrics,
  startMetricsServer,
  type MetricsServer,
} from '../../../../src/foundation/metrics/index.js';

describe('pipeline metrics', () => {
  let server: MetricsServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('counts per resource and renders Prometheus text', async () => {
    const m = createPipelineMetrics({ processMetrics: false });
    m.recordsFetched.inc({ resource: 'transactions' }, 100);
    m.recordsPublished.inc({ resource: 'transactions' }, 97);
    m.recordsDeadLettered.inc({ resource: 'transactions', reason: 'invalid-date' }, 3);
    m.batchSize.observe(50);
    m.upstreamRounds.inc(3);
    const text = await m.render();
    expect(text).toContain('gamedata_records_fetched_total{resource="transactions"} 100');
    expect(text).toContain('gamedata_records_published_total{resource="transactions"} 97');
    expect(text).toContain(
      'gamedata_records_dead_lettered_total{resource="transactions",reason="invalid-date"} 3',
    );
    expect(text).toContain('gamedata_batch_size_bucket{le="50"} 1');
    expect(text).toContain('gamedata_upstream_rounds_total 3');
  });

  it('serves /metrics over HTTP on a free port', async () => {
    const m = createPipelineMetrics({ processMetrics: false, defaultLabels: { worker: 'w1' } });
    m.pages.inc({ resource: 'users' });
    server = await startMetricsServer(m, { port: 0 });
    const res = await fetch(server.url);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('gamedata_pages_total{resource="users",worker="w1"} 1');
    const missing = await fetch(server.url.replace('/metrics', '/nope'));
    expect(missing.status).toBe(404);
  });
});
