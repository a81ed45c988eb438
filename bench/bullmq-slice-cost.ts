/**
 * Issue 51, item 1: BullMQ's own share of a slice's fixed cost, apart from everything the pipeline does in a slice. A
 * run job with `--slices` child slice jobs (one flow, the job options the pipeline gives them: `sliceJobOptions`),
 * taken by a Worker of `--concurrency` slots whose processor does nothing, and the run job completed when its children
 * have. Redis' CPU (INFO cpu, the whole server: give it a private, quiet Redis) is read around the enqueue and around
 * the processing, with the commands that spent it (INFO commandstats). `--retention` compares the finished jobs'
 * keep-options: `keep` (the pipeline's: by age and count), `remove` (deleted as they finish), `none` (kept for ever).
 * A first round is run unprinted: on a fresh process and server it ran ~1.4x the rounds after it.
 *
 *   REDIS_URL=redis://127.0.0.1:16399 npx tsx bench/bullmq-slice-cost.ts [--slices 5000] [--concurrency 32]
 *     [--retention keep,remove,none]
 *
 */
import { FlowProducer, Queue, Worker, type JobsOptions } from 'bullmq';
import { Redis } from 'ioredis';
import { QUEUE_NAMES } from '../src/pipeline/contract/queue-names.js';
import { sliceJobOptions } from '../src/pipeline/queue/backfill-flow.js';
import { describeMachine } from './machine.js';

function flag(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? (process.argv[i + 1] ?? fallback) : fallback;
}

const slices = Number(flag('slices', '5000'));
const concurrency = Number(flag('concurrency', '32'));
const retentions = flag('retention', 'keep,remove,none').split(',');
const redisUrl = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';

/** Redis' CPU seconds so far (user + sys, the server's INFO cpu). */
async function redisCpu(redis: Redis): Promise<number> {
  const info = await redis.info('cpu');
  const field = (name: string): number => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? 0);
  return field('used_cpu_user') + field('used_cpu_sys');
}

/** Microseconds spent per command so far (INFO commandstats). */
async function commandUsec(redis: Redis): Promise<Map<string, { calls: number; usec: number }>> {
  const info = await redis.info('commandstats');
  const stats = new Map<string, { calls: number; usec: number }>();
  for (const m of info.matchAll(/^cmdstat_(\S+):calls=(\d+),usec=(\d+)/gm))
    stats.set(m[1] as string, { calls: Number(m[2]), usec: Number(m[3]) });
  return stats;
}

function top(
  before: Map<string, { calls: number; usec: number }>,
  after: Map<string, { calls: number; usec: number }>,
  per: number,
): string {
  return [...after]
    .map(([cmd, s]) => ({
      cmd,
      calls: s.calls - (before.get(cmd)?.calls ?? 0),
      usec: s.usec - (before.get(cmd)?.usec ?? 0),
    }))
    .filter((s) => s.calls > 0)
    .sort((a, b) => b.usec - a.usec)
    .slice(0, 6)
    .map((s) => `${s.cmd} ${(s.calls / per).toFixed(1)}x ${(s.usec / per).toFixed(0)} µs`)
    .join(', ');
}

function keepOptions(retention: string): Pick<JobsOptions, 'removeOnComplete' | 'removeOnFail'> {
  if (retention === 'remove') return { removeOnComplete: true, removeOnFail: true };
  if (retention === 'none') return { removeOnComplete: false, removeOnFail: false };
  return {};
}

async function measure(retention: string, print = true): Promise<void> {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: null });
  await redis.flushdb();
  const prefix = `bench-bull-${retention}`;
  const connection = { url: redisUrl, maxRetriesPerRequest: null };
  const runId = `bench-${retention}`;
  const children = Array.from({ length: slices }, (_, i) => {
    const sliceId = `${runId}.s${String(i)}`;
    return {
      name: 'slice',
      queueName: QUEUE_NAMES.slices,
      data: { runId, sliceId },
      opts: { ...sliceJobOptions(sliceId), ...keepOptions(retention) },
    };
  });
  const flows = new FlowProducer({ connection, prefix });
  const cpu0 = await redisCpu(redis);
  const cmd0 = await commandUsec(redis);
  await flows.add({
    name: 'run',
    queueName: QUEUE_NAMES.runs,
    data: { runId },
    opts: { jobId: runId },
    children,
  });
  const cpu1 = await redisCpu(redis);
  const cmd1 = await commandUsec(redis);
  let done = 0;
  let finished: () => void = () => undefined;
  const allDone = new Promise<void>((resolve) => (finished = resolve));
  const started = Date.now();
  const worker = new Worker(
    QUEUE_NAMES.slices,
    () => {
      done += 1;
      if (done === slices) finished();
      return Promise.resolve({ fetched: 0 });
    },
    { connection, prefix, concurrency },
  );
  const runs = new Worker(QUEUE_NAMES.runs, () => Promise.resolve({ ok: true }), {
    connection,
    prefix,
    concurrency: 1,
  });
  await allDone;
  const runQueue = new Queue(QUEUE_NAMES.runs, { connection, prefix });
  while ((await runQueue.getJobState(runId)) !== 'completed') await new Promise((r) => setTimeout(r, 50));
  const wallS = (Date.now() - started) / 1000;
  await worker.close();
  await runs.close();
  const cpu2 = await redisCpu(redis);
  const cmd2 = await commandUsec(redis);
  const used = (await redis.info('memory')).match(/^used_memory:(\d+)/m)?.[1];
  if (!print) return void (await Promise.all([runQueue.close(), flows.close(), redis.quit()]));
  console.log(
    `${retention.padEnd(6)} slices ${String(slices)}: enqueue ${((1e6 * (cpu1 - cpu0)) / slices).toFixed(0)} µs of Redis a slice; ` +
      `processing ${((1e6 * (cpu2 - cpu1)) / slices).toFixed(0)} µs a slice (${(slices / wallS).toFixed(0)} slices/s); ` +
      `used_memory after ${(Number(used) / 2 ** 20).toFixed(1)} MiB`,
  );
  console.log(`         enqueue: ${top(cmd0, cmd1, slices)}`);
  console.log(`         processing: ${top(cmd1, cmd2, slices)}`);
  await runQueue.close();
  await flows.close();
  await redis.quit();
}

console.log(describeMachine());
console.log(
  `bench/bullmq-slice-cost: ${String(slices)} slices, concurrency ${String(concurrency)}, Redis ${redisUrl}`,
);
// One round unprinted first: the first round on a fresh process and server ran ~1.4x the others (warm-up).
await measure('keep', false);
for (const retention of retentions) await measure(retention);
