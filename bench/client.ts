/**
 * Client benchmark: `transaction.collectAll` over the last 24 h, 48 h and 72 h of the simulator, at each scale asked,
 * reporting rounds (sequential waves of POSTs: a POST sent while none is in flight starts a new wave), requests,
 * procedures and seconds, and checking every result against the simulator's truth (exact or the run fails).
 *
 *   npm run bench:client -- --latency realistic                  # scales small and medium, seed 7
 *   npm run bench:client -- --latency realistic --scale small --hours 48 --runs 3
 *
 * The client is used as a new user would: `collectAll({ oldestDate })` with its defaults (no injected clock; the
 * simulator's clock is not the machine's). Rounds are counted from the POSTs themselves, so the same bench measures
 * a client without round planning too. With `--latency realistic` time is the upstream's (sleeps), not CPU.
 */
import { collectSlices, createClient, createListing, type CollectStats } from '../src/client/index.js';
import { parseLatencySpec, startSimulator, type Scale } from '../src/simulator/index.js';
import { describeMachine } from './machine.js';

const args = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
};
const scales = (flag('scale') ?? 'small,medium').split(',') as Scale[];
const hoursList = (flag('hours') ?? '24,48,72').split(',').map(Number);
const runs = Number(flag('runs') ?? 1);
const seed = Number(flag('seed') ?? 7);
const latency = flag('latency');
const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');

async function main(): Promise<void> {
  console.log(
    `machine: ${describeMachine()}; date ${new Date().toISOString().slice(0, 10)}; seed ${seed}; latency ${latency ?? 'off'}`,
  );
  console.log('scale  | window | rows | rounds | requests | procedures | seconds | exact');
  for (const scale of scales) {
    const t0 = performance.now();
    const sim = await startSimulator({ seed, scale });
    if (latency !== undefined) sim.configure({ latency: parseLatencySpec(latency) });
    console.error(`simulator ${scale} ready in ${fmt(performance.now() - t0)} ms`);
    const truthAll = sim.truth('transactions');
    for (const hours of hoursList) {
      const oldest = sim.now() - hours * 3_600_000;
      const truth = truthAll.filter((r) => Date.parse(String(r['createdAt'])) >= oldest);
      for (let run = 0; run < runs; run++) {
        // Waves of POSTs, counted at the socket: the same measure for any client version.
        let inFlight = 0;
        let waves = 0;
        const countingFetch: typeof fetch = async (input, init) => {
          if (inFlight++ === 0) waves++;
          try {
            return await fetch(input, init);
          } finally {
            inFlight--;
          }
        };
        const client = createClient({
          baseUrl: sim.url,
          apiKey: `bench-${scale}-${hours}-${run}`,
          fetch: countingFetch,
          cache: false,
        });
        const stats: CollectStats = { slices: 0, splits: 0, pages: 0 };
        const started = performance.now();
        const got = await collectSlices<Record<string, unknown>>(
          client,
          [createListing('transactions')],
          { oldestDate: oldest },
          stats,
        );
        const secs = (performance.now() - started) / 1000;
        const exact = got.length === truth.length && got.every((r, i) => r['_id'] === truth[i]?.['_id']);
        const st = client.stats();
        console.log(
          `${scale.padEnd(6)} | ${String(hours).padStart(4)} h | ${fmt(got.length)} | ${waves} | ${st.httpRequests} | ${st.procedures} | ${secs.toFixed(1)} | ${exact ? 'yes' : 'NO'}` +
            ` (slices ${stats.slices}, splits ${stats.splits}, page rounds ${stats.rounds ?? 'n/a'})`,
        );
        if (!exact) process.exitCode = 1;
      }
    }
    await sim.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
