/**
 * What the benches that drive the CLI share (bench/full-history.ts, bench/tail-outage.ts): their `--name value` flags,
 * `gamedata <argv>` as a child process, and a record-by-record verify of a topic against the simulator's truth.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { verifyResource } from '../src/app/verify/index.js';
import { createRecordDecoder } from '../src/output/encoding/record-decoder.js';
import { createRegistryClient } from '../src/output/encoding/registry-client.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The value of `--name` on the command line, else `def`. */
export function flag(name: string, def: string): string {
  const args = process.argv.slice(2);
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? (args[i + 1] ?? def) : def;
}

/**
 * The environment of a bench's own pipeline: the simulator at `apiUrl` with `apiKey`, topics, queues and Redis keys
 * under `tag` (fresh for each run), warnings only; the services from this process's environment.
 */
export function benchEnv(apiUrl: string, apiKey: string, tag: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    GAMEDATA_API_URL: apiUrl,
    GAMEDATA_API_KEY: apiKey,
    GAMEDATA_TOPIC_PREFIX: tag,
    GAMEDATA_QUEUE_PREFIX: tag,
    GAMEDATA_REDIS_PREFIX: tag,
    GAMEDATA_LOG_LEVEL: 'warn',
  };
}

/**
 * Removes a run's Redis keys (its queues, dedup sets, counters: everything under `tag`, see {@link benchEnv}), so the
 * next run does not measure this one's leftovers: a medium run leaves ~100 MB (1 M seen ids), and a dev Redis grown
 * to 600 MB by earlier runs spent its AOF rewrites during the next (two medium runs 6-12 % slower than on a flushed
 * Redis, 2026-11-28). @returns the keys removed
 */
export async function removeRunKeys(tag: string): Promise<number> {
  const redis = new Redis(process.env['REDIS_URL'] ?? 'redis://127.0.0.1:16379', { lazyConnect: true });
  try {
    await redis.connect();
    let removed = 0;
    for await (const keys of redis.scanStream({ match: `${tag}*`, count: 1000 }) as AsyncIterable<string[]>) {
      if (keys.length > 0) removed += await redis.unlink(...keys);
    }
    return removed;
  } finally {
    redis.disconnect();
  }
}

/** `gamedata <argv>` (the source CLI through tsx), its output (stdout and stderr) collected. `BENCH_CPU_PROF`: see below. */
export function gamedata(
  argv: string[],
  env: NodeJS.ProcessEnv,
): { child: ChildProcess; done: Promise<{ code: number | null; out: string }> } {
  // BENCH_CPU_PROF=<dir>: every CLI process writes a V8 CPU profile there (where a worker's CPU goes).
  const prof = process.env['BENCH_CPU_PROF'];
  const profile = prof === undefined || prof === '' ? [] : ['--cpu-prof', '--cpu-prof-dir', prof];
  const child = spawn(
    process.execPath,
    [...profile, '--import', 'tsx', join(ROOT, 'src/app/cli/main.ts'), ...argv],
    {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const done = new Promise<{ code: number | null; out: string }>((resolve) =>
    child.on('exit', (code) => resolve({ code, out })),
  );
  return { child, done };
}

/** `gamedata <argv>`'s output; throws with it when the command exits non-zero. */
export async function mustGamedata(argv: string[], env: NodeJS.ProcessEnv): Promise<string> {
  const { code, out } = await gamedata(argv, env).done;
  if (code !== 0) throw new Error(`gamedata ${argv.join(' ')} exited ${code}:\n${out}`);
  return out;
}

/** Transactions on the topics under `topicPrefix` against `truth`, record by record, as one line. */
export async function verifyTransactions(
  topicPrefix: string,
  truth: Iterable<Record<string, unknown>>,
): Promise<{ line: string; exact: boolean }> {
  const r = await verifyResource({
    resource: 'transactions',
    brokers: (process.env['KAFKA_BROKERS'] ?? '').split(','),
    topicPrefix,
    decoder: createRecordDecoder({
      registry: createRegistryClient({ url: process.env['SCHEMA_REGISTRY_URL'] ?? '' }),
      topicPrefix,
    }),
    truth,
  });
  return {
    line: `${r.matched}/${r.expected} matched, missing ${r.missing}, duplicates ${r.duplicates}, unexpected ${r.unexpected}`,
    exact: r.missing === 0 && r.duplicates === 0 && r.unexpected === 0,
  };
}
