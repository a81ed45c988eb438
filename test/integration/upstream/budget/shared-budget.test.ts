/**
 * The shared budget against the real Redis and the simulator: worker processes (child processes, each with its
 * own Redis connections) on one API key with a small keyed limit and realistic latency. Every caller gets exactly
 * the answer a standalone client gets from a twin simulator; no request is answered 429; POSTs are (nearly) full;
 * priorities order the batches; killing the fetcher process loses nothing.
 */
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { spawn } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BatchInfo, CallPriority } from '../../../../src/upstream/budget/index.js';
import { budgetKeys, createSharedBudget, runWithPriority } from '../../../../src/upstream/budget/index.js';
import { createClient } from '../../../../src/upstream/client/index.js';
import { REALISTIC_LATENCY, startSimulator } from '../../../../tools/simulator/index.js';
import type { ChildCall, ChildOptions } from './budget-child.js';

const redisUrl = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:16379';
const prefix = `it-budget-${randomUUID().slice(0, 8)}:`;
const CHILD = fileURLToPath(new URL('./budget-child.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../../../..', import.meta.url));
type Sim = Awaited<ReturnType<typeof startSimulator>>;

const hashOf = (value: unknown): string => createHash('sha256').update(JSON.stringify(value)).digest('hex');

interface Child {
  proc: ChildProcessWithoutNullStreams;
  id: Promise<string>;
  done: Promise<{ hashes: string[]; ms: number }>;
  batches: BatchInfo[];
  errors: string[];
}

function startChild(options: ChildOptions): Child {
  const proc = spawn(process.execPath, ['--import', 'tsx', CHILD, JSON.stringify(options)], { cwd: ROOT });
  const batches: BatchInfo[] = [];
  const errors: string[] = [];
  let onReady: (id: string) => void = () => {};
  let onDone: (d: { hashes: string[]; ms: number }) => void = () => {};
  let onFail: (e: Error) => void = () => {};
  const id = new Promise<string>((resolve) => (onReady = resolve));
  const done = new Promise<{ hashes: string[]; ms: number }>((resolve, reject) => {
    onDone = resolve;
    onFail = reject;
  });
  // A killed child's `done` is never awaited: mark its rejection handled (awaiters still see it).
  done.catch(() => undefined);
  let buffer = '';
  let stderr = '';
  proc.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  proc.stdout.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    let nl: number;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      const msg = JSON.parse(line) as Record<string, unknown>;
      if (typeof msg['ready'] === 'string') onReady(msg['ready']);
      if (msg['batch']) batches.push(msg['batch'] as BatchInfo);
      if (typeof msg['error'] === 'string') errors.push(msg['error']);
      if (Array.isArray(msg['done'])) onDone({ hashes: msg['done'] as string[], ms: Number(msg['ms']) });
      if (msg['fatal'] !== undefined) onFail(new Error(JSON.stringify(msg['fatal'])));
    }
  });
  proc.on('exit', (code, signal) =>
    onFail(new Error(`child exited (${code ?? signal}) before done: ${stderr}`)),
  );
  return { proc, id, done, batches, errors };
}

let sim: Sim;
let twin: Sim;
let redis: Redis;
let userIds: string[];

beforeAll(async () => {
  // Small keyed limit: the budget binds, so batches must be full. Realistic latency: ~0.9 s per request.
  sim = await startSimulator({
    port: 0,
    scale: 'small',
    seed: 3,
    rateLimit: { enabled: true, keyed: 6, windowMs: 2000 },
    latency: REALISTIC_LATENCY,
  });
  twin = await startSimulator({ port: 0, scale: 'small', seed: 3, rateLimit: { enabled: false } });
  redis = new Redis(redisUrl, { maxRetriesPerRequest: null });
  userIds = (sim.truth('users') as unknown as { _id: string }[]).map((u) => u._id);
});

afterAll(async () => {
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
  await sim.close();
  await twin.close();
});

/** Distinct calls: per user a profile and a filtered transactions page (the simulator's 0.27 s filtered cost). */
function callsFor(users: string[], priority: CallPriority): ChildCall[] {
  return users.flatMap((userId) => [
    { procedure: 'user.getUserById', input: { userId }, priority },
    { procedure: 'transaction.getPaginatedTransactions', input: { userId, limit: 10 }, priority },
  ]);
}

/** What a standalone client reads from the twin simulator (same world, no limit): the exact answers. */
async function expected(calls: ChildCall[]): Promise<string[]> {
  const client = createClient({ baseUrl: twin.url, apiKey: 'reference', cache: false });
  return Promise.all(calls.map(async (c) => hashOf(await client.call(c.procedure, c.input))));
}

describe('shared budget across processes', () => {
  it('four processes on one key: exact answers, no 429, full POSTs', async () => {
    expect(userIds.length).toBeGreaterThanOrEqual(400);
    const apiKey = `key-${randomUUID()}`;
    const calls = [0, 1, 2, 3].map((k) => callsFor(userIds.slice(k * 100, k * 100 + 100), 'backfill'));
    const children = calls.map((c) =>
      startChild({ simUrl: sim.url, redisUrl, prefix, apiKey, calls: c, concurrency: 1000, leaseMs: 1500 }),
    );
    try {
      await Promise.all(children.map((c) => c.id));
      sim.resetStats();
      for (const c of children) c.proc.stdin.write('go\n');
      const results = await Promise.all(children.map((c) => c.done));
      const want = await Promise.all(calls.map(expected));
      results.forEach((r, k) => expect(r.hashes).toEqual(want[k]));
      const s = sim.stats();
      const procedures = 800;
      expect(s.procedureCalls.total).toBe(procedures);
      expect(s.rateLimited).toBe(0);
      // One request may go out before the first answer tells the budget (and so carry fewer than 50).
      expect(s.httpRequests).toBeLessThanOrEqual(Math.ceil(procedures / 50) + 1);
      expect(s.procedureCalls.total / s.httpRequests).toBeGreaterThanOrEqual(45);
      // One fetcher at a time did it all; the figures in Redis agree with the simulator's.
      const snapshot = await redis.hgetall(budgetKeys(prefix, apiKey).stats);
      expect(Number(snapshot['requests'])).toBe(s.httpRequests);
      expect(Number(snapshot['calls'])).toBe(procedures);
    } finally {
      for (const c of children) c.proc.kill('SIGKILL');
    }
  });

  it('killing the fetcher process mid-run: the others take over and every call of theirs is answered exactly', async () => {
    const apiKey = `key-${randomUUID()}`;
    const calls = [0, 1, 2].map((k) => callsFor(userIds.slice(k * 120, k * 120 + 120), 'backfill'));
    // A limited concurrency per process keeps calls coming in waves, so the run spans the kill.
    const children = calls.map((c) =>
      startChild({ simUrl: sim.url, redisUrl, prefix, apiKey, calls: c, concurrency: 40, leaseMs: 1000 }),
    );
    try {
      const ids = await Promise.all(children.map((c) => c.id));
      sim.resetStats();
      for (const c of children) c.proc.stdin.write('go\n');
      const keys = budgetKeys(prefix, apiKey);
      // Wait until some batch is in flight, then kill whoever holds the lease.
      let leader: string | null = null;
      for (let i = 0; i < 200 && (leader === null || children.every((c) => c.batches.length === 0)); i++) {
        await new Promise((r) => setTimeout(r, 50));
        leader = await redis.get(keys.leader);
      }
      const victim = ids.indexOf(leader ?? '');
      expect(victim).toBeGreaterThanOrEqual(0);
      children[victim]!.proc.kill('SIGKILL');
      const survivors = children.map((c, k) => k).filter((k) => k !== victim);
      const fetchedBefore = survivors.map((k) => children[k]!.batches.length);
      const results = await Promise.all(survivors.map((k) => children[k]!.done));
      for (const [j, k] of survivors.entries()) expect(results[j]!.hashes).toEqual(await expected(calls[k]!));
      expect(sim.stats().rateLimited).toBe(0);
      // A survivor became the fetcher after the kill and fetched the rest.
      expect(survivors.some((k, j) => children[k]!.batches.length > fetchedBefore[j]!)).toBe(true);
      expect(await redis.get(keys.leader)).not.toBe(leader);
    } finally {
      for (const c of children) c.proc.kill('SIGKILL');
    }
  });
});

describe('shared budget priorities', () => {
  it("counts the serial feed work its requests carried (status' key time): feed pages priced, filtered pages free", async () => {
    const apiKey = `key-${randomUUID()}`;
    const conn = new Redis(redisUrl, { maxRetriesPerRequest: null });
    const budget = createSharedBudget({ redis: conn, apiKey, prefix, leaseMs: 1500 });
    const client = createClient({ baseUrl: twin.url, apiKey, budget, cache: false });
    try {
      await client.call('transaction.getPaginatedTransactions', { userId: userIds[0], limit: 10 });
      expect((await budget.snapshot()).serialMs).toBe(0);
      await client.call('transaction.getPaginatedTransactions', { limit: 10 });
      const after = await budget.snapshot();
      // One unfiltered feed page: at least the cost model's head page (240 ms), at most a 72 h deep one.
      expect(after.serialMs).toBeGreaterThanOrEqual(240);
      expect(after.serialMs).toBeLessThanOrEqual(240 + 72 * 90);
      expect(after.requests).toBe(2);
    } finally {
      await budget.close();
      await conn.quit();
    }
  });

  it('after a pause, batches take feed tails, then resource tails, then backfills, then rescans', async () => {
    const apiKey = `key-${randomUUID()}`;
    const keys = budgetKeys(prefix, apiKey);
    // A 429 pause is already running on the key (another fetcher met it): every call waits, then the queues drain.
    await redis.set(keys.pause, String(Date.now() + 1500), 'PX', 1500);
    const batches: BatchInfo[] = [];
    const make = (): { client: ReturnType<typeof createClient>; close: () => Promise<void> } => {
      const conn = new Redis(redisUrl, { maxRetriesPerRequest: null });
      const budget = createSharedBudget({
        redis: conn,
        apiKey,
        prefix,
        leaseMs: 1500,
        onBatch: (b) => batches.push(b),
      });
      const client = createClient({ baseUrl: sim.url, apiKey, budget, cache: false });
      return {
        client,
        close: async () => {
          await budget.close();
          await conn.quit();
        },
      };
    };
    const a = make();
    const b = make();
    try {
      const order: CallPriority[] = [];
      const load = (c: typeof a, priority: CallPriority, users: string[]): Promise<unknown>[] =>
        users.map((userId) =>
          runWithPriority(priority, () => c.client.call('user.getUserById', { userId })).then(() =>
            order.push(priority),
          ),
        );
      const all = [
        ...load(a, 'rescan', userIds.slice(0, 60)),
        ...load(a, 'backfill', userIds.slice(60, 100)),
        ...load(b, 'resource-tail', userIds.slice(100, 120)),
        ...load(b, 'feed-tail', userIds.slice(120, 135)),
      ];
      await Promise.all(all);
      expect(order).toHaveLength(135);
      const total = batches.reduce((n, x) => n + x.calls, 0);
      expect(total).toBe(135);
      // Batches were taken in priority order: concatenated, they list every priority's calls before the next one's.
      const taken = batches.flatMap((x) => x.byPriority.flatMap((n, p) => Array<number>(n).fill(p)));
      expect(taken).toEqual([...taken].sort((x, y) => x - y));
      expect(batches[0]?.byPriority).toEqual([15, 20, 15, 0]);
      expect(batches.map((x) => x.calls)).toEqual([50, 50, 35]);
      expect(sim.stats().rateLimited).toBe(0);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
