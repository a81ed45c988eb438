/**
 * Secrets in what Redis holds (issue 34, item 2). The stores mask before they write (a tail's `lastError`); and
 * `status` / `status --json` mask again what is stored already (written by an older worker, or by one whose
 * settings differ): no secret, raw, JSON-escaped or in base64, reaches the output. Real Redis, a unique prefix.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_SECRETS, secretsOf } from '../../../../src/foundation/config/secret-values.js';
import { createRunCounters } from '../../../../src/pipeline/queue/run-counters.js';
import { createTailStateStore } from '../../../../src/pipeline/schedules/tail-state.js';

const ROOT = fileURLToPath(new URL('../../../..', import.meta.url));
const redisUrl = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:16379';
// a quote and a backslash (JSON escapes both), and a short secret
const PASSWORD = 'sasl"pw\\x-41f';
const API_KEY = 'k9!';
const FORMS = [
  PASSWORD,
  JSON.stringify(PASSWORD).slice(1, -1),
  Buffer.from(PASSWORD).toString('base64'),
  Buffer.from(`gamedata:${PASSWORD}`).toString('base64'),
];

function cli(args: readonly string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/app/cli/main.ts', ...args], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => (out += b.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out }));
  });
}

const prefix = `mask-${randomUUID().slice(0, 8)}`;
let redis: Redis;

beforeAll(() => {
  redis = new Redis(redisUrl, { maxRetriesPerRequest: 2 });
});
afterAll(async () => {
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
});

describe('secrets in Redis and status', () => {
  it('the tail store masks lastError before it writes', async () => {
    const secrets = secretsOf({
      kafkaSaslPassword: PASSWORD,
      schemaRegistryBasicAuthUserInfo: `gamedata:${PASSWORD}`,
    });
    const store = createTailStateStore(redis, `${prefix}-store`, secrets);
    const run = { runId: 'r1', kind: 'tail' as const, from: undefined, to: 2, startedAt: 1 };
    await store.setActive('users', run);
    await store.finishActive(
      'users',
      run,
      'failed',
      3,
      `registry https://gamedata:x@h:1 said ${JSON.stringify(PASSWORD)} ${FORMS[3]}`,
    );
    const stored = JSON.stringify(await redis.hgetall(`${prefix}-store:tail:users`));
    for (const form of FORMS) expect(stored, form).not.toContain(form);
    expect(stored).toContain('[REDACTED]');
    await redis.del(`${prefix}-store:tail:users`);
  });

  it('status and status --json mask what is stored already (an older worker wrote it unmasked)', async () => {
    const reason = `run failed: SASL ${PASSWORD} / ${JSON.stringify({ pw: PASSWORD })} / Basic ${FORMS[3]} / https://gamedata:${API_KEY}@reg:1`;
    const counters = createRunCounters(redis, prefix);
    await counters.setState('run-1', 'failed', { reason });
    const unmasked = createTailStateStore(redis, prefix, NO_SECRETS);
    const run = { runId: 'run-1', kind: 'tail' as const, from: undefined, to: 2, startedAt: 1 };
    await unmasked.setActive('users', run);
    await unmasked.finishActive('users', run, 'failed', 3, reason);
    expect(await redis.hget(`${prefix}:tail:users`, 'lastError')).toContain(PASSWORD); // stored raw

    const env: NodeJS.ProcessEnv = {
      ...process.env,
      REDIS_URL: redisUrl,
      GAMEDATA_REDIS_PREFIX: prefix,
      GAMEDATA_QUEUE_PREFIX: `${prefix}-q`,
      GAMEDATA_KAFKA_SECURITY_PROTOCOL: 'SASL_SSL',
      GAMEDATA_KAFKA_SASL_MECHANISM: 'SCRAM-SHA-512',
      GAMEDATA_KAFKA_SASL_USERNAME: 'gamedata',
      GAMEDATA_KAFKA_SASL_PASSWORD: PASSWORD,
      GAMEDATA_SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO: `gamedata:${PASSWORD}`,
      GAMEDATA_API_KEY: API_KEY,
    };
    for (const args of [
      ['status', '--no-scrape'],
      ['status', '--no-scrape', '--json'],
    ]) {
      const { code, out } = await cli(args, env);
      expect(code, out).toBe(0);
      expect(out).toContain('run-1');
      expect(out).toContain('[REDACTED]');
      for (const form of FORMS) expect(out, `${args.join(' ')}: ${form}`).not.toContain(form);
      expect(out).not.toContain(`:${API_KEY}@`);
    }
  });
});
