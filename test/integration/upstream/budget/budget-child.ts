/**
 * One worker process of the shared-budget integration tests and of bench/budget.ts: a client on a shared budget
 * that, on "go" (a line on stdin), makes its calls (`concurrency` at a time) and prints one JSON line per event:
 * `{ready: id}`, `{batch: BatchInfo}` (when it fetches as leader), `{done: [sha256 of each result], ms}`.
 *
 *   node --import tsx budget-child.ts <json options>
 */
import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import pLimit from 'p-limit';
import { createSharedBudget, runWithPriority } from '../../../../src/upstream/budget/index.js';
import type { CallPriority } from '../../../../src/upstream/budget/index.js';
import { createClient } from '../../../../src/upstream/client/index.js';

export interface ChildCall {
  procedure: string;
  input: Record<string, unknown>;
  priority: CallPriority;
}

export interface ChildOptions {
  simUrl: string;
  redisUrl: string;
  prefix: string;
  apiKey: string;
  calls: ChildCall[];
  concurrency: number;
  leaseMs: number;
  maxHoldMs?: number;
}

const out = (value: unknown): void => {
  process.stdout.write(`${JSON.stringify(value)}\n`);
};

const hashOf = (value: unknown): string => createHash('sha256').update(JSON.stringify(value)).digest('hex');

async function main(): Promise<void> {
  const o = JSON.parse(process.argv[2] ?? '{}') as ChildOptions;
  const redis = new Redis(o.redisUrl, { maxRetriesPerRequest: null });
  const budget = createSharedBudget({
    redis,
    apiKey: o.apiKey,
    prefix: o.prefix,
    leaseMs: o.leaseMs,
    ...(o.maxHoldMs === undefined ? {} : { maxHoldMs: o.maxHoldMs }),
    onBatch: (batch) => out({ batch }),
    onError: (error) => out({ error: error.message }),
  });
  const client = createClient({
    baseUrl: o.simUrl,
    apiKey: o.apiKey,
    budget,
    cache: false,
    retry: { initialMs: 50, maxMs: 1000, retries: 7 },
    timeoutMs: 20_000,
  });
  out({ ready: budget.id });
  await new Promise<void>((resolve) => process.stdin.once('data', () => resolve()));
  process.stdin.destroy();
  const started = performance.now();
  const limit = pLimit(o.concurrency);
  const hashes = await Promise.all(
    o.calls.map((c) =>
      limit(() => runWithPriority(c.priority, async () => hashOf(await client.call(c.procedure, c.input)))),
    ),
  );
  out({ done: hashes, ms: performance.now() - started });
  await budget.close();
  await redis.quit();
}

main().catch((error: unknown) => {
  out({ fatal: error instanceof Error ? error.stack : String(error) });
  process.exitCode = 1;
});
