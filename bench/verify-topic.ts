/**
 * The record-by-record verify of a bench run's transactions topic, in a process of its own: for a run whose bench
 * was stopped before its verify ended, or one too large to verify beside the run (scale large: 10 M records; the
 * bench's own process holds the simulator and its trace). The simulator is rebuilt from the same seed and scale (not
 * live, so its truth is the run's), and the topic under `--topic-prefix` (the bench's tag, printed in its log and the
 * broker's topic names) is read with read_committed against it.
 *
 *   node --max-old-space-size=12000 --import tsx bench/verify-topic.ts --scale large --seed 1 --topic-prefix fhmx7ihfg90
 *
 * Services: KAFKA_BROKERS / SCHEMA_REGISTRY_URL (`eval "$(bash scripts/stack.sh up | grep ^export)"`).
 */
import { startSimulator } from '../tools/simulator/index.js';
import { describeMachine } from './machine.js';
import { flag, verifyTransactions } from './gamedata-cli.js';

async function main(): Promise<void> {
  const scale = flag('scale', 'small') as 'small' | 'medium' | 'large';
  const seed = Number(flag('seed', '7'));
  const prefix = flag('topic-prefix', '');
  if (prefix === '') throw new Error('--topic-prefix <the bench run tag> is required');
  console.log(`machine: ${describeMachine()}; date ${new Date().toISOString()}`);
  const sim = await startSimulator({ scale, seed, apiKeys: ['verify'] });
  try {
    const started = performance.now();
    const { line, exact } = await verifyTransactions(prefix, sim.eachTruth('transactions'));
    const s = (performance.now() - started) / 1000;
    console.log(
      `${prefix}.transactions against scale ${scale} seed ${seed}: ${line} (${exact ? 'EXACT' : 'NOT EXACT'}, ${s.toFixed(0)} s)`,
    );
    if (!exact) process.exitCode = 1;
  } finally {
    await sim.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
