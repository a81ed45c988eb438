/**
 * Simulator benchmark: world generation (time, RSS) and pages served per second (limit 100, batches of 50).
 *
 *   npm run bench:simulator                 # scale medium
 *   npm run bench:simulator -- --scale small --seconds 5
 *   npm run bench:simulator -- --generate-only --scale large
 *
 * Client and server share this process (and the machine's cores), so the page rate is a floor for the server.
 */
import { encodeCursorV2 } from '../tools/simulator/cursor.js';
import { createWorld, startSimulator, type Scale } from '../tools/simulator/index.js';
import { describeMachine } from './machine.js';

const args = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
};
const scale = (flag('scale') ?? 'medium') as Scale;
const seconds = Number(flag('seconds') ?? 10);
const inFlight = Number(flag('concurrency') ?? 4);
const generateOnly = args.includes('--generate-only');

const mb = (bytes: number): string => `${Math.round(bytes / 1024 / 1024)} MiB`;
const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');

async function main(): Promise<void> {
  console.log(`machine: ${describeMachine()}; date ${new Date().toISOString().slice(0, 10)}`);
  const rss0 = process.memoryUsage().rss;
  const t0 = performance.now();
  // The server's own world is the one measured (generation dominates start-up; listening is instant).
  const sim = generateOnly
    ? undefined
    : await startSimulator({ seed: 1, scale, rateLimit: { enabled: false } });
  const world = sim?.world ?? createWorld({ seed: 1, scale });
  const genMs = performance.now() - t0;
  global.gc?.();
  const mem = process.memoryUsage();
  const rss1 = mem.rss;
  // RSS keeps freed build garbage; live heap + typed arrays is what the world really holds.
  const held = mem.heapUsed + mem.arrayBuffers;
  const footprint = world.footprint();
  console.log(
    `generate ${scale}: ${fmt(genMs)} ms, rows ${fmt(footprint.rows)} (transactions ${fmt(world.store('transactions').table.length)}), ` +
      `posting-list entries ${fmt(footprint.indexedRows)}, RSS +${mb(rss1 - rss0)} (total ${mb(rss1)}), ` +
      `heap + typed arrays after GC ${mb(held)}`,
  );
  if (sim === undefined) return;
  const txs = world.store('transactions').table;
  const now = world.nowMs;
  const window = 72 * 3_600_000;
  const users = world.store('users').table;
  let rng = 12345;
  const next = (): number => {
    rng = (Math.imul(rng, 1103515245) + 12345) >>> 0;
    return rng / 4294967296;
  };
  type Call = [string, Record<string, unknown>];
  const scenarios: Record<string, () => Call> = {
    // Synthetic cursors anywhere in the 72 h window: the planner's time slices.
    'window slices': () => [
      'transaction.getPaginatedTransactions',
      { limit: 100, cursor: encodeCursorV2(now - Math.floor(next() * window), '0'.repeat(24)) },
    ],
    // Per-user full-history walks at random depths.
    'user walks': () => [
      'transaction.getPaginatedTransactions',
      {
        limit: 100,
        userId: users.oid(Math.floor(next() ** 2 * users.length)),
        cursor: encodeCursorV2(txs.time(Math.floor(next() * txs.length)), 'f'.repeat(24)),
      },
    ],
    'users by country': () => [
      'user.getUsersByCountry',
      { limit: 100, countryId: sim.world.countryIds[Math.floor(next() * sim.world.countryIds.length)] },
    ],
  };
  const results: string[] = [];
  for (const [name, make] of Object.entries(scenarios)) {
    let pages = 0;
    let items = 0;
    let bytes = 0;
    let requests = 0;
    let failures = 0;
    const deadline = performance.now() + seconds * 1000;
    const started = performance.now();
    const cpu0 = process.cpuUsage();
    const worker = async (): Promise<void> => {
      while (performance.now() < deadline) {
        const calls = Array.from({ length: 50 }, make);
        let response: Response;
        try {
          response = await fetch(`${sim.url}/${calls.map(([p]) => p).join(',')}?batch=1`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-api-key': 'bench' },
            body: JSON.stringify(Object.fromEntries(calls.map(([, input], i) => [i, input]))),
          });
        } catch {
          failures++;
          continue;
        }
        const text = await response.text();
        if (response.status !== 200)
          throw new Error(`${name}: HTTP ${response.status}: ${text.slice(0, 200)}`);
        bytes += text.length;
        requests++;
        for (const slot of JSON.parse(text) as Array<{ result: { data: { items: unknown[] } } }>) {
          pages++;
          items += slot.result.data.items.length;
        }
      }
    };
    await Promise.all(Array.from({ length: inFlight }, worker));
    const elapsed = (performance.now() - started) / 1000;
    const cpu = process.cpuUsage(cpu0);
    // On a shared machine wall-clock rates depend on the neighbours; pages per CPU-second of this process do less.
    const cpuSeconds = (cpu.user + cpu.system) / 1e6;
    const line =
      `${name}: ${fmt(pages / elapsed)} pages/s (${fmt(items / elapsed)} records/s, ${fmt(requests / elapsed)} batches/s, ` +
      `${mb(bytes / elapsed)}/s, ${fmt(items / pages)} items/page; ${fmt(pages / cpuSeconds)} pages per CPU-second, client included` +
      `${failures > 0 ? `; ${failures} transport failures` : ''})`;
    results.push(line);
    console.log(line);
  }
  console.log(`RSS after serving: ${mb(process.memoryUsage().rss)}`);
  await sim.close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
