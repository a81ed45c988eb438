/**
 * Client benchmark: `transaction.collectAll` over the 72 h window of the simulator at scale medium, next to the
 * ideal request count (ceil(N/100) pages, 50 pages per POST) and to the simulator's own rate for the same pages
 * (exact cursors, batches of 50, the same number of requests in flight, no client logic).
 *
 *   npm run bench:client                      # scale medium
 *   npm run bench:client -- --scale small --runs 3
 *
 * Client and server share this process and the machine's cores, so both rates are floors.
 */
import { createClient, type CollectStats } from '../src/client/index.js';
import { encodeCursorV2, startSimulator, type Scale } from '../src/simulator/index.js';
import { describeMachine } from './machine.js';

const args = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
};
const scale = (flag('scale') ?? 'medium') as Scale;
const runs = Number(flag('runs') ?? 2);
const maxInFlight = Number(flag('in-flight') ?? 8);
const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');

async function main(): Promise<void> {
  console.log(`machine: ${describeMachine()}; date ${new Date().toISOString().slice(0, 10)}`);
  const t0 = performance.now();
  // The simulator's default rate limit (500 requests / 60 s per key) stays on: the client must live with it.
  const sim = await startSimulator({ seed: 1, scale });
  console.log(`simulator ${scale} ready in ${fmt(performance.now() - t0)} ms`);
  const world = sim.world;
  const table = world.store('transactions').table;
  const now = world.nowMs;
  const oldest = now - 72 * 3_600_000;
  // Rows of the window, newest first (the table is ordered oldest to newest).
  let first = table.length;
  while (first > 0 && table.time(first - 1) >= oldest) first--;
  const n = table.length - first;
  const idealPages = Math.ceil(n / 100);
  const idealRequests = Math.ceil(idealPages / 50);
  console.log(
    `window rows N = ${fmt(n)}; ideal ${fmt(idealPages)} pages in ${fmt(idealRequests)} requests (${((idealRequests * 10_000) / n).toFixed(2)} per 10k items)`,
  );

  // 1. The simulator alone: every page of the window at its exact cursor, 50 per POST, `maxInFlight` at once.
  const cursors: (string | undefined)[] = [undefined];
  for (let row = table.length - 100; row > first; row -= 100)
    cursors.push(encodeCursorV2(table.time(row), table.oid(row)));
  // Runs alternate (simulator alone, then client) so both meet the same warm-up and machine load.
  let simBest = 0;
  let clientBest = 0;
  for (let run = 0; run < runs; run++) {
    {
      const queue = [...cursors];
      let items = 0;
      const started = performance.now();
      await Promise.all(
        Array.from({ length: maxInFlight }, async () => {
          for (;;) {
            const chunk = queue.splice(0, 50);
            if (chunk.length === 0) return;
            const body = Object.fromEntries(
              chunk.map((cursor, i) => [i, cursor === undefined ? { limit: 100 } : { limit: 100, cursor }]),
            );
            let slots: { result?: { data: { items: { createdAt: string }[] } } }[] | undefined;
            // The server may close an idle keep-alive socket under a request: try again (the client does too).
            for (let attempt = 1; !slots; attempt++) {
              try {
                const res = await fetch(
                  `${sim.url}/${chunk.map(() => 'transaction.getPaginatedTransactions').join(',')}?batch=1`,
                  {
                    method: 'POST',
                    headers: { 'content-type': 'application/json', 'x-api-key': `bench-sim-${run}` },
                    body: JSON.stringify(body),
                  },
                );
                slots = (await res.json()) as typeof slots;
              } catch (error) {
                if (attempt >= 5) throw error;
              }
            }
            for (const s of slots ?? [])
              items += (s.result?.data.items ?? []).filter((t) => Date.parse(t.createdAt) >= oldest).length;
          }
        }),
      );
      const secs = (performance.now() - started) / 1000;
      simBest = Math.max(simBest, items / secs);
      console.log(
        `simulator alone, run ${run + 1}: ${fmt(items)} items in ${secs.toFixed(2)} s = ${fmt(items / secs)} items/s (${fmt(cursors.length / secs)} pages/s)`,
      );
    }
    // 2. The client: transaction.collectAll with its defaults (0.2-day slices, concurrency 500, limit 100).
    sim.resetStats();
    const client = createClient({ baseUrl: sim.url, apiKey: `bench-client-${run}`, maxInFlight });
    const stats: CollectStats = { slices: 0, splits: 0, pages: 0 };
    const started = performance.now();
    const { collectSlices, createListing } = await import('../src/client/index.js');
    const got = await collectSlices(
      client,
      [createListing('transactions')],
      { oldestDate: oldest, now: () => now },
      stats,
    );
    const secs = (performance.now() - started) / 1000;
    const s = sim.stats();
    if (got.length !== n) throw new Error(`client returned ${got.length} rows, the window holds ${n}`);
    clientBest = Math.max(clientBest, got.length / secs);
    const per10k = (s.httpRequests * 10_000) / got.length;
    const summary =
      `client, run ${run + 1}: ${fmt(got.length)} items in ${secs.toFixed(2)} s = ${fmt(got.length / secs)} items/s; ` +
      `${s.httpRequests} requests (${per10k.toFixed(2)} per 10k items, ideal ${((idealRequests * 10_000) / n).toFixed(2)}; ` +
      `${(s.httpRequests / idealRequests).toFixed(2)}x ideal), ${s.procedureCalls.total} pages (${(s.procedureCalls.total / idealPages).toFixed(2)}x ideal), ` +
      `${stats.slices} slices (${stats.splits} splits, ${stats.skipped ?? 0} skipped empty), 429s: ${s.rateLimited}; batch sizes ${JSON.stringify(s.batchSizes)}`;
    console.log(summary);
  }
  console.log(
    `items/s: client ${fmt(clientBest)} vs simulator alone ${fmt(simBest)} = ${((100 * clientBest) / simBest).toFixed(0)} %`,
  );
  await sim.close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
