/**
 * Issue 32, "Full history at the real service's cost": a full-history transactions backfill through the whole
 * pipeline, as a user runs it (`gamedata worker`, then `gamedata backfill transactions --full-history --until <now>
 * --wait`), against the simulator with the real service's cost model (`--latency realistic`: 0.6 s a request, filtered
 * pages 0.27 s side by side, unfiltered feed pages 0.24 s + 0.09 s per hour of depth SERIALISED per key; see
 * src/simulator/feed-lane.ts), once per plan the CLI offers, each into fresh topics, queues and Redis keys, each on a
 * fresh simulator. Prints per plan: wall time, requests, transaction calls, the key's serial feed seconds, requests
 * answered after their client had gone, the key's floors (requests at 500 a minute; serial feed seconds) and `verify`
 * (record by record against the simulator's truth, in this process). Before each run, `backfill --dry-run` with the
 * same flags gives the plan's estimate (requests, pages, serial feed seconds); the table shows measured / estimated
 * (issue 32: the estimate is what an operator sees before spending the key, so it must hold within 25 %).
 *
 *   npx tsx bench/full-history.ts [--scale small] [--seed 7] [--latency realistic] [--plans auto,countryId,off]
 *     [--concurrency 32] [--no-verify]
 *
 * Services: KAFKA_BROKERS / SCHEMA_REGISTRY_URL / REDIS_URL (`eval "$(scripts/stack.sh up)"`). Run it alone on the
 * machine: it measures wall time.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startSimulator, type Simulator } from '../src/simulator/index.js';
import { parseLatencySpec } from '../src/simulator/options.js';
import { describeMachine } from './machine.js';
import { verifyResource } from '../src/verify/index.js';
import { createRecordDecoder } from '../src/encoding/record-decoder.js';
import { createRegistryClient } from '../src/encoding/registry-client.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const args = process.argv.slice(2);
const flag = (name: string, def: string): string => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? (args[i + 1] ?? def) : def;
};
const scale = flag('scale', 'small') as 'small' | 'medium';
const seed = Number(flag('seed', '7'));
const latency = parseLatencySpec(flag('latency', 'realistic'));
const plans = flag('plans', 'auto,countryId,off').split(',');
const concurrency = flag('concurrency', '32');
const verify = !args.includes('--no-verify');
const KEY = 'bench-key';
const KEY_LIMIT_PER_MIN = 500;

interface Outcome {
  plan: string;
  wallS: number;
  requests: number;
  txCalls: number;
  feedS: number;
  abandoned: number;
  slowestAbandonedS: number;
  verify: string;
  line: string;
  estimate: { pages: number; requests: number; feedS: number } | undefined;
}

/** The totals line of `backfill --dry-run`: `total: N pages, R requests, F s of serial feed: ...`. */
function parseEstimate(out: string): Outcome['estimate'] {
  const m = /total: (\d+) pages, (\d+) requests, (\d+) s of serial feed/.exec(out);
  return m === null ? undefined : { pages: Number(m[1]), requests: Number(m[2]), feedS: Number(m[3]) };
}

function cli(
  argv: string[],
  env: NodeJS.ProcessEnv,
): { child: ChildProcess; done: Promise<{ code: number | null; out: string }> } {
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'src/cli/main.ts'), ...argv], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const done = new Promise<{ code: number | null; out: string }>((resolve) =>
    child.on('exit', (code) => resolve({ code, out })),
  );
  return { child, done };
}

async function must(argv: string[], env: NodeJS.ProcessEnv): Promise<string> {
  const { code, out } = await cli(argv, env).done;
  if (code !== 0) throw new Error(`gamedata ${argv.join(' ')} exited ${code}:\n${out}`);
  return out;
}

async function runPlan(plan: string, index: number): Promise<Outcome> {
  const sim: Simulator = await startSimulator({
    scale,
    seed,
    latency,
    apiKeys: [KEY],
  });
  const tag = `fh${Date.now().toString(36)}${index}`;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    GAMEDATA_API_URL: sim.url,
    GAMEDATA_API_KEY: KEY,
    GAMEDATA_TOPIC_PREFIX: tag,
    GAMEDATA_QUEUE_PREFIX: tag,
    GAMEDATA_REDIS_PREFIX: tag,
    GAMEDATA_LOG_LEVEL: 'warn',
  };
  await must(['schemas', 'register'], env);
  await must(['topics', 'create'], env);
  const worker = cli(['worker', '--concurrency', concurrency], env);
  try {
    const until = new Date(sim.now()).toISOString();
    const estimate = parseEstimate(
      await must(
        ['backfill', 'transactions', '--full-history', '--until', until, '--partition', plan, '--dry-run'],
        env,
      ),
    );
    sim.resetStats();
    const started = performance.now();
    const out = await must(
      ['backfill', 'transactions', '--full-history', '--until', until, '--partition', plan, '--wait'],
      env,
    );
    const wallS = (performance.now() - started) / 1000;
    const stats = sim.stats();
    console.log(
      `${plan}: ${
        out
          .trim()
          .split('\n')
          .filter((l) => l.startsWith('run '))
          .pop() ?? ''
      } (${wallS.toFixed(1)} s with planning)`,
    );
    let verdict = 'not verified';
    if (verify) {
      const truth = sim.truth('transactions');
      const r = await verifyResource({
        resource: 'transactions',
        brokers: (process.env['KAFKA_BROKERS'] ?? '').split(','),
        topicPrefix: tag,
        decoder: createRecordDecoder({
          registry: createRegistryClient({ url: process.env['SCHEMA_REGISTRY_URL'] ?? '' }),
          topicPrefix: tag,
        }),
        truth,
      });
      verdict = `${r.matched}/${truth.length} matched, missing ${r.missing}, duplicates ${r.duplicates}, unexpected ${r.unexpected}`;
    }
    return {
      plan,
      wallS,
      requests: stats.httpRequests,
      txCalls: stats.procedureCalls.byProcedure['transaction.getPaginatedTransactions'] ?? 0,
      feedS: stats.feedLane.busyMs / 1000,
      abandoned: stats.answeredAfterClientGone.requests,
      slowestAbandonedS: stats.answeredAfterClientGone.slowestMs / 1000,
      verify: verdict,
      estimate,
      line:
        out
          .trim()
          .split('\n')
          .filter((l) => l.startsWith('run '))
          .pop() ?? '',
    };
  } finally {
    worker.child.kill('SIGTERM');
    const { out } = await worker.done;
    // The worker's slot changes (printed even when quiet): how far the slot sizing grew the slots.
    const slots = out.split('\n').filter((l) => l.includes('slices at once'));
    console.log(`${plan}: ${slots.length} slot changes${slots.length > 0 ? ':' : ''}`);
    for (const l of slots.slice(-12)) console.log(`  ${l}`);
    await sim.close();
  }
}

async function main(): Promise<void> {
  console.log(`machine: ${describeMachine()}; date ${new Date().toISOString()}`);
  console.log(
    `scale ${scale}, seed ${seed}, latency ${JSON.stringify(latency)}, one worker x ${concurrency}, plans ${plans.join(', ')}`,
  );
  const outcomes: Outcome[] = [];
  for (const [i, plan] of plans.entries()) {
    outcomes.push(await runPlan(plan, i));
  }
  const fastest = Math.min(...outcomes.map((o) => o.wallS));
  console.log(
    '\n| plan | wall s | x fastest | requests | request floor s (500/min) | tx calls | serial feed s | answered after client gone (slowest s) | verify | dry run: tx pages / requests / feed s | measured / estimated: pages, feed s, key floor |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---|---|---|');
  for (const o of outcomes) {
    const e = o.estimate;
    // The key's floor: the larger of the requests at the key's rate and the serial feed seconds. Measured at full
    // batches (the calls over 50): a run the key does not bind sends emptier batches, which cost it nothing, and the
    // estimate counts full ones (what a run the key binds sends).
    const floor = (requests: number, feedS: number): number =>
      Math.max((requests / KEY_LIMIT_PER_MIN) * 60, feedS);
    const ratio = (m: number, est: number): string =>
      est > 0 ? (m / est).toFixed(2) : m > 0 ? 'inf' : '1.00';
    const ratios =
      e === undefined
        ? 'no estimate'
        : `${ratio(o.txCalls, e.pages)}, ${ratio(o.feedS, e.feedS)}, ${ratio(floor(Math.ceil(o.txCalls / 50), o.feedS), floor(e.requests, e.feedS))}`;
    console.log(
      `| ${o.plan} | ${o.wallS.toFixed(1)} | ${(o.wallS / fastest).toFixed(2)} | ${o.requests} | ${((o.requests / KEY_LIMIT_PER_MIN) * 60).toFixed(1)} | ${o.txCalls} | ${o.feedS.toFixed(1)} | ${o.abandoned} (${o.slowestAbandonedS.toFixed(1)}) | ${o.verify} | ${e === undefined ? '-' : `${e.pages} / ${e.requests} / ${e.feedS}`} | ${ratios} |`,
    );
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
