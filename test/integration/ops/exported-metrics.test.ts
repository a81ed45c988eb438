/**
 * The operations files against a live worker: a real `gamedata worker` (the CLI, as in production) processes a
 * small run, its /metrics is scraped, and every metric the alert rules (ops/prometheus) and the dashboard
 * (ops/grafana) name is declared there. The readiness and queue gauges the rules watch carry values.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../../e2e/pipeline-harness.js';
import { alertRuleMetrics, dashboardMetrics, exposedNames, missingFrom } from '../../helpers/ops-metrics.js';
import { freePort } from '../../helpers/free-ports.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The value of the first sample of `name` whose labels contain `labels` (e.g. `service="redis"`). */
function sample(exposition: string, name: string, labels = ''): number | undefined {
  const line = exposition
    .split('\n')
    .find((l) => (l.startsWith(`${name}{`) || l.startsWith(`${name} `)) && l.includes(labels));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe('ops files vs a live worker', () => {
  let h: Harness;
  let child: ReturnType<typeof spawn> | undefined;
  const lines: string[] = [];
  beforeAll(async () => {
    h = await createHarness('ops-metrics');
  });
  afterAll(async () => {
    if (child !== undefined && child.exitCode === null) child.kill('SIGKILL');
    await h?.cleanup();
  });

  it('every metric of the alert rules and the dashboard is exported by /metrics', async () => {
    const port = await freePort();
    child = spawn(
      process.execPath,
      ['--import', 'tsx', 'src/app/cli/main.ts', 'worker', '--metrics-port', String(port), '--quiet'],
      { cwd: ROOT, env: h.env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    for (const s of [child.stdout, child.stderr]) s?.on('data', (b: Buffer) => lines.push(b.toString()));
    const runId = await h.enqueue({ resources: ['donations'], fullHistory: true });
    const result = await h.wait(runId, 120_000);
    expect(result.counters.published).toBeGreaterThan(0);

    // After the run: the heartbeat (every 5 s) has read the queue, the scrape reads readiness.
    let text = '';
    for (let i = 0; i < 20; i++) {
      const res = await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(5_000) });
      expect(res.status).toBe(200);
      text = await res.text();
      if (sample(text, 'gamedata_slices_queued', 'state="waiting"') !== undefined) break;
      await sleep(500);
    }
    const declared = exposedNames(text);
    expect(missingFrom(alertRuleMetrics(), declared)).toEqual([]);
    expect(missingFrom(dashboardMetrics(), declared)).toEqual([]);

    expect(sample(text, 'gamedata_worker_ready')).toBe(1);
    for (const service of ['kafka', 'schema-registry', 'redis'])
      expect({ service, up: sample(text, 'gamedata_service_up', `service="${service}"`) }).toEqual({
        service,
        up: 1,
      });
    expect(sample(text, 'gamedata_slices_queued', 'state="waiting"')).toBe(0);
    expect(sample(text, 'gamedata_pages_total', 'resource="donations"')).toBeGreaterThan(0);
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);

    child.kill('SIGTERM');
    const code = await new Promise<number | null>((r) => child?.once('exit', r));
    expect({ code, output: code === 0 ? '' : lines.join('') }).toEqual({ code: 0, output: '' });
  }, 240_000);
});
