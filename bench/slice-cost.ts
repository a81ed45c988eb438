/**
 * Issue 51, item 1: the fixed cost of a slice, apart from the cost of its records. The same backfill (one resource's
 * full history, the same records every time) through the whole pipeline as a user runs it (`gamedata worker`, then
 * `gamedata backfill <resource> --full-history --until <now> --plan-for requests --target-rows N --wait`), planned at several slice sizes
 * (`--targets`, rows per planned slice), in each delivery mode, each on a fresh simulator and fresh topics, queues and
 * Redis keys. The records and pages do not change with the slice size, only the slices do, so the slope of the
 * worker's CPU (from /proc) and of Redis' CPU (INFO cpu, the whole server: run it on a quiet Redis) against the slices
 * completed is what one slice costs, and the intercept over the records is what a record costs. The plan is for
 * requests (`--plan-for requests`: a density estimate and slices of `--target-rows`; for rounds, the default where the
 * key does not bind, every slice is one page whatever the target). Latency is off and the key's limit 2 000 requests a
 * minute, which never holds a call back: this measures CPU, not the key. `--latency realistic` (the simulator's cost
 * model) makes each slice live as long as its pages take: what a slice costs while it waits (renewals, heartbeats,
 * polls) shows as the difference from latency off.
 *
 *   npx tsx bench/slice-cost.ts [--scale medium] [--seed 1] [--resource donations] [--targets 5000,1000,200,50]
 *     [--delivery exactly-once,at-least-once] [--concurrency 32] [--latency off|realistic]
 *
 * Services: KAFKA_BROKERS / SCHEMA_REGISTRY_URL / REDIS_URL (`eval "$(bash scripts/stack.sh up | grep ^export)"`).
 */
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { startSimulator } from '../tools/simulator/index.js';
import { parseLatencySpec } from '../tools/simulator/options.js';
import { QUEUE_NAMES } from '../src/pipeline/contract/queue-names.js';
import { isResourceName } from '../src/foundation/models/resources.js';
import { cpuSeconds, describeMachine } from './machine.js';
import { benchEnv, flag, gamedata, mustGamedata, removeRunKeys } from './gamedata-cli.js';

const scale = flag('scale', 'medium') as 'small' | 'medium';
const seed = Number(flag('seed', '1'));
const resource = flag('resource', 'donations');
if (!isResourceName(resource)) throw new Error(`--resource must be a resource name, got ${resource}`);
const targets = flag('targets', '5000,1000,200,50').split(',').map(Number);
const deliveries = flag('delivery', 'exactly-once,at-least-once').split(',');
const concurrency = flag('concurrency', '32');
const latency = parseLatencySpec(flag('latency', 'off'));
const KEY = 'bench-key';

interface Sample {
  delivery: string;
  target: number;
  slices: number;
  published: number;
  fetched: number;
  wallS: number;
  workerCpuS: number;
  redisCpuS: number;
}

/** Redis' CPU seconds so far (user + sys, every thread of the server), from INFO cpu. */
async function redisCpu(redis: Redis): Promise<number> {
  const info = await redis.info('cpu');
  const field = (name: string): number => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? 0);
  return field('used_cpu_user') + field('used_cpu_sys');
}

async function runOnce(delivery: string, target: number, index: number, redis: Redis): Promise<Sample> {
  const sim = await startSimulator({
    scale,
    seed,
    latency,
    apiKeys: [KEY],
    rateLimit: { enabled: true, keyed: 2_000, anonymous: 100, windowMs: 60_000 },
  });
  const tag = `sc${Date.now().toString(36)}${index}`;
  const env = { ...benchEnv(sim.url, KEY, tag), GAMEDATA_DELIVERY: delivery };
  await mustGamedata(['schemas', 'register'], env);
  await mustGamedata(['topics', 'create'], env);
  const worker = gamedata(['worker', '--concurrency', concurrency], env);
  const queue = new Queue(QUEUE_NAMES.slices, {
    connection: { url: process.env['REDIS_URL'] ?? '' },
    prefix: tag,
  });
  try {
    const until = new Date(sim.now()).toISOString();
    const pid = worker.child.pid ?? 0;
    // The worker is up (its CPU from here is the run's) once its first poll of the queue has happened.
    await new Promise((r) => setTimeout(r, 3_000));
    const cpu0 = cpuSeconds(pid);
    const redis0 = await redisCpu(redis);
    const started = performance.now();
    const out = await mustGamedata(
      [
        'backfill',
        resource,
        '--full-history',
        '--until',
        until,
        '--plan-for',
        'requests',
        '--target-rows',
        String(target),
        '--wait',
      ],
      env,
    );
    const wallS = (performance.now() - started) / 1000;
    const workerCpuS = cpuSeconds(pid) - cpu0;
    const redisCpuS = (await redisCpu(redis)) - redis0;
    const counts = await queue.getJobCounts('completed');
    const m = /fetched (\d+), published (\d+)/.exec(out);
    return {
      delivery,
      target,
      slices: counts['completed'] ?? 0,
      fetched: Number(m?.[1] ?? 0),
      published: Number(m?.[2] ?? 0),
      wallS,
      workerCpuS,
      redisCpuS,
    };
  } finally {
    worker.child.kill('SIGTERM');
    await worker.done;
    await queue.close();
    await sim.close();
    await removeRunKeys(tag);
  }
}

/** Least squares of y = a + b x: the slope b and the intercept a. */
function fit(points: { x: number; y: number }[]): { a: number; b: number } {
  const n = points.length;
  const mx = points.reduce((s, p) => s + p.x, 0) / n;
  const my = points.reduce((s, p) => s + p.y, 0) / n;
  const sxx = points.reduce((s, p) => s + (p.x - mx) ** 2, 0);
  const sxy = points.reduce((s, p) => s + (p.x - mx) * (p.y - my), 0);
  const b = sxx === 0 ? 0 : sxy / sxx;
  return { a: my - b * mx, b };
}

async function main(): Promise<void> {
  console.log(`machine: ${describeMachine()}; date ${new Date().toISOString()}`);
  console.log(
    `scale ${scale}, seed ${seed}, ${resource} full history, targets ${targets.join(', ')} rows a slice, ${deliveries.join(' and ')}, planned for requests, latency ${JSON.stringify(latency)}, key limit 2 000 requests a minute`,
  );
  const redis = new Redis(process.env['REDIS_URL'] ?? 'redis://127.0.0.1:16379');
  const samples: Sample[] = [];
  let index = 0;
  // Alternating the modes per size keeps a drift of the box's load from reading as a difference between modes.
  for (const target of targets)
    for (const delivery of deliveries) {
      const s = await runOnce(delivery, target, index++, redis);
      samples.push(s);
      console.log(
        `${delivery} target ${target}: ${s.slices} slices, fetched ${s.fetched}, published ${s.published}, ${s.wallS.toFixed(1)} s, worker CPU ${s.workerCpuS.toFixed(2)} s, Redis CPU ${s.redisCpuS.toFixed(2)} s (load ${(await import('node:os')).loadavg()[0]?.toFixed(1)})`,
      );
    }
  redis.disconnect();
  console.log(
    '\n| delivery | target rows | slices | published | wall s | worker CPU s | Redis CPU s | worker µs / published | Redis µs / published |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const s of samples)
    console.log(
      `| ${s.delivery} | ${s.target} | ${s.slices} | ${s.published} | ${s.wallS.toFixed(1)} | ${s.workerCpuS.toFixed(2)} | ${s.redisCpuS.toFixed(2)} | ${((s.workerCpuS / s.published) * 1e6).toFixed(1)} | ${((s.redisCpuS / s.published) * 1e6).toFixed(1)} |`,
    );
  console.log(
    '\n| delivery | worker ms per slice | worker µs per record | Redis ms per slice | Redis µs per record |',
  );
  console.log('|---|---:|---:|---:|---:|');
  for (const delivery of deliveries) {
    const mine = samples.filter((s) => s.delivery === delivery);
    const worker = fit(mine.map((s) => ({ x: s.slices, y: s.workerCpuS })));
    const redisFit = fit(mine.map((s) => ({ x: s.slices, y: s.redisCpuS })));
    const published = mine.reduce((t, s) => t + s.published, 0) / mine.length;
    console.log(
      `| ${delivery} | ${(worker.b * 1e3).toFixed(2)} | ${((worker.a / published) * 1e6).toFixed(1)} | ${(redisFit.b * 1e3).toFixed(2)} | ${((redisFit.a / published) * 1e6).toFixed(1)} |`,
    );
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
