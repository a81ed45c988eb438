/**
 * Shared-budget benchmark: N worker processes x M concurrent page readers on ONE API key, against the simulator's
 * default limit (500 requests / 60 s per key) and realistic latency. Each reader walks users' full transaction
 * history (filtered pages of 100, the per-user walk of a full-history backfill), the users split among the
 * processes. Printed per run: procedures, requests against ceil(procedures / 50), wall time against the floor
 * (requests / limit x window), 429s, procedures per request.
 *
 *   npx tsx bench/budget.ts                              # 1 and 4 processes, scale medium
 *   npx tsx bench/budget.ts --processes 1,4 --readers 100 --users 4000 --scale medium
 *   npx tsx bench/budget.ts --no-budget                  # today's in-process batching, for comparison
 *   npx tsx bench/budget.ts --limit 60 --processes 4     # a keyed limit that binds hard (the issue's 60 / 60 s)
 *
 * Needs Redis (REDIS_URL, default redis://127.0.0.1:16379). Keys use a unique prefix and are deleted after.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { createSharedBudget, runWithPriority } from '../src/upstream/budget/index.js';
import { createClient } from '../src/upstream/client/index.js';
import { REALISTIC_LATENCY, startSimulator, type Scale } from '../tools/simulator/index.js';
import { describeMachine } from './machine.js';

const args = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
};
const redisUrl = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:16379';
const SELF = fileURLToPath(import.meta.url);
const ROOT = fileURLToPath(new URL('..', import.meta.url));

interface ChildOptions {
  simUrl: string;
  prefix: string;
  apiKey: string;
  users: string[];
  readers: number;
  budget: boolean;
}

interface ChildResult {
  pages: number;
  items: number;
  ms: number;
}

async function child(o: ChildOptions): Promise<void> {
  const redis = o.budget ? new Redis(redisUrl, { maxRetriesPerRequest: null }) : undefined;
  const budget = redis ? createSharedBudget({ redis, apiKey: o.apiKey, prefix: o.prefix }) : undefined;
  const client = createClient({
    baseUrl: o.simUrl,
    apiKey: o.apiKey,
    cache: false,
    ...(budget ? { budget } : {}),
  });
  process.stdout.write('ready\n');
  await new Promise<void>((resolve) => process.stdin.once('data', () => resolve()));
  process.stdin.destroy();
  const started = performance.now();
  const queue = [...o.users];
  let pages = 0;
  let items = 0;
  await runWithPriority('backfill', () =>
    Promise.all(
      Array.from({ length: o.readers }, async () => {
        for (let userId = queue.shift(); userId !== undefined; userId = queue.shift()) {
          let cursor: string | undefined;
          for (;;) {
            const page = (await client.call('transaction.getPaginatedTransactions', {
              userId,
              limit: 100,
              ...(cursor === undefined ? {} : { cursor }),
            })) as { items: unknown[]; nextCursor?: string | null };
            pages++;
            items += page.items.length;
            if (page.items.length < 100 || !page.nextCursor) break;
            cursor = page.nextCursor;
          }
        }
      }),
    ),
  );
  const result: ChildResult = { pages, items, ms: performance.now() - started };
  process.stdout.write(`${JSON.stringify(result)}\n`);
  await budget?.close();
  await redis?.quit();
}

const scratch = mkdtempSync(join(tmpdir(), 'bench-budget-'));
let spawned = 0;

function spawnChild(o: ChildOptions): { ready: Promise<void>; done: Promise<ChildResult>; go: () => void } {
  // The options (thousands of user ids) go through a file: argv is too small for them.
  const file = join(scratch, `child-${spawned++}.json`);
  writeFileSync(file, JSON.stringify(o));
  const proc = spawn(process.execPath, ['--import', 'tsx', SELF, '--child', file], { cwd: ROOT });
  let out = '';
  let err = '';
  let onReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => (onReady = resolve));
  const done = new Promise<ChildResult>((resolve, reject) => {
    proc.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      if (out.includes('ready\n')) onReady();
    });
    proc.stderr.on('data', (c: Buffer) => (err += c.toString()));
    proc.on('exit', (code) => {
      const last = out.trim().split('\n').pop() ?? '';
      if (code === 0 && last.startsWith('{')) resolve(JSON.parse(last) as ChildResult);
      else reject(new Error(`child exited ${code}: ${err.slice(-2000)}`));
    });
  });
  return { ready, done, go: () => proc.stdin.write('go\n') };
}

const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');

async function main(): Promise<void> {
  const childArg = flag('child');
  if (childArg !== undefined) return child(JSON.parse(readFileSync(childArg, 'utf8')) as ChildOptions);
  const scale = (flag('scale') ?? 'medium') as Scale;
  const processes = (flag('processes') ?? '1,4').split(',').map(Number);
  const readers = Number(flag('readers') ?? 100);
  const userCount = Number(flag('users') ?? 4000);
  const useBudget = !args.includes('--no-budget');
  console.log(`machine: ${describeMachine()}; date ${new Date().toISOString().slice(0, 10)}`);
  const t0 = performance.now();
  // --limit overrides the simulator's keyed limit (default 500 / 60 s) to show a budget that binds hard.
  const limit = Number(flag('limit') ?? 500);
  const windowMs = 60_000;
  const sim = await startSimulator({
    seed: 1,
    scale,
    latency: REALISTIC_LATENCY,
    rateLimit: { enabled: true, keyed: limit, windowMs },
  });
  console.log(
    `simulator ${scale} ready in ${fmt(performance.now() - t0)} ms; limit ${limit} / ${windowMs / 1000} s per key, realistic latency; ${useBudget ? 'shared budget' : 'NO budget (in-process batching)'}`,
  );
  const users = (sim.truth('users') as unknown as { _id: string }[]).slice(0, userCount).map((u) => u._id);
  const prefix = `bench-budget-${randomUUID().slice(0, 8)}:`;
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: null });
  try {
    for (const n of processes) {
      const apiKey = `bench-${randomUUID()}`;
      const share = Math.ceil(users.length / n);
      const children = Array.from({ length: n }, (_, k) =>
        spawnChild({
          simUrl: sim.url,
          prefix,
          apiKey,
          users: users.slice(k * share, (k + 1) * share),
          readers,
          budget: useBudget,
        }),
      );
      await Promise.all(children.map((c) => c.ready));
      sim.resetStats();
      const started = performance.now();
      for (const c of children) c.go();
      const results = await Promise.all(children.map((c) => c.done));
      const wall = (performance.now() - started) / 1000;
      const s = sim.stats();
      const procedures = s.procedureCalls.total;
      const ideal = Math.ceil(procedures / 50);
      const floor = (s.httpRequests / limit) * (windowMs / 1000);
      const items = results.reduce((sum, r) => sum + r.items, 0);
      console.log(
        `${n} process(es) x ${readers} readers: ${fmt(users.length)} users, ${fmt(items)} items; ` +
          `${fmt(procedures)} procedures in ${fmt(s.httpRequests)} requests (ceil(P/50) = ${fmt(ideal)}: ${(s.httpRequests / ideal).toFixed(2)}x; ` +
          `${(procedures / s.httpRequests).toFixed(1)} per request); wall ${wall.toFixed(1)} s vs floor ${floor.toFixed(1)} s ` +
          `(requests / limit; ${(wall / floor).toFixed(2)}x); 429s: ${s.rateLimited}; batch sizes ${JSON.stringify(s.batchSizes)}`,
      );
    }
  } finally {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
    await sim.close();
    rmSync(scratch, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
