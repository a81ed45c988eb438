/**
 * The acceptance run of issue 11, as a new user would do it: a simulator (seed 7, scale small, `--keyed-limit 60`,
 * realistic latency), four `gamedata worker` processes on ONE API key, then
 * `gamedata backfill transactions users parties --full-history --wait`. Checked afterwards: every topic exact record
 * by record against the simulator's truth, 0 answered 429, requests <= 1.3 x ceil(procedures / 50), procedures
 * <= 1 576 (main before the shared budget: 219 requests, 1 576 procedures, 4 x 429).
 *
 *   npx tsx bench/budget-acceptance.ts [--workers 4] [--concurrency N] [--limit 60]
 *
 * Services: KAFKA_BROKERS / SCHEMA_REGISTRY_URL / REDIS_URL (the local stack's
 * defaults when unset). Prints one Markdown line per figure and exits 1 when a criterion fails.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { REALISTIC_LATENCY } from '../tools/simulator/index.js';
import type { ResourceName } from '../src/foundation/models/resources.js';
import { createHarness } from '../test/e2e/pipeline-harness.js';
import { describeMachine } from './machine.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const args = process.argv.slice(2);
const flag = (name: string, def: string): string => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? (args[i + 1] ?? def) : def;
};
const workerCount = Number(flag('workers', '4'));
const concurrency = flag('concurrency', '');
const limit = Number(flag('limit', '60'));
const RESOURCES: ResourceName[] = ['transactions', 'users', 'parties'];
const TODAY_PROCEDURES = 1576;

process.env['KAFKA_BROKERS'] ??= '127.0.0.1:19092';
process.env['SCHEMA_REGISTRY_URL'] ??= 'http://127.0.0.1:18081/apis/ccompat/v7';
process.env['REDIS_URL'] ??= 'redis://127.0.0.1:16379';

function cli(argv: string[], env: NodeJS.ProcessEnv): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', 'src/app/cli/main.ts', ...argv], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

function exited(p: ChildProcess): Promise<number> {
  return new Promise((resolve) => p.once('exit', (code) => resolve(code ?? 1)));
}

async function main(): Promise<void> {
  console.log(`machine: ${describeMachine()}; date ${new Date().toISOString()}`);
  const h = await createHarness('budget-accept', {
    seed: 7,
    scale: 'small',
    latency: REALISTIC_LATENCY,
    rateLimit: { enabled: true, keyed: limit },
  });
  const workers: ChildProcess[] = [];
  let failed = false;
  try {
    const env = { ...h.env, GAMEDATA_METRICS_PORT: 'off' };
    const workerArgs = [
      'worker',
      '--quiet',
      '--no-schedules',
      ...(concurrency ? ['--concurrency', concurrency] : []),
    ];
    let stderr = '';
    for (let i = 0; i < workerCount; i++) {
      const w = cli(workerArgs, env);
      w.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
      workers.push(w);
    }
    // Every worker up (its "worker: pid" line) before the run starts, so all four share the work.
    const deadline = Date.now() + 60_000;
    while ((stderr.match(/worker: pid/g) ?? []).length < workerCount) {
      if (Date.now() > deadline) throw new Error(`workers did not start:\n${stderr.slice(-3000)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    h.sim.resetStats();
    const started = performance.now();
    const backfill = cli(['backfill', ...RESOURCES, '--full-history', '--wait'], env);
    let out = '';
    backfill.stdout?.on('data', (c: Buffer) => (out += c.toString()));
    backfill.stderr?.on('data', (c: Buffer) => (out += c.toString()));
    const code = await exited(backfill);
    const wall = (performance.now() - started) / 1000;
    if (code !== 0) throw new Error(`backfill exited ${code}:\n${out.slice(-3000)}\n${stderr.slice(-3000)}`);
    const s = h.sim.stats();
    const procedures = s.procedureCalls.total;
    const requests = s.httpRequests;
    const ideal = Math.ceil(procedures / 50);
    console.log(
      `workers: ${workerCount} x concurrency ${concurrency || 'default'}; keyed limit ${limit} / 60 s`,
    );
    console.log(
      out
        .trim()
        .split('\n')
        .filter((l) => l.startsWith('run '))
        .join('\n'),
    );
    for (const r of RESOURCES) {
      const report = await h.verify(r);
      const exact = report.ok && report.missing === 0 && report.unexpected === 0 && report.duplicates === 0;
      if (!exact) failed = true;
      console.log(
        `${r}: ${exact ? 'exact' : 'NOT exact'} (expected ${report.expected}, matched ${report.matched}, missing ${report.missing}, unexpected ${report.unexpected}, duplicates ${report.duplicates}, dead letters ${report.dlq.found}/${report.dlq.expected})`,
      );
    }
    const ratio = requests / ideal;
    const checks = [
      [`429 answered: ${s.rateLimited}`, s.rateLimited === 0],
      [
        `requests ${requests} vs ceil(${procedures} / 50) = ${ideal}: ${ratio.toFixed(2)}x (<= 1.3x)`,
        ratio <= 1.3,
      ],
      [`procedures ${procedures} (<= ${TODAY_PROCEDURES})`, procedures <= TODAY_PROCEDURES],
    ] as const;
    for (const [text, ok] of checks) {
      console.log(`${ok ? 'PASS' : 'FAIL'} ${text}`);
      if (!ok) failed = true;
    }
    console.log(
      `wall ${wall.toFixed(1)} s (floor at ${limit} / 60 s: ${((requests / limit) * 60).toFixed(1)} s); ` +
        `procedures per request ${(procedures / requests).toFixed(1)}; batch sizes ${JSON.stringify(s.batchSizes)}; ` +
        `by procedure ${JSON.stringify(s.procedureCalls.byProcedure)}`,
    );
    // The workers' slots while the key bound (their "N slices at once" lines, see `decideConcurrency`).
    const sizing = [...stderr.matchAll(/worker: (\d+) slices at once \(was (\d+)\)/g)].map((m) =>
      Number(m[1]),
    );
    console.log(
      `slot changes: ${sizing.length} (most slices at once in a worker: ${sizing.length === 0 ? 'never grown' : Math.max(...sizing)})`,
    );
  } finally {
    for (const w of workers) w.kill('SIGTERM');
    await Promise.all(workers.map((w) => (w.exitCode === null ? exited(w) : Promise.resolve(0))));
    await h.cleanup();
  }
  if (failed) process.exitCode = 1;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
