/**
 * Bad input, everywhere (issue 14): the real `gamedata` CLI (from source through tsx, as the other CLI tests run it)
 * over a table of bad inputs per command: a wrong resource, a bad date, an unreachable or malformed service
 * address, a bad config file, a bad flag, a refused API key. Each must end in one clear line (`gamedata: ...`),
 * a non-zero exit code, no stack trace, and never the API key or a URL password, within a bounded time (no hang:
 * every command exits after its fatal line).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { startSimulator, type Simulator } from '../../tools/simulator/start-simulator.js';
import { createTestServices, serviceUrls } from '../helpers/services.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const API_KEY = 'sk-e2e-never-print-me-4c1d';
const GOOD_KEY = 'sk-e2e-the-accepted-key-77';
const REDIS_PASSWORD = 'hunter2-redis-secret';
const DEAD = '127.0.0.1:1';

interface Run {
  code: number | null;
  lines: string[];
  ms: number;
}

function runCli(args: readonly string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<Run> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/app/cli/main.ts', ...args], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => (out += b.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`gamedata ${args.join(' ')} still running after ${timeoutMs} ms:\n${out}`));
    }, timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, lines: out.split('\n').filter((l) => l.trim() !== ''), ms: Date.now() - started });
    });
  });
}

interface Case {
  name: string;
  args: string[];
  env?: Record<string, string | undefined>;
  /** The one line. */
  line: RegExp;
  /** Lines allowed before it (the worker says once that it retries). @default none */
  before?: RegExp;
}

const dir = mkdtempSync(join(tmpdir(), 'cli-bad-input-'));
const file = (name: string, text: string): string => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};
const MALFORMED_JSON = file('malformed.json', `{"apiKey": "${API_KEY}", "kafkaBrokers": "127.0.0.1:19092",`);
const UNKNOWN_KEY = file(
  'unknown-key.json',
  JSON.stringify({ apiKey: API_KEY, kafkaBroker: '127.0.0.1:19092' }),
);
const WRONG_TYPE = file('wrong-type.json', JSON.stringify({ apiKey: API_KEY, kafkaBrokers: 5 }));

const CASES: Case[] = [
  // A wrong resource.
  {
    name: 'backfill: unknown resource',
    args: ['backfill', 'donation'],
    line: /ConfigError: .*unknown resource donation/,
  },
  {
    name: 'tail: unknown resource',
    args: ['tail', 'nosuch'],
    line: /ConfigError: .*unknown resource nosuch/,
  },
  {
    name: 'verify: unknown resource',
    args: ['verify', 'nosuch'],
    line: /ConfigError: .*unknown resource nosuch/,
  },
  {
    name: 'connect create: unknown resource',
    args: ['connect', 'create', 'nosuch'],
    line: /ConfigError: .*unknown resource nosuch/,
  },
  {
    name: 'schemas drift: unknown resource',
    args: ['schemas', 'drift', 'nosuch'],
    line: /ConfigError: .*unknown resource nosuch/,
  },
  {
    name: 'simulate truth: unknown resource',
    args: ['simulate', 'truth', 'nosuch'],
    line: /unknown resource "nosuch"/,
  },
  // A bad date.
  {
    name: 'backfill --since',
    args: ['backfill', 'donations', '--since', 'yesterday'],
    line: /--since .*"yesterday"/,
  },
  {
    name: 'backfill --until',
    args: ['backfill', 'donations', '--until', '2026-13-45'],
    line: /--until .*"2026-13-45"/,
  },
  {
    name: 'backfill --partition',
    args: ['backfill', 'transactions', '--full-history', '--partition', 'userId'],
    line: /--partition must be auto, countryId or off, got "userId"/,
  },
  {
    name: 'backfill --plan-for',
    args: ['backfill', 'donations', '--plan-for', 'speed'],
    line: /--plan-for must be auto, rounds or requests, got "speed"/,
  },
  {
    name: 'backfill --cpu-per-record',
    args: ['backfill', 'transactions', '--full-history', '--dry-run', '--cpu-per-record', 'fast'],
    line: /--cpu-per-record must be a positive number of µs, got "fast"/,
  },
  // Issue 48, item 6: a run id that would break the page keys (`|`) or the replay scopes (`/`).
  {
    name: 'backfill --run-id with a |',
    args: ['backfill', 'donations', '--run-id', 'nightly|1'],
    line: /ConfigError: --run-id must be 1-128 letters, digits, '\.', '_' or '-'.*got "nightly\|1"$/,
  },
  {
    name: 'backfill --run-id with a /',
    args: ['backfill', 'donations', '--run-id', 'team/nightly'],
    line: /ConfigError: --run-id must be .*got "team\/nightly"$/,
  },
  {
    name: 'backfill --cpu-per-record without --dry-run',
    args: ['backfill', 'transactions', '--full-history', '--cpu-per-record', '20'],
    line: /--cpu-per-record prices a --dry-run: add --dry-run, or leave it out/,
  },
  {
    name: 'tail --since',
    args: ['tail', 'donations', '--since', '2026-99-01'],
    line: /--since .*"2026-99-01"/,
  },
  {
    name: 'verify --until',
    args: ['verify', 'donations', '--until', 'notadate'],
    line: /--until .*"notadate"/,
  },
  // Bad flags.
  { name: 'tail --every', args: ['tail', 'donations', '--every', 'soon'], line: /--every .*"soon"/ },
  { name: 'status --runs', args: ['status', '--runs', '-3'], line: /--runs .*"-3"/ },
  {
    name: 'worker --give-up-after',
    args: ['worker', '--give-up-after', 'forever'],
    line: /--give-up-after .*"forever"/,
  },
  { name: 'worker --concurrency', args: ['worker', '--concurrency', '0'], line: /--concurrency .*"0"/ },
  {
    name: 'simulate serve --scale',
    args: ['simulate', 'serve', '--scale', 'huge'],
    line: /'huge' is invalid/,
  },
  { name: 'unknown option', args: ['worker', '--nope'], line: /^gamedata: unknown option '--nope'/ },
  { name: 'unknown command', args: ['nosuch'], line: /^gamedata: unknown command 'nosuch'/ },
  // An unreachable service.
  {
    name: 'status: Redis unreachable',
    args: ['status'],
    env: { REDIS_URL: `redis://:${REDIS_PASSWORD}@${DEAD}` },
    line: /ServiceError: Redis unreachable at 127\.0\.0\.1:1 /,
  },
  {
    name: 'backfill: Redis unreachable',
    args: ['backfill', 'donations'],
    env: { REDIS_URL: `redis://${DEAD}` },
    line: /ServiceError: Redis unreachable at 127\.0\.0\.1:1 /,
  },
  {
    name: 'tail: Redis unreachable',
    args: ['tail', 'donations'],
    env: { REDIS_URL: `redis://${DEAD}` },
    line: /ServiceError: Redis unreachable at 127\.0\.0\.1:1 /,
  },
  {
    name: 'dedup migrate: Redis unreachable',
    args: ['dedup', 'migrate'],
    env: { REDIS_URL: `redis://${DEAD}` },
    line: /ServiceError: Redis unreachable at 127\.0\.0\.1:1 /,
  },
  {
    name: 'topics create: Kafka unreachable',
    args: ['topics', 'create'],
    env: { KAFKA_BROKERS: DEAD },
    line: /ServiceError: Kafka unreachable at 127\.0\.0\.1:1 /,
  },
  {
    name: 'schemas check: registry unreachable',
    args: ['schemas', 'check'],
    env: { SCHEMA_REGISTRY_URL: `http://${DEAD}/apis/ccompat/v7` },
    line: /ServiceError: schema registry unreachable at /,
  },
  {
    name: 'verify: Kafka unreachable',
    args: ['verify', 'donations'],
    env: { KAFKA_BROKERS: DEAD, GAMEDATA_API_KEY: GOOD_KEY },
    line: /ServiceError: Kafka unreachable at 127\.0\.0\.1:1 /,
  },
  {
    name: 'backfill: upstream unreachable',
    args: ['backfill', 'donations'],
    env: { GAMEDATA_API_URL: `http://${DEAD}/trpc` },
    line: /NetworkError: .*127\.0\.0\.1:1/,
  },
  {
    name: 'connect list: Connect unreachable',
    args: ['connect', 'list'],
    env: { CONNECT_URL: `http://${DEAD}` },
    line: /ServiceError: Kafka Connect at 127\.0\.0\.1:1 did not answer/,
  },
  {
    name: 'worker: Kafka unreachable, gives up',
    args: ['worker', '--give-up-after', '3s'],
    env: { KAFKA_BROKERS: DEAD },
    before: /^worker: Kafka unreachable at 127\.0\.0\.1:1 .*retrying$/,
    line: /ServiceError: Kafka unreachable at 127\.0\.0\.1:1 for 3s .*giving up$/,
  },
  // A malformed service address.
  {
    name: 'status: malformed REDIS_URL',
    args: ['status'],
    env: { REDIS_URL: 'notaurl' },
    line: /REDIS_URL \(env\): must be a redis/,
  },
  {
    name: 'topics create: malformed KAFKA_BROKERS',
    args: ['topics', 'create'],
    env: { KAFKA_BROKERS: 'notahost' },
    line: /KAFKA_BROKERS \(env\): must be a comma-separated list of host:port/,
  },
  {
    name: 'schemas check: malformed SCHEMA_REGISTRY_URL',
    args: ['schemas', 'check'],
    env: { SCHEMA_REGISTRY_URL: 'ftp://x' },
    line: /SCHEMA_REGISTRY_URL \(env\): must be an http\(s\) URL/,
  },
  {
    name: 'backfill: malformed GAMEDATA_API_URL',
    args: ['backfill', 'donations'],
    env: { GAMEDATA_API_URL: 'not a url' },
    line: /GAMEDATA_API_URL \(env\): must be an http\(s\) URL/,
  },
  {
    name: 'connect list: malformed CONNECT_URL',
    args: ['connect', 'list'],
    env: { CONNECT_URL: 'nope' },
    line: /CONNECT_URL \(env\): must be an http\(s\) URL/,
  },
  {
    name: 'worker: bad GAMEDATA_METRICS_PORT',
    args: ['worker'],
    env: { GAMEDATA_METRICS_PORT: '99999' },
    line: /GAMEDATA_METRICS_PORT \(env\): must be 0\.\.65535 or off/,
  },
  {
    name: 'worker: bad GAMEDATA_SCHEMA_CONTRACT',
    args: ['worker'],
    env: { GAMEDATA_SCHEMA_CONTRACT: 'donations=evolves' },
    line: /GAMEDATA_SCHEMA_CONTRACT \(env\): unknown contract "evolves" for donations/,
  },
  // A bad config file (each holds the API key: never echoed).
  {
    name: 'status: missing config file',
    args: ['status'],
    env: { GAMEDATA_CONFIG: join(dir, 'missing.json') },
    line: /GAMEDATA_CONFIG: cannot read config file .*missing\.json: ENOENT/,
  },
  {
    name: 'backfill: malformed config file',
    args: ['backfill', 'donations'],
    env: { GAMEDATA_CONFIG: MALFORMED_JSON },
    line: /GAMEDATA_CONFIG: config file .*malformed\.json is not valid JSON/,
  },
  {
    name: 'worker: unknown key in config file',
    args: ['worker'],
    env: { GAMEDATA_CONFIG: UNKNOWN_KEY },
    line: /GAMEDATA_CONFIG: unknown setting "kafkaBroker" in /,
  },
  {
    name: 'topics create: wrong type in config file',
    args: ['topics', 'create'],
    env: { GAMEDATA_CONFIG: WRONG_TYPE, KAFKA_BROKERS: undefined },
    line: /KAFKA_BROKERS \(file .*wrong-type\.json\): /,
  },
  // The upstream refuses the key: its failure never carries the key.
  {
    name: 'backfill: upstream refuses the API key (401)',
    args: ['backfill', 'donations'],
    line: /UpstreamError: .*401/,
  },
];

describe('every command: bad input is one clear line, a non-zero exit, no stack trace, no secret', () => {
  let sim: Simulator;
  let env: NodeJS.ProcessEnv;
  // Its cleanup deletes every key, topic and subject under the prefix (the refused backfill leaves budget keys).
  const services = createTestServices('bad-input');
  beforeAll(async () => {
    const urls = serviceUrls();
    sim = await startSimulator({ port: 0, apiKeys: [GOOD_KEY] });
    const prefix = services.prefix;
    env = {
      PATH: process.env['PATH'],
      HOME: process.env['HOME'],
      NODE_OPTIONS: process.env['NODE_OPTIONS'],
      GAMEDATA_API_URL: sim.url,
      GAMEDATA_API_KEY: API_KEY,
      KAFKA_BROKERS: urls.kafkaBrokers.join(','),
      SCHEMA_REGISTRY_URL: urls.schemaRegistryUrl,
      REDIS_URL: urls.redisUrl,
      GAMEDATA_TOPIC_PREFIX: prefix,
      GAMEDATA_QUEUE_PREFIX: prefix,
      GAMEDATA_REDIS_PREFIX: prefix,
      GAMEDATA_METRICS_PORT: '0',
    };
  });
  afterAll(async () => {
    await sim?.close();
    await services.cleanup();
  });

  describe.concurrent('cases', () => {
    it.for(CASES)('$name', async (c, { expect }) => {
      const merged: NodeJS.ProcessEnv = { ...env };
      for (const [k, v] of Object.entries(c.env ?? {})) {
        if (v === undefined) delete merged[k];
        else merged[k] = v;
      }
      const run = await runCli(c.args, merged, 60_000);
      const text = run.lines.join('\n');
      expect(run.code, text).toBe(1);
      const fatal = run.lines.filter((l) => l.startsWith('gamedata: '));
      expect(fatal, text).toHaveLength(1);
      expect(fatal[0]).toMatch(c.line);
      // Nothing else, but for the line the case allows before it.
      const others = run.lines.filter((l) => !l.startsWith('gamedata: '));
      for (const l of others) expect(l, text).toMatch(c.before ?? /^$/);
      expect(run.lines.at(-1)).toBe(fatal[0]);
      expect(
        run.lines.some((l) => /^\s+at\s/.test(l)),
        text,
      ).toBe(false);
      for (const secret of [API_KEY, GOOD_KEY, REDIS_PASSWORD]) expect(text).not.toContain(secret);
    });
  });
});
