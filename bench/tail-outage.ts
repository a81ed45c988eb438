/**
 * Issue 32, "a 24 h tail outage caught up": a transactions tail whose watermark lies 24 h behind the upstream's head
 * (its workers were down for a day), caught up by the tail's own tick as a user runs it (`gamedata worker`, then
 * `gamedata tail transactions --since <head - 24 h>`: the first tick plans `[since, now)`, the range a tick after a
 * 24 h outage plans, less its one-minute lookback), against the simulator with the real service's cost model (`--latency
 * realistic`). The catch-up is deeper than an hour, so the planner reads it per country when the partition proof holds
 * (the feed's deep pages cost seconds each, serialised per key). Prints the time until the watermark reaches the head,
 * the requests, the key's serial feed seconds, the requests answered after their client had gone, and verifies the
 * topic record by record against the simulator's truth over the caught-up range.
 *
 *   npx tsx bench/tail-outage.ts [--scale medium] [--seed 1] [--hours 24] [--latency realistic] [--concurrency 32]
 *
 * Services: KAFKA_BROKERS / SCHEMA_REGISTRY_URL / REDIS_URL (`eval "$(scripts/stack.sh up)"`). Run it alone.
 */
import { startSimulator } from '../tools/simulator/index.js';
import { parseLatencySpec } from '../tools/simulator/options.js';
import { describeMachine } from './machine.js';
import { benchEnv, flag, gamedata, mustGamedata, removeRunKeys, verifyTransactions } from './gamedata-cli.js';

const scale = flag('scale', 'medium') as 'small' | 'medium';
const seed = Number(flag('seed', '1'));
const hours = Number(flag('hours', '24'));
const latency = parseLatencySpec(flag('latency', 'realistic'));
const concurrency = flag('concurrency', '32');
const KEY = 'bench-key';
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface TailLine {
  resource: string;
  watermark?: string;
  lastOutcome?: string;
  lastError?: string;
  failedRuns: number;
  completedRuns: number;
}

async function main(): Promise<void> {
  console.log(`machine: ${describeMachine()}; date ${new Date().toISOString()}`);
  // The world's now is the wall clock's: a tail's tick plans up to its own clock.
  const sim = await startSimulator({
    scale,
    seed,
    latency,
    apiKeys: [KEY],
    now: new Date().toISOString(),
  });
  const head = sim.now();
  const since = head - hours * 3_600_000;
  const tag = `to${Date.now().toString(36)}`;
  const env = benchEnv(sim.url, KEY, tag);
  console.log(
    `scale ${scale}, seed ${seed}, latency ${JSON.stringify(latency)}, one worker x ${concurrency}; watermark ${hours} h behind the head`,
  );
  await mustGamedata(['schemas', 'register'], env);
  await mustGamedata(['topics', 'create'], env);
  const worker = gamedata(['worker', '--concurrency', concurrency], env);
  try {
    sim.resetStats();
    const started = performance.now();
    const tail = ['tail', 'transactions', '--every', '10s', '--since', new Date(since).toISOString()];
    await mustGamedata([...tail, '--lookback', '1m'], env);
    let line: TailLine | undefined;
    for (;;) {
      await sleep(5_000);
      const report = JSON.parse(await mustGamedata(['status', '--json'], env)) as { tails: TailLine[] };
      line = report.tails.find((t) => t.resource === 'transactions');
      if (line?.failedRuns !== undefined && line.failedRuns > 0)
        throw new Error(`the catch-up run failed: ${line.lastError ?? '?'}`);
      // The first run is the catch-up: the watermark is set when every slice of it completed (at the newest row).
      if (line?.watermark !== undefined && line.completedRuns >= 1) break;
    }
    const wallS = (performance.now() - started) / 1000;
    const stats = sim.stats();
    await mustGamedata(['tail', 'transactions', '--remove'], env);
    const truth = sim.truth('transactions').filter((t) => Date.parse(String(t['createdAt'])) >= since);
    const verdict = await verifyTransactions(tag, truth);
    const txCalls = stats.procedureCalls.byProcedure['transaction.getPaginatedTransactions'] ?? 0;
    console.log(
      '\n| caught up h | wall s | requests | request floor s (500/min) | tx calls | serial feed s | answered after client gone (slowest s) | verify |',
    );
    console.log('|---:|---:|---:|---:|---:|---:|---:|---|');
    console.log(
      `| ${hours} | ${wallS.toFixed(1)} | ${stats.httpRequests} | ${((stats.httpRequests / 500) * 60).toFixed(1)} | ${txCalls} | ${(stats.feedLane.busyMs / 1000).toFixed(1)} | ${stats.answeredAfterClientGone.requests} (${(stats.answeredAfterClientGone.slowestMs / 1000).toFixed(1)}) | ${verdict.line} |`,
    );
    if (!verdict.exact) process.exitCode = 1;
  } finally {
    worker.child.kill('SIGTERM');
    await worker.done;
    await sim.close();
    await removeRunKeys(tag);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
